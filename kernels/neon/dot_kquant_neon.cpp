// NEON vec_dot for the K-quant weights q4_K, q5_K and q6_K x q8_K activations
// (the NEON target region; SDOT variant where the CPU has
// FEAT_DotProd, else the ARMv8.0 widening one). Scalar twins:
// ref::vec_dot_q{4,5,6}_K_q8_K in tensor/quant_k.cpp.
//
// Why: the scalar K-quant dots unpack one element at a time and run ~20x
// slower than the int8 SIMD dots; Q4_K_M / Q5_K_M files are mostly q4_K/q5_K
// with q6_K for ffn_down and the output matrix.
//
// Cost per element (w = weight row, a = activation, 292/256 B of q8_K):
//   vec_dot q4_K x q8_K : 144/256 B of w + 292/256 B of a;  2 int8 MAC ops
//   vec_dot q5_K x q8_K : 176/256 B of w + 292/256 B of a;  2 int8 MAC ops (+4 ops 5th bit)
//   vec_dot q6_K x q8_K : 210/256 B of w + 292/256 B of a;  2 int8 MAC ops (+4 ops unpack)
// plus per 256-element super-block a few dozen ops for the sub-block scales.
//
// A 16-byte vector is one q6_K sub-block or half a q4_K/q5_K one, so each
// sub-block's int8 dot lands in its own int32x4 and is scaled by an integer
// multiply-accumulate (MLA by scalar) into one int32x4 per super-block; that
// exact integer sum is scaled in float with the reference's own expression.
// q6_K's values are made signed (q - 32) before the dot; the mins of
// q4_K/q5_K go through q8_K's per-16 sums (bsums), which for rows from the
// q8_K quantizer are exactly the sums of its bytes.
#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

// sum_j m_j * (bsums[2j] + bsums[2j+1]) over the 8 sub-blocks of 32.
inline int32_t mins_dot_bsums_neon(const ScalesMinsK4& s, const int16_t* bsums) {
  const int16x8_t pairs = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));  // |.| <= 4064
  const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(s.m)));
  const int32x4_t p = vmlal_s16(vmull_s16(vget_low_s16(mins), vget_low_s16(pairs)), vget_high_s16(mins),
                                vget_high_s16(pairs));
  return vaddvq_s32(p);
}

// q4_K and q5_K: 8 sub-blocks of 32, x = d*sc*q - dmin*m, q = 4 or 5 bits.
// qs[32p + l]: low nibble element 64p + l (sub-block 2p), high nibble element
// 64p + 32 + l (sub-block 2p+1); q5_K's fifth bits are bits 2p / 2p+1 of qh[l].
template <class D, class Block>
float vec_dot_k_affine(int64_t n, const void* w, const void* a) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const uint8x16_t m4 = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const ScalesMinsK4 s = unpack_scales_mins_k4(x[i].scales);
    const int32_t summs = mins_dot_bsums_neon(s, y[i].bsums);
    uint8x16_t h0 = vdupq_n_u8(0), h1 = h0;
    if constexpr (kFifthBit) {
      h0 = vld1q_u8(x[i].qh);
      h1 = vld1q_u8(x[i].qh + 16);
    }
    int32x4_t acc = vdupq_n_s32(0);
    for (int p = 0; p < 4; ++p) {
      const uint8x16_t b0 = vld1q_u8(x[i].qs + 32 * p), b1 = vld1q_u8(x[i].qs + 32 * p + 16);
      uint8x16_t lo0 = vandq_u8(b0, m4), lo1 = vandq_u8(b1, m4);
      uint8x16_t hi0 = vshrq_n_u8(b0, 4), hi1 = vshrq_n_u8(b1, 4);
      if constexpr (kFifthBit) {  // bits 2p, 2p+1 of qh: h0/h1 are shifted down by 2 per p
        lo0 = vorrq_u8(lo0, vshlq_n_u8(vandq_u8(h0, one), 4));
        lo1 = vorrq_u8(lo1, vshlq_n_u8(vandq_u8(h1, one), 4));
        hi0 = vorrq_u8(hi0, vshlq_n_u8(vandq_u8(vshrq_n_u8(h0, 1), one), 4));
        hi1 = vorrq_u8(hi1, vshlq_n_u8(vandq_u8(vshrq_n_u8(h1, 1), one), 4));
        h0 = vshrq_n_u8(h0, 2);
        h1 = vshrq_n_u8(h1, 2);
      }
      const int8_t* q8 = y[i].qs + 64 * p;
      const int32x4_t slo = D::dot(D::dot(vdupq_n_s32(0), vreinterpretq_s8_u8(lo0), vld1q_s8(q8)),
                                   vreinterpretq_s8_u8(lo1), vld1q_s8(q8 + 16));
      const int32x4_t shi = D::dot(D::dot(vdupq_n_s32(0), vreinterpretq_s8_u8(hi0), vld1q_s8(q8 + 32)),
                                   vreinterpretq_s8_u8(hi1), vld1q_s8(q8 + 48));
      acc = vmlaq_n_s32(acc, slo, s.sc[2 * p]);
      acc = vmlaq_n_s32(acc, shi, s.sc[2 * p + 1]);
    }
    const int32_t isum = vaddvq_s32(acc);
    sum += y[i].d * half(x[i].d) * float(isum) - y[i].d * half(x[i].dmin) * float(summs);
  }
  return sum;
}

