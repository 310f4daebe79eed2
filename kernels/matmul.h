// Weight x activations, the op that dominates both prefill and decode.
//
//   Y[t][r] = sum_i W[r][i] * X[t][i]     W: [rows][cols] in its GGUF type
//                                          X: [T][cols] f32, Y: [T][rows] f32
//
// Activations are first quantized to the weight type's vec_dot_type (q8_0,
// q8_1, q8_K or f32), once per call and format, so the inner loop is an int8
// dot product. Rows are split across the pool; each weight row is read from
// memory once and used for all T activation rows (decode: T = 1, bytes moved
// = the weight, which is why decode speed = bandwidth / model bytes).
//
// Several projections of the same input (Q, K and V; gate and up) go through
// matmul_multi together: one quantization of X, one split of all their rows
// over the threads, one barrier.
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

struct MatmulJob {
  const WeightView* w;
  float* y;  // [T][w->rows]
};

// Bytes of scratch matmul_multi() needs for these jobs (all with the same
// cols) and T activation rows.
size_t matmul_scratch_bytes(const MatmulJob* jobs, int n_jobs, int64_t T);
inline size_t matmul_scratch_bytes(const WeightView& w, int64_t T) {
  MatmulJob j{&w, nullptr};
  return matmul_scratch_bytes(&j, 1, T);
}

// scratch: at least matmul_scratch_bytes() bytes, 64-byte aligned.
void matmul_multi(ThreadPool& pool, const MatmulJob* jobs, int n_jobs, const float* x, int64_t T,
                  void* scratch);
inline void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t T, float* y, void* scratch) {
  MatmulJob j{&w, y};
  matmul_multi(pool, &j, 1, x, T, scratch);
}

}  // namespace edgellm
