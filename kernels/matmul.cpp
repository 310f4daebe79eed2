#include "kernels/matmul.h"

#include "base/error.h"
#include "kernels/dispatch.h"

namespace edgellm {

size_t matmul_scratch_bytes(GgmlType wtype, int64_t cols, int64_t T) {
  return row_size(traits(wtype).vec_dot_type, cols) * size_t(T);
}

void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t T, float* y,
            void* scratch) {
  const KernelSet& k = kernels();
  const GgmlType at = traits(w.type).vec_dot_type;
  const size_t act_row = row_size(at, w.cols);
  const VecDotFn dot = k.vec_dot[int(w.type)];
  const QuantizeRowFn quant = k.quantize_act[int(at)];
  if (!dot || !quant) fail("no kernel for weight type ", type_name(uint32_t(w.type)));

  uint8_t* xq = static_cast<uint8_t*>(scratch);
  auto quantize = [&](int ith, int nth) {
    int64_t t0, t1;
    split_range(T, ith, nth, &t0, &t1);
    for (int64_t t = t0; t < t1; ++t) quant(x + t * w.cols, xq + t * act_row, w.cols);
  };
  if (T > 1) pool.run(quantize); else quantize(0, 1);

  const size_t wrow = w.row_bytes();
  auto body = [&](int ith, int nth) {
    int64_t r0, r1;
    split_range(w.rows, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = w.data + size_t(r) * wrow;
      for (int64_t t = 0; t < T; ++t) y[t * w.rows + r] = dot(w.cols, wr, xq + t * act_row);
    }
  };
  pool.run(body);
}

}  // namespace edgellm
