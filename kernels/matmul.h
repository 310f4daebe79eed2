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
// cols) and any number of activation rows from 1 to T, on a pool of at most
// n_threads threads, with the active kernel set (kernels(): plan after any
// select_kernels). Layout of a call with T' rows, each part 64-byte aligned:
//   [quantized activations, per format: T' rows]
//   [thread 0's area][thread 1's area] ... [thread n_threads-1's area]
// where a thread's area is the largest scratch any of the jobs' kernel calls
// announces (KernelSet::gemm_scratch for T' > 1, gemv_scratch for T' = 1)
// for the whole matrix and matmul's largest token block: 0 where the set's
// kernels need none.
size_t matmul_scratch_bytes(const MatmulJob* jobs, int n_jobs, int64_t T, int n_threads);
inline size_t matmul_scratch_bytes(const WeightView& w, int64_t T, int n_threads) {
  MatmulJob j{&w, nullptr};
  return matmul_scratch_bytes(&j, 1, T, n_threads);
}
// scratch: at least matmul_scratch_bytes(jobs, n_jobs, T, n) bytes with
// n >= pool.size(), 64-byte aligned. No heap allocation: thread i's kernels
// work in area i of scratch.
void matmul_multi(ThreadPool& pool, const MatmulJob* jobs, int n_jobs, const float* x, int64_t T,
                  void* scratch);
inline void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t T, float* y, void* scratch) {
  MatmulJob j{&w, y};
  matmul_multi(pool, &j, 1, x, T, scratch);
}

}  // namespace edgellm
