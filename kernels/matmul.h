// Weight x activations, the op that dominates both prefill and decode.
//
//   Y[t][r] = sum_i W[r][i] * X[t][i]     W: [rows][cols] in its GGUF type
//                                          X: [T][cols] f32, Y: [T][rows] f32
//
// Activations are first quantized to the weight type's vec_dot_type (q8_0,
// q8_1, q8_K or f32), once per call, so the inner loop is an int8 dot product.
// Rows are split across the pool; each weight row is read from memory once and
// used for all T activation rows (decode: T = 1, bytes moved = the weight).
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "tensor/types.h"

namespace edgellm {

struct WeightView {
  GgmlType type = GgmlType::F32;
  int64_t cols = 0;  // ne[0], the contiguous dimension
  int64_t rows = 0;  // ne[1]
  const uint8_t* data = nullptr;
  size_t row_bytes() const { return row_size(type, cols); }
};

// Bytes of the activation buffer matmul() needs for T rows of `cols` inputs.
size_t matmul_scratch_bytes(GgmlType wtype, int64_t cols, int64_t T);

// scratch: at least matmul_scratch_bytes() bytes, 64-byte aligned.
void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t T, float* y,
            void* scratch);

}  // namespace edgellm
