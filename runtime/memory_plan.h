// The memory plan: every byte a running model will hold, computed before
// anything is allocated, as a pure function of (model, settings). The KV
// caches and the executor allocate exactly these numbers (their constructors
// take the plan, not the settings), and `edgellm plan` prints them, so the
// planner and the allocator can never disagree.
//
// Two kinds of memory matter on a device:
//   footprint  anonymous memory (heap, copies): what Android's low-memory
//              killer and iOS jetsam count; it cannot be reclaimed.
//   file-backed clean pages of the mmap'd weights: in RSS while touched, but
//              the kernel may drop and re-read them under pressure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "tensor/types.h"

namespace edgellm {

constexpr int64_t kFfnChunk = 128;

struct PlanSettings {
  int64_t n_ctx = 0;      // 0: the model's training context, capped at 4096
  int64_t n_batch = 512;  // tokens per forward pass during prefill (capped at n_ctx)
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;
  int n_seq = 1;          // KV caches (sessions, server slots) sharing one executor
  int n_threads = 1;      // pool size: each thread has its own GEMM packing area
  bool logits_all = false;  // logits for every token of a batch (eval, perplexity)
  // Sliding-window layers keep the whole context too (llama.cpp's --swa-full):
  // more memory, but any prefix of a conversation stays reusable.
  bool swa_full = false;
  // Where the weights live. Auto is resolved with resolve_residency().
  gguf::Residency load_mode = gguf::Residency::Mmap;
};

// Offsets of the executor's activation buffers in its one arena. Shapes with
// B = n_batch; every offset is 64-byte aligned.
struct ArenaLayout {
  size_t x = 0;        // [B][n_embd]        residual stream
  size_t xn = 0;       // [B][n_embd]        normed input / projection output
  size_t q = 0;        // [B][q_dim]         shares its region with up
  size_t k = 0;        // [B][k_dim]
  size_t v = 0;        // [B][v_dim]
  size_t att = 0;      // [B][n_head * head_dim_v]   shares its region with gate
  size_t gate = 0;     // [F][n_ff]        F = ffn_chunk: the FFN runs over the batch F tokens at a time
  size_t up = 0;       // [F][n_ff]
  size_t ffn_out = 0;  // [F][n_embd]      one chunk's down projection
  size_t logits = 0;   // [B or 1][n_vocab]
  size_t rope = 0;     // [B][n_rot/2][2]   cos, sin per position and pair
  size_t inv_freq = 0; // [n_rot/2] double
  size_t per_layer = 0;       // [B][n_layer * P]  Gemma 4's per-layer inputs (0: none)
  size_t per_layer_gate = 0;  // [B][P]
  size_t act = 0;      // matmul scratch: quantized activations + per-thread packing areas
  size_t total = 0;
};

struct PlanLine {
  std::string what;
  uint64_t bytes = 0;
  bool anonymous = true;  // counts toward the footprint
};

struct MemoryPlan {
  // The settings, resolved (n_ctx from the model, batch capped, load mode).
  PlanSettings settings;
  int64_t n_ctx = 0, n_batch = 0;

  // Weights: tensor data in the file; resident = the anonymous copy (0 when
  // the weights stay file-backed).
  uint64_t weights_bytes = 0;
  uint64_t weights_resident_bytes = 0;

  // KV cache: bytes of one position's keys / values in one layer, and totals.
  // A sliding-window layer (gemma2/3: attention over the last n_swa
  // positions) holds only swa_cells rows, a ring of the window plus a batch
  // (a prefill batch writes all its rows before its first token attends):
  // on gemma3-1b at -c 8192, 22 of 26 layers hold 1024 rows, not 8192.
  size_t k_row_bytes = 0, v_row_bytes = 0;
  int64_t n_layer = 0;
  int64_t n_swa = 0;         // the window (0: no sliding layers)
  int64_t n_swa_layers = 0;  // layers with a window
  int64_t n_swa_owners = 0;  // of these, the ones holding rows of their own
  int64_t swa_cells = 0;     // rows per sliding layer (n_ctx with swa_full or when the ring would not be smaller)
  int64_t n_shared_layers = 0;  // layers reading another layer's keys and values (Gemma 4): no rows of their own
  // K + V bytes of one position summed over the layers holding rows
  // (global ones, sliding ones), and over the layers reading them.
  uint64_t row_bytes_global = 0, row_bytes_swa = 0;
  uint64_t row_bytes_read_global = 0, row_bytes_read_swa = 0;
  uint64_t kv_bytes_per_seq = 0;
  uint64_t kv_bytes = 0;  // all n_seq caches
  // K and V bytes one decode step reads with `depth` positions cached
  // (sliding layers: at most the window).
  uint64_t kv_bytes_read_at(int64_t depth) const;
  // Whether sliding layers hold a ring (fewer rows than the context).
  bool swa_ring() const { return swa_cells > 0 && swa_cells < n_ctx; }
  // K and V bytes one more position of context adds: every layer's row, but
  // a ring's, whose size is fixed.
  uint64_t kv_bytes_per_position() const { return row_bytes_global + (swa_ring() ? 0 : row_bytes_swa); }

