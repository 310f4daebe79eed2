// AArch64 NEON row kernels (the NEON target region enables dotprod; only the
// functions picked below from cpu_features() are ever called). Each has a scalar twin in tensor/
// (tests/test_kernels_neon.cpp compares them on every host that runs this set).
//
// Cost per element, stated as DESIGN.md asks (w = weight row, a = activation):
//   vec_dot q8_0 x q8_0 : 34/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q4_0 x q8_0 : 18/32 B of w + 34/32 B of a;  2 int8 MAC ops (+2 ops unpack)
//   quantize q8_0       : 4 B read + 34/32 B written;    ~4 FLOPs (abs-max, scale, round)
// In decode the activation row stays in L1/L2 across all rows of a matrix, so
// the bytes that bound the speed are the weight bytes (DRAM traffic).
//
// Integer dots: with FEAT_DotProd (HWCAP_ASIMDDP, Cortex-A55/A75 and later)
// one SDOT does 16 int8 MACs into 4 int32 lanes; without it the plain
// ARMv8.0 path widens (SMULL to int16, SADALP into int32): 4 instructions per
// 16 MACs, exact for every byte value (|x*y| <= 128*128 fits int16, each
// int16 is added to int32 on its own). i8mm (SMMLA) computes a 2x2 tile of
// dots, which only pays off with two weight rows times two activation rows;
// the one-row vec_dot interface has no use for it, so there is no i8mm path.
#include <arm_neon.h>

#include <algorithm>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

// ---- quantized rows (q8_0 activations) ------------------------------------------

template <class D>
float vec_dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<D>(static_cast<const block_q8_0*>(w), static_cast<const block_q8_0*>(a), n / QK8_0,
                       [](const block_q8_0& b, int8x16_t& lo, int8x16_t& hi) {
                         lo = vld1q_s8(b.qs);
                         hi = vld1q_s8(b.qs + 16);
                       });
}

// q4_0: value = nibble - 8.
inline void values_q4_0(const block_q4_0& b, int8x16_t& lo, int8x16_t& hi) {
  uint8x16_t l, h;
  nibbles(b.qs, l, h);
  const int8x16_t eight = vdupq_n_s8(8);
  lo = vsubq_s8(vreinterpretq_s8_u8(l), eight);
  hi = vsubq_s8(vreinterpretq_s8_u8(h), eight);
}

template <class D>
float vec_dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<D>(static_cast<const block_q4_0*>(w), static_cast<const block_q8_0*>(a), n / QK4_0,
                       [](const block_q4_0& b, int8x16_t& lo, int8x16_t& hi) { values_q4_0(b, lo, hi); });
}

// ---- activation quantizer ------------------------------------------------------

// Bit-identical to the reference quantize_q8_0: amax by FMAXNM (like
// std::max, ignores NaN; max is exact in any order), d and 1/d in scalar
// float exactly as the reference computes them, x * id as one rounded FMUL,
// and FCVTAS (round to nearest, ties away from zero = roundf) to int32, then
// two narrowing moves (values are within [-127, 127], so nothing is cut).
void quantize_q8_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_0*>(dst);
  for (int64_t i = 0; i < n / QK8_0; ++i, x += QK8_0) {
    float32x4_t v[8];
    for (int j = 0; j < 8; ++j) v[j] = vld1q_f32(x + 4 * j);
    float32x4_t m0 = vmaxnmq_f32(vabsq_f32(v[0]), vabsq_f32(v[1]));
    float32x4_t m1 = vmaxnmq_f32(vabsq_f32(v[2]), vabsq_f32(v[3]));
    float32x4_t m2 = vmaxnmq_f32(vabsq_f32(v[4]), vabsq_f32(v[5]));
    float32x4_t m3 = vmaxnmq_f32(vabsq_f32(v[6]), vabsq_f32(v[7]));
    const float amax = vmaxnmvq_f32(vmaxnmq_f32(vmaxnmq_f32(m0, m1), vmaxnmq_f32(m2, m3)));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    int16x8_t h[4];
    for (int j = 0; j < 4; ++j) {
      const int32x4_t q0 = vcvtaq_s32_f32(vmulq_n_f32(v[2 * j], id));
      const int32x4_t q1 = vcvtaq_s32_f32(vmulq_n_f32(v[2 * j + 1], id));
      h[j] = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1));
    }
    vst1q_s8(y[i].qs, vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1])));
    vst1q_s8(y[i].qs + 16, vcombine_s8(vmovn_s16(h[2]), vmovn_s16(h[3])));
  }
}

}  // namespace

// Advanced SIMD is mandatory on AArch64 Linux; FEAT_DotProd picks the SDOT
// variants of the integer dots, otherwise the widening ARMv8.0 ones.
void register_dot_neon(KernelSet& k) {
  const bool dotprod = cpu_features().dotprod;
  k.vec_dot[int(GgmlType::Q4_0)] = dotprod ? vec_dot_q4_0<DotProd> : vec_dot_q4_0<Widen>;
  k.vec_dot[int(GgmlType::Q8_0)] = dotprod ? vec_dot_q8_0<DotProd> : vec_dot_q8_0<Widen>;
  k.quantize_act[int(GgmlType::Q8_0)] = quantize_q8_0;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
