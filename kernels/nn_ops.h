// Small element-wise ops of the forward pass (f32). They move O(n_embd) bytes
// per token, noise next to the matmuls, so they stay scalar and readable;
// the compiler vectorizes the simple loops.
#pragma once
#include <cstdint>

#include "tensor/types.h"

namespace edgellm {

// out = x / sqrt(mean(x^2) + eps) * w     (out may alias x)
// w == nullptr: no weight (Gemma 4's value norm).
void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out);
// y += x
void add_inplace(float* y, const float* x, int64_t n);
// gate = silu(gate) * up
void swiglu_inplace(float* gate, const float* up, int64_t n);
// gate = gelu(gate) * up, GELU's tanh approximation (Gemma's GeGLU):
// gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void geglu_inplace(float* gate, const float* up, int64_t n);
// Rotates the first n_rot dims of one head. cs = [n_rot/2][cos, sin].
// neox: pairs (i, i + n_rot/2); otherwise adjacent pairs (2i, 2i+1).
void rope_apply(float* x, const float* cs, int64_t n_rot, bool neox);
// Writes one cache row of n elements of type t (F16, F32, or a block type
// such as Q8_0 / Q4_0, n a multiple of 32) from f32. q8_0 goes through the
// active kernel set's quantizer (bytes identical to the reference), q4_0 and
// the others through tensor/'s reference quantize_row. For a cache row of
// several heads, n = n_head_kv * head_dim: head h's part then starts at
// row_size(t, h * head_dim) bytes, as attention_causal reads it.
void store_kv_row(GgmlType t, const float* src, uint8_t* dst, int64_t n);

}  // namespace edgellm
