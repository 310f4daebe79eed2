// A view of some rows of a matrix: a fused tensor's part (phi3's attn_qkv,
// its gate/up ffn_up) bound as a weight of its own without copying. A
// row-major tensor's rows are contiguous whatever the type (a quantized row
// is whole blocks), so rows [first, first + n) start first * row_bytes in.
#pragma once
#include <cstdint>

#include "base/error.h"
#include "kernels/matmul.h"

namespace edgellm {

inline WeightView row_slice(const WeightView& w, int64_t first, int64_t n) {
  if (first < 0 || n < 0 || first + n > w.rows)
    fail("row_slice: rows ", first, "..", first + n, " are outside a matrix of ", w.rows, " rows");
  WeightView v = w;
  v.rows = n;
  if (w.data) v.data = w.data + size_t(first) * w.row_bytes();
  return v;
}

}  // namespace edgellm
