#include "kernels/nn_ops.h"

#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "kernels/dispatch.h"

namespace edgellm {

void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  const float scale = float(1.0 / std::sqrt(ss / double(n) + eps));
  if (!w) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void swiglu_inplace(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu_inplace(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    gate[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x))) * up[i];
  }
}

void rope_apply(float* x, const float* cs, int64_t n_rot, bool neox) {
  const int64_t half = n_rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    const float c = cs[2 * i], s = cs[2 * i + 1];
    float* a = neox ? x + i : x + 2 * i;
    float* b = neox ? x + i + half : x + 2 * i + 1;
    const float x0 = *a, x1 = *b;
    *a = x0 * c - x1 * s;
    *b = x0 * s + x1 * c;
  }
}

void store_kv_row(GgmlType t, const float* src, uint8_t* dst, int64_t n) {
  if (t == GgmlType::F16) {
    uint16_t* d = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = f32_to_fp16(src[i]);
  } else if (t == GgmlType::F32) {
    std::memcpy(dst, src, size_t(n) * sizeof(float));
  } else if (t == GgmlType::Q8_0) {
    // The active set's q8_0 quantizer: SIMD, the same bytes as the reference.
    kernels().quantize_act[int(GgmlType::Q8_0)](src, dst, n);
  } else {
    quantize_row(t, src, dst, n);  // q4_0 and the rest: the reference quantizer
  }
}

}  // namespace edgellm
