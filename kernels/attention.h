// Causal multi-head attention over the KV cache with an online softmax
// (flash-attention style): one pass over the cached positions keeps a running
// max m, normalizer l and weighted sum of values, so memory is O(head_dim) per
// (token, head) rather than O(context). GQA: query head h reads KV head
// h / (n_head / n_head_kv).
//
// Work: per token, per head, context * (head_dim + head_dim_v) multiply-adds;
// bytes: the layer's cached K and V rows, read once per query head group.
//
// Cache types: K and V each f16, q8_0 or q4_0, independently (or both f32).
// Block-type rows are read in place, never dequantized into a copy of the
// cache: per cached element a q8_0 row moves 34/32 = 1.06 bytes and a q4_0 row
// 18/32 = 0.56, against f16's 2. A block-type K scores with int8 dots against
// the query rows quantized to q8_0 once per call (llama.cpp's CPU flash
// attention does the same), so its scores carry the query's q8_0 rounding too.
#pragma once
#include <cstdint>
#include <string>

#include "base/thread_pool.h"
#include "tensor/types.h"

namespace edgellm {

struct AttentionArgs {
  const float* q = nullptr;        // [n_tokens][n_head * head_dim], RoPE applied
  float* out = nullptr;            // [n_tokens][n_head * head_dim_v]
  // This layer's cache: position p's keys (all KV heads, n_head_kv * head_dim
  // elements of k_type) start at k_cache + p * k_stride bytes; values alike.
  // Head h's part of a row starts at row_size(type, h * head_dim) bytes.
  const uint8_t* k_cache = nullptr;
  const uint8_t* v_cache = nullptr;
  GgmlType k_type = GgmlType::F16, v_type = GgmlType::F16;
  size_t k_stride = 0, v_stride = 0;  // bytes between positions
  int64_t n_tokens = 0;            // query tokens; token t sits at position n_past + t
  int64_t n_past = 0;
  int64_t window = 0;              // > 0: position p sees only p - window + 1 .. p (sliding layers)
  int64_t ring = 0;                // > 0: position p's rows at row p % ring (AttendGroup::ring)
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0, head_dim_v = 0;
  float scale = 1.0f;              // 1/sqrt(head_dim)
  float softcap = 0.0f;            // scaled scores s -> softcap * tanh(s / softcap); 0: none (gemma2: 50)
};

// The cache must already hold positions 0 .. n_past + n_tokens - 1 (with a
// window, those each token sees; with a ring, ring >= window + n_tokens - 1).
// Throws (fail) for type combinations kv_types_fit() refuses.
void attention_causal(ThreadPool& pool, const AttentionArgs& a);

// Whether a KV cache of type t can hold heads of head_dim elements: f16 and
// f32 always; q8_0 and q4_0 when head_dim is a multiple of 32 (their block)
// and at most kKvMaxBlockHeadDim. Otherwise false and, if why is non-null, a
// message for the user naming the option to change (flag: "-ctk" / "-ctv"),
// e.g. "KV cache type q8_0 needs a head size divisible by 32; this model's is
// 8: use -ctk f16".
constexpr int64_t kKvMaxBlockHeadDim = 1024;
bool kv_type_fits(GgmlType t, int64_t head_dim, std::string* why, const char* flag = "-ctk");
// Both caches of a layer: kv_type_fits for K (head_dim, -ctk) and V
// (head_dim_v, -ctv), and f32 only for both at once.
bool kv_types_fit(GgmlType k_type, GgmlType v_type, int64_t head_dim, int64_t head_dim_v, std::string* why);

struct AttendGroup;
// Scalar reference twin of KernelSet::attend_group: each query head of the
// group on its own, keys in tiles of 32, plain expf and fp16 conversion; a
// block-type K through the query row quantized to q8_0 and the reference
// vec_dot, a block-type V through dequantize_row's arithmetic. Allocates
// nothing. Also takes F32 caches (both K and V).
void attend_group_reference(const AttendGroup& g);

}  // namespace edgellm