  // Tokens per FFN pass. The gate/up activations ([F][n_ff] twice) were the
  // largest buffers (19 MiB of 27 at batch 512 on qwen2.5-0.5b); in chunks of
  // 128 they take a quarter, for ~2 % more prefill time (each chunk re-reads
  // the layer's FFN weights, 7 MiB on that model, from cache or DRAM: ~0.5 ms
  // against ~20 ms of compute per layer for 512 tokens).
  int64_t ffn_chunk = 0;
  ArenaLayout arena;        // the executor's activation arena
  uint64_t host_bytes = 0;  // model's f32 copies (norms, biases), tokenizer and sampler tables
  uint64_t buffers_bytes = 0;   // arena + host tables
  uint64_t overhead_bytes = 0;  // fixed: C++ runtime, thread stacks, allocator slack
  uint64_t code_bytes = 0;      // file-backed program text in RSS

  // Anonymous memory while loading, before any KV cache or buffer exists:
  // the metadata's arrays and the tokenizer built from them are alive
  // together (66 MiB for a 150k vocabulary, 23 of which stay).
  uint64_t load_peak_bytes = 0;
  // Anonymous memory the process will hold at its peak: the larger of the
  // running state (resident weights + KV + buffers + overhead) and loading.
  uint64_t footprint_bytes = 0;
  // Peak RSS predicted: footprint + file-backed weights (all touched by a
  // forward pass) + program text.
  uint64_t total_bytes = 0;

  std::vector<PlanLine> lines;  // itemized, for the table
};

// What a plan needs to know about a model: its shape, the matrices' types
// (the matmul scratch depends on them) and what loading it holds. Made from
// a loaded Model (model_shape) or, before any download, from a description
// (tools/plan_shape.h): both plans then run through the same arithmetic, so
// the planner and the allocator cannot disagree.
struct ModelShape {
  struct Layer {
    WeightView wq, wk, wv, wo, w_gate, w_up, w_down;  // data unused: types and shapes only
    WeightView inp_gate, proj;                         // Gemma 4's per-layer input (rows 0: none)
  };
  HParams hp;
  std::vector<Layer> layers;
  WeightView output;
  WeightView per_layer_model_proj;  // Gemma 4 (rows 0: none)
  uint64_t weight_bytes = 0;     // all tensors' data
  uint64_t header_bytes = 0;     // the file's data offset (metadata, tensor table)
  uint64_t realigned_bytes = 0;  // tensors copied to aligned memory (gguf File::realigned_bytes)
  uint64_t alignment = 32;       // general.alignment, for the plan's line
  uint64_t host_bytes = 0;       // Model::host_bytes()
  uint64_t load_peak_bytes = 0;  // Model::load_peak_bytes()
};
ModelShape model_shape(const Model& model);

// Picks the residency Auto stands for: a huge-page copy when the tensor data
// is at least 256 MiB (TLB misses then cost ~15 % of decode speed), else
// the file mapping. With a memory limit, the copy is chosen only when the
// plan with it fits the limit with room to spare (footprint first).
gguf::Residency resolve_auto_residency(uint64_t tensor_bytes);

// Bytes of the executor's matmul scratch for this model at batch B and this
// many threads.
size_t plan_matmul_scratch(const ModelShape& shape, int64_t n_batch, int n_threads);

// The whole plan. Throws edgellm::Error for settings that cannot work (a
// context larger than the model's, a KV type the head size cannot hold).
MemoryPlan plan_memory(const Model& model, const PlanSettings& s);
MemoryPlan plan_memory(const ModelShape& shape, const PlanSettings& s);

// Bytes of one cache row of n elements of type t (f16, f32, q8_0, q4_0).
size_t kv_row_bytes(GgmlType t, int64_t n);

// "1.5G", "900M", "4096K", "123" (bytes) -> bytes; throws with a clear message.
uint64_t parse_size(const std::string& s);
std::string format_mib(uint64_t bytes);  // "123.4 MiB"

}  // namespace edgellm
