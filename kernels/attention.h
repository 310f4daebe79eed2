// Causal multi-head attention over the KV cache with an online softmax
// (flash-attention style): one pass over the cached positions keeps a running
// max m, normalizer l and weighted sum of values, so memory is O(head_dim) per
// (token, head) rather than O(context). GQA: query head h reads KV head
// h / (n_head / n_head_kv).
//
// Work: per token, per head, context * (head_dim + head_dim_v) multiply-adds;
// bytes: the layer's cached K and V rows, read once per query head group.
#pragma once
#include <cstdint>

#include "base/thread_pool.h"
#include "tensor/types.h"

namespace edgellm {

struct AttentionArgs {
  const float* q = nullptr;        // [n_tokens][n_head * head_dim], RoPE applied
  float* out = nullptr;            // [n_tokens][n_head * head_dim_v]
  const uint8_t* k_cache = nullptr;  // this layer: [n_ctx][n_head_kv * head_dim] of kv_type
  const uint8_t* v_cache = nullptr;  // this layer: [n_ctx][n_head_kv * head_dim_v]
  GgmlType kv_type = GgmlType::F16;
  int64_t n_tokens = 0;            // query tokens; token t sits at position n_past + t
  int64_t n_past = 0;
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0, head_dim_v = 0;
  float scale = 1.0f;              // 1/sqrt(head_dim)
};

// The cache must already hold positions 0 .. n_past + n_tokens - 1.
void attention_causal(ThreadPool& pool, const AttentionArgs& a);

struct AttendGroup;
// Scalar reference twin of KernelSet::attend_group_f16: each query head of
// the group on its own, keys in tiles of 32, plain expf and fp16 conversion.
void attend_group_reference(const AttendGroup& g);

}  // namespace edgellm
