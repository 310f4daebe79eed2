// Scalar reference quantize / dequantize / dot for the 32-element "legacy"
// types q4_0, q4_1, q5_0, q5_1, q8_0 and the activation format q8_1. The
// quantizers follow ggml's *_ref functions step for step (including where
// they truncate rather than round) so a row quantized here is byte-identical
// to one quantized by llama-quantize without an importance matrix.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "tensor/blocks.h"

namespace edgellm::ref {

namespace {

// The 5th bits of a q5 block, as ggml reads them: little-endian uint32.
uint32_t load_qh(const uint8_t* qh) {
  return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}
void store_qh(uint8_t* qh, uint32_t v) {
  for (int i = 0; i < 4; ++i) qh[i] = uint8_t(v >> (8 * i));
}

// Value with the largest magnitude, keeping its sign (first one on ties, as
// ggml's strict '<' does). The symmetric types put it at the extreme level
// -8 / -16 so the asymmetric side gets the extra level.
float signed_absmax(const float* x, int n, float* amax_out) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) { amax = std::fabs(x[j]); max = x[j]; }
  *amax_out = amax;
  return max;
}

}  // namespace

// ---- q4_0 ------------------------------------------------------------------

void quantize_q4_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q4_0*>(dst);
  for (int64_t i = 0; i < n / QK4_0; ++i, x += QK4_0) {
    float amax;
    const float max = signed_absmax(x, QK4_0, &amax);
    const float d = max / -8;  // max maps to -8: the full 16 levels get used
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      // +8.5 then truncation = round half up into 0..16; 16 only for values
      // at +|max| rounding over, clamped to 15.
      const int q0 = std::min(15, int(int8_t(x[j] * id + 8.5f)));
      const int q1 = std::min(15, int(int8_t(x[QK4_0 / 2 + j] * id + 8.5f)));
      y[i].qs[j] = uint8_t(q0 | q1 << 4);
    }
  }
}

void dequantize_q4_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q4_0*>(src);
  for (int64_t i = 0; i < n / QK4_0; ++i, y += QK4_0) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      y[j] = float((x[i].qs[j] & 0xF) - 8) * d;
      y[j + QK4_0 / 2] = float((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q4_0*>(w);
  const auto* y = static_cast<const block_q8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK4_0; ++i) {
    int sumi = 0;  // |sumi| <= 32 * 8 * 128: fits easily
    for (int j = 0; j < QK4_0 / 2; ++j)
      sumi += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j] + ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + QK4_0 / 2];
    sum += float(sumi) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
  }
  return sum;
}

// ---- q4_1 ------------------------------------------------------------------

void quantize_q4_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q4_1*>(dst);
  for (int64_t i = 0; i < n / QK4_1; ++i, x += QK4_1) {
    float min = INFINITY, max = -INFINITY;
    for (int j = 0; j < QK4_1; ++j) { min = std::min(min, x[j]); max = std::max(max, x[j]); }
    const float d = (max - min) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(min);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      const int q0 = std::min(15, int(int8_t((x[j] - min) * id + 0.5f)));
      const int q1 = std::min(15, int(int8_t((x[QK4_1 / 2 + j] - min) * id + 0.5f)));
      y[i].qs[j] = uint8_t(q0 | q1 << 4);
    }
  }
}

void dequantize_q4_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q4_1*>(src);
  for (int64_t i = 0; i < n / QK4_1; ++i, y += QK4_1) {
    const float d = fp16_to_f32(x[i].d), m = fp16_to_f32(x[i].m);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      y[j] = float(x[i].qs[j] & 0xF) * d + m;
      y[j + QK4_1 / 2] = float(x[i].qs[j] >> 4) * d + m;
    }
  }
}

// sum_j (d_x q_j + m_x) d_y a_j = d_x d_y sum q_j a_j + m_x (d_y sum a_j),
// and the last bracket is the q8_1 block's precomputed s.
float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q4_1*>(w);
  const auto* y = static_cast<const block_q8_1*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK4_1; ++i) {
    int sumi = 0;
    for (int j = 0; j < QK4_1 / 2; ++j)
      sumi += (x[i].qs[j] & 0xF) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + QK4_1 / 2];
    sum += float(sumi) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) +
           fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return sum;
}

// ---- q5_0 ------------------------------------------------------------------

void quantize_q5_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q5_0*>(dst);
  for (int64_t i = 0; i < n / QK5_0; ++i, x += QK5_0) {
    float amax;
    const float max = signed_absmax(x, QK5_0, &amax);
    const float d = max / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int q0 = std::min(31, int(int8_t(x[j] * id + 16.5f)));
      const int q1 = std::min(31, int(int8_t(x[QK5_0 / 2 + j] * id + 16.5f)));
      y[i].qs[j] = uint8_t((q0 & 0xF) | (q1 & 0xF) << 4);
      qh |= uint32_t(q0 >> 4) << j;
      qh |= uint32_t(q1 >> 4) << (j + QK5_0 / 2);
    }
    store_qh(y[i].qh, qh);
  }
}

