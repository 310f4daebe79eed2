// Grouped-query attention and SwiGLU at 4 lanes (Advanced SIMD, every AArch64
// CPU): kernels/attention_tile.h in the NEON target region.
// Quantized keys: int8 dots, SDOT where the CPU has FEAT_DotProd, else the
// ARMv8.0 widening path (SMULL to int16, SADALP into int32: exact for every
// byte value). Per key and 32 elements: 34 (q8_0) or 18 (q4_0) bytes of the
// cached row (f16: 64), read from memory once per call; 4 keys x 2 query
// rows per register tile.
#include <arm_neon.h>

#include <cstring>

#include "base/fp16.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/attention_tile.h"

namespace edgellm {

namespace {

// FCVT: exact for every half, base ARMv8.
inline float half(uint16_t h) {
  __fp16 x;
  std::memcpy(&x, &h, sizeof x);
  return float(x);
}

// Key block b of a row of type KT as two int8x16 (q4_0: q - 8, element j from
// the low nibble of qs[j], j + 16 from the high one) and its scale.
template <GgmlType KT>
inline void key_block(const uint8_t* row, int64_t b, int8x16_t* x0, int8x16_t* x1, float* d) {
  if constexpr (KT == GgmlType::Q8_0) {
    const auto& k = reinterpret_cast<const block_q8_0*>(row)[b];
    *d = half(k.d);
    *x0 = vld1q_s8(k.qs);
    *x1 = vld1q_s8(k.qs + 16);
  } else {
    const auto& k = reinterpret_cast<const block_q4_0*>(row)[b];
    *d = half(k.d);
    const uint8x16_t q = vld1q_u8(k.qs);
    *x0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(15))), vdupq_n_s8(8));
    *x1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
  }
}

template <bool kDot>
inline int32x4_t dot_i8(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1) {
  if constexpr (kDot) {
    return vdotq_s32(vdotq_s32(vdupq_n_s32(0), x0, y0), x1, y1);
  } else {
    int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0)));
    s = vpadalq_s16(s, vmull_high_s8(x0, y0));
    s = vpadalq_s16(s, vmull_s8(vget_low_s8(x1), vget_low_s8(y1)));
    return vpadalq_s16(s, vmull_high_s8(x1, y1));
  }
}

// Scores of 4 keys x NR query rows: out[j * ldo + r] = scale *
// vec_dot(key j, qq + r * nb); the 4 x NR float accumulators are reduced
// together at the end (2 pairwise adds per row for 4 keys).
template <GgmlType KT, bool kDot, int NR>
inline void kq_tile(const uint8_t* const* keys, const block_q8_0* qq, int64_t nb, float scale, float* out, int nk,
                    size_t ldo) {
  float32x4_t acc[NR][4];
  for (int r = 0; r < NR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_f32(0);
  for (int64_t b = 0; b < nb; ++b) {
    int8x16_t x0[4], x1[4];
    float dk[4];
    for (int j = 0; j < 4; ++j) key_block<KT>(keys[j], b, &x0[j], &x1[j], &dk[j]);
    for (int r = 0; r < NR; ++r) {
      const block_q8_0& q = qq[r * nb + b];
      const int8x16_t y0 = vld1q_s8(q.qs), y1 = vld1q_s8(q.qs + 16);
      const float dq = half(q.d);
      for (int j = 0; j < 4; ++j)
        acc[r][j] = vmlaq_n_f32(acc[r][j], vcvtq_f32_s32(dot_i8<kDot>(x0[j], x1[j], y0, y1)), dk[j] * dq);
    }
  }
  for (int r = 0; r < NR; ++r) {
    const float32x4_t s =
        vmulq_n_f32(vpaddq_f32(vpaddq_f32(acc[r][0], acc[r][1]), vpaddq_f32(acc[r][2], acc[r][3])), scale);
    float s4[4];
    vst1q_f32(s4, s);
    for (int j = 0; j < nk; ++j) out[size_t(j) * ldo + size_t(r)] = s4[j];
  }
}

template <GgmlType KT, bool kDot>
inline void kq_scores_t(const uint8_t* k, size_t k_stride, int nk, const block_q8_0* qq, int64_t nb, int nr,
                        float scale, float* out, size_t ldo) {
  for (int j0 = 0; j0 < nk; j0 += 4) {
    const int n = nk - j0 < 4 ? nk - j0 : 4;
    const uint8_t* keys[4];
    for (int j = 0; j < 4; ++j) keys[j] = k + size_t(j0 + (j < n ? j : 0)) * k_stride;  // tail: repeat key 0, not stored
    float* o = out + size_t(j0) * ldo;
    int r = 0;
    for (; r + 2 <= nr; r += 2) kq_tile<KT, kDot, 2>(keys, qq + r * nb, nb, scale, o + r, n, ldo);
    if (r < nr) kq_tile<KT, kDot, 1>(keys, qq + r * nb, nb, scale, o + r, n, ldo);
  }
}

// FCVTL: exact for every half, base ARMv8.
void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  for (; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

inline void store_widened(float* dst, int8x16_t x, float d) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_high_s8(x);
  vst1q_f32(dst, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
  vst1q_f32(dst + 4, vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), d));
  vst1q_f32(dst + 8, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
  vst1q_f32(dst + 12, vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), d));
}

template <bool kDot>
struct NeonKv {
  static void half_to_float(const uint16_t* src, float* dst, int64_t n) { edgellm::half_to_float(src, dst, n); }
  static float32x4_t half_vec(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  // One cache row widened to f32 (blocks: float(q) * d, as dequantize_row).
  static void row_to_f32(GgmlType t, const uint8_t* src, float* dst, int64_t n) {
    if (t == GgmlType::F16) {
      edgellm::half_to_float(reinterpret_cast<const uint16_t*>(src), dst, n);
    } else if (t == GgmlType::Q8_0) {
      for (int64_t i = 0; i < n / QK8_0; ++i, dst += QK8_0) {
        int8x16_t x0, x1;
        float d;
        key_block<GgmlType::Q8_0>(src, i, &x0, &x1, &d);
        store_widened(dst, x0, d);
        store_widened(dst + 16, x1, d);
      }
    } else {
      for (int64_t i = 0; i < n / QK4_0; ++i, dst += QK4_0) {
        int8x16_t x0, x1;
        float d;
        key_block<GgmlType::Q4_0>(src, i, &x0, &x1, &d);
        store_widened(dst, x0, d);
        store_widened(dst + 16, x1, d);
      }
    }
  }
  static void kq_scores(GgmlType kt, const uint8_t* k, size_t k_stride, int nk, const block_q8_0* qq, int64_t nb,
                        int nr, float scale, float* out, size_t ldo) {
    if (kt == GgmlType::Q8_0) kq_scores_t<GgmlType::Q8_0, kDot>(k, k_stride, nk, qq, nb, nr, scale, out, ldo);
    else kq_scores_t<GgmlType::Q4_0, kDot>(k, k_stride, nk, qq, nb, nr, scale, out, ldo);
  }
};

void attend_group_dot(const AttendGroup& g) { attend_group_lanes<4, NeonKv<true>>(g); }
void attend_group_widen(const AttendGroup& g) { attend_group_lanes<4, NeonKv<false>>(g); }

}  // namespace

void register_attention_neon(KernelSet& k) {
  const bool dotprod = cpu_features().dotprod;
  k.attend_group = dotprod ? attend_group_dot : attend_group_widen;
  k.swiglu = swiglu_lanes<4>;
  k.geglu = geglu_lanes<4>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
