// A ModelDesc and a quantization recipe -> the ModelShape plan_memory takes:
// the tensors the GGUF converter writes for that architecture, each typed
// as llama-quantize would type it, and estimates of what loading holds (the
// tokenizer tables, the metadata) where a file would have been measured.
#pragma once
#include <string>
#include <vector>

#include "runtime/memory_plan.h"
#include "tools/model_desc.h"
#include "tools/quant_mix.h"

namespace edgellm {

struct PlannedTensor {
  std::string name;
  GgmlType type;
  int64_t cols = 0, rows = 1;  // ne[0], ne[1] (rows 1 for a vector)
  uint64_t bytes = 0;
};

// The tensors in file order (token_embd, output_norm, output, rope_freqs,
// then each block's), as convert_hf_to_gguf.py names and shapes them.
std::vector<PlannedTensor> plan_tensors(const ModelDesc& d, const QuantRecipe& q);

// The plan's input. Throws Error for a shape the loader would refuse.
ModelShape shape_from_desc(const ModelDesc& d, const QuantRecipe& q);

// Bytes decode reads per token from the weights: all of them but the token
// embedding, of which one row is read (unless it is also the output head).
uint64_t weight_bytes_read_per_token(const ModelDesc& d, const QuantRecipe& q);
// Weight multiply-adds per token through the matrices (the output head
// included, the embedding lookup not): FLOPs = 2x this.
uint64_t matmul_params(const ModelDesc& d);

}  // namespace edgellm
