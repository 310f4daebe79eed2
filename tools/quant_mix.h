// Which ggml type each tensor gets in a file made by llama-quantize with a
// given recipe (--quant Q4_K_M etc.), so a plan can count a file's bytes
// before it exists. The rules are llama.cpp's llama_tensor_get_type
// (src/llama-quant.cpp, the anchor build de3ff81) for dense llama / qwen2 /
// qwen3 models without an imatrix: the output head (and a tied embedding)
// gets q6_K, attn_v and ffn_down more bits in some layers, and rows whose
// length the chosen block does not divide fall back to a 32-element type.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tensor/types.h"

namespace edgellm {

struct QuantRecipe {
  std::string name;        // "Q4_K_M", as llama-quantize spells it
  uint32_t ftype = 0;      // general.file_type (enum llama_ftype)
  GgmlType base = GgmlType::F16;  // the type most matrices get
};

// "q4_k_m", "Q4_K_M", "f16", ...; throws Error listing the recipes.
QuantRecipe parse_quant(const std::string& name);
std::string quant_names();
// The recipe a file's general.file_type names; nullopt for one that is not a
// llama-quantize recipe we model (IQ types other than IQ4_NL / IQ4_XS, "all
// F32" guesses, ...).
std::optional<QuantRecipe> quant_of_file_type(uint32_t ftype);  // for messages and --help
// The recipes from most to fewest bytes per weight, for "a smaller quant".
const char* const* quant_ladder();

// What a tensor is, for the rules.
enum class TensorRole { TokenEmbd, Output, AttnQ, AttnK, AttnV, AttnOut, FfnGate, FfnUp, FfnDown, Vector };

struct TensorSite {
  TensorRole role;
  int64_t cols = 0;      // ne[0]: the row length the block must divide
  int64_t layer = -1;    // for the per-layer rules
  int64_t n_layer = 0;
  int64_t n_gqa = 1;     // n_head / n_head_kv
  bool tied = false;     // no output.weight: the embedding is the head
};

GgmlType quant_tensor_type(const QuantRecipe& r, const TensorSite& t);

}  // namespace edgellm