// q6_K: 16 sub-blocks of 16, x = d*sc*(q-32), q = 6 bits. Per half h of 128
// elements and c = 0, 1: ql[64h + 16c ..] holds the low nibbles of elements
// 16c + l (low) and 64 + 16c + l (high), ql[64h + 32 + 16c ..] those of
// 32 + 16c + l and 96 + 16c + l; qh[32h + 16c + l] their top two bits at bit
// pairs 0, 1, 2, 3.
template <class D>
float vec_dot_q6_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const uint8x16_t m4 = vdupq_n_u8(0x0F), m30 = vdupq_n_u8(0x30);
  const int8x16_t c32 = vdupq_n_s8(32);
  auto value = [&](uint8x16_t lo4, uint8x16_t hi2) {  // (lo4 | hi2) - 32, signed
    return vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo4, hi2)), c32);
  };
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      const int8_t* sc = x[i].scales + 8 * h;
      const int8_t* q8 = y[i].qs + 128 * h;
      for (int c = 0; c < 2; ++c) {
        const uint8x16_t l0 = vld1q_u8(x[i].ql + 64 * h + 16 * c);
        const uint8x16_t l1 = vld1q_u8(x[i].ql + 64 * h + 32 + 16 * c);
        const uint8x16_t hb = vld1q_u8(x[i].qh + 32 * h + 16 * c);
        // Elements 32k + 16c + l of this half: sub-block 2k + c.
        const int8x16_t q[4] = {
            value(vandq_u8(l0, m4), vandq_u8(vshlq_n_u8(hb, 4), m30)),
            value(vandq_u8(l1, m4), vandq_u8(vshlq_n_u8(hb, 2), m30)),
            value(vshrq_n_u8(l0, 4), vandq_u8(hb, m30)),
            value(vshrq_n_u8(l1, 4), vandq_u8(vshrq_n_u8(hb, 2), m30))};
        for (int k = 0; k < 4; ++k)
          acc = vmlaq_n_s32(acc, D::dot(vdupq_n_s32(0), q[k], vld1q_s8(q8 + 32 * k + 16 * c)), sc[2 * k + c]);
      }
    }
    const int32_t isum = vaddvq_s32(acc);
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// q8_K activations, the same bytes as ref::quantize_q8_K: the abs-max by
// FMAXNM/FMAXV (exact), the signed value of the first element reaching it (the
// reference's scan order), iscale = -127/max, one float multiply per element,
// FCVTNS's round-half-even (= nearest_int), min(127), each bsum the sum of its
// 16 values; narrowing to bytes is exact (all in -127..127).
void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    float32x4_t m = vdupq_n_f32(0);
    for (int c = 0; c < 64; ++c) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + 4 * c)));
    const float amax = vmaxnmvq_f32(m);
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float max = 0;
    for (int j = 0; j < QK_K; ++j)
      if (std::fabs(x[j]) == amax) {
        max = x[j];
        break;
      }
    const float iscale = -127.f / max;
    const int32x4_t top = vdupq_n_s32(127);
    for (int g = 0; g < 16; ++g) {
      int32x4_t q[4];
      for (int v = 0; v < 4; ++v) q[v] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + 16 * g + 4 * v), iscale)), top);
      y[i].bsums[g] = int16_t(vaddvq_s32(vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3]))));
      const int16x8_t lo = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1])), hi = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
      vst1q_s8(y[i].qs + 16 * g, vcombine_s8(vmovn_s16(lo), vmovn_s16(hi)));
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace

void register_kquant_neon(KernelSet& k) {
  const bool dotprod = cpu_features().dotprod;
  k.quantize_act[int(GgmlType::Q8_K)] = quantize_q8_K;
  k.vec_dot[int(GgmlType::Q4_K)] = dotprod ? vec_dot_k_affine<DotProd, block_q4_K> : vec_dot_k_affine<Widen, block_q4_K>;
  k.vec_dot[int(GgmlType::Q5_K)] = dotprod ? vec_dot_k_affine<DotProd, block_q5_K> : vec_dot_k_affine<Widen, block_q5_K>;
  k.vec_dot[int(GgmlType::Q6_K)] = dotprod ? vec_dot_q6_K<DotProd> : vec_dot_q6_K<Widen>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