void dequantize_q5_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q5_0*>(src);
  for (int64_t i = 0; i < n / QK5_0; ++i, y += QK5_0) {
    const float d = fp16_to_f32(x[i].d);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int q0 = (x[i].qs[j] & 0xF) | int((qh >> j) & 1) << 4;
      const int q1 = (x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      y[j] = float(q0 - 16) * d;
      y[j + QK5_0 / 2] = float(q1 - 16) * d;
    }
  }
}

float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q5_0*>(w);
  const auto* y = static_cast<const block_q8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK5_0; ++i) {
    const uint32_t qh = load_qh(x[i].qh);
    int sumi = 0;
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int q0 = ((x[i].qs[j] & 0xF) | int((qh >> j) & 1) << 4) - 16;
      const int q1 = ((x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4) - 16;
      sumi += q0 * y[i].qs[j] + q1 * y[i].qs[j + QK5_0 / 2];
    }
    sum += float(sumi) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
  }
  return sum;
}

// ---- q5_1 ------------------------------------------------------------------

void quantize_q5_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q5_1*>(dst);
  for (int64_t i = 0; i < n / QK5_1; ++i, x += QK5_1) {
    float min = INFINITY, max = -INFINITY;
    for (int j = 0; j < QK5_1; ++j) { min = std::min(min, x[j]); max = std::max(max, x[j]); }
    const float d = (max - min) / 31;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < QK5_1 / 2; ++j) {
      // ggml does not clamp here; the min() only guards float rounding of
      // (max-min)*id a hair above 31.5, and never changes a valid result.
      const int q0 = std::min(31, int(uint8_t((x[j] - min) * id + 0.5f)));
      const int q1 = std::min(31, int(uint8_t((x[QK5_1 / 2 + j] - min) * id + 0.5f)));
      y[i].qs[j] = uint8_t((q0 & 0xF) | (q1 & 0xF) << 4);
      qh |= uint32_t(q0 >> 4) << j;
      qh |= uint32_t(q1 >> 4) << (j + QK5_1 / 2);
    }
    store_qh(y[i].qh, qh);
  }
}

void dequantize_q5_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q5_1*>(src);
  for (int64_t i = 0; i < n / QK5_1; ++i, y += QK5_1) {
    const float d = fp16_to_f32(x[i].d), m = fp16_to_f32(x[i].m);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int q0 = (x[i].qs[j] & 0xF) | int((qh >> j) & 1) << 4;
      const int q1 = (x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      y[j] = float(q0) * d + m;
      y[j + QK5_1 / 2] = float(q1) * d + m;
    }
  }
}

float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q5_1*>(w);
  const auto* y = static_cast<const block_q8_1*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK5_1; ++i) {
    const uint32_t qh = load_qh(x[i].qh);
    int sumi = 0;
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int q0 = (x[i].qs[j] & 0xF) | int((qh >> j) & 1) << 4;
      const int q1 = (x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      sumi += q0 * y[i].qs[j] + q1 * y[i].qs[j + QK5_1 / 2];
    }
    sum += float(sumi) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) +
           fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return sum;
}

// ---- q8_0 / q8_1 -----------------------------------------------------------
// Symmetric absmax scaling to +-127 (never -128, so negating a block is exact).
// roundf (half away from zero), not nearest_int: that is what ggml uses here.

void quantize_q8_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_0*>(dst);
  for (int64_t i = 0; i < n / QK8_0; ++i, x += QK8_0) {
    float amax = 0;
    for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < QK8_0; ++j) y[i].qs[j] = int8_t(std::roundf(x[j] * id));
  }
}

void dequantize_q8_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q8_0*>(src);
  for (int64_t i = 0; i < n / QK8_0; ++i, y += QK8_0) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < QK8_0; ++j) y[j] = float(x[i].qs[j]) * d;
  }
}

float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q8_0*>(w);
  const auto* y = static_cast<const block_q8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK8_0; ++i) {
    int sumi = 0;
    for (int j = 0; j < QK8_0; ++j) sumi += x[i].qs[j] * y[i].qs[j];
    sum += float(sumi) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
  }
  return sum;
}

void quantize_q8_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_1*>(dst);
  for (int64_t i = 0; i < n / QK8_1; ++i, x += QK8_1) {
    float amax = 0;
    for (int j = 0; j < QK8_1; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < QK8_1; ++j) {
      y[i].qs[j] = int8_t(std::roundf(x[j] * id));
      sum += y[i].qs[j];
    }
    // ggml multiplies by the float d, not the rounded half it stores.
    y[i].s = f32_to_fp16(float(sum) * d);
  }
}

void dequantize_q8_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q8_1*>(src);
  for (int64_t i = 0; i < n / QK8_1; ++i, y += QK8_1) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < QK8_1; ++j) y[j] = float(x[i].qs[j]) * d;
  }
}

}  // namespace edgellm::ref
