// AArch64 NEON row kernels (this folder is compiled with
// -march=armv8.2-a+dotprod+fp16; only the functions picked below from the
// host's hwcaps are ever called). Each has a scalar twin in tensor/
// (tests/test_kernels_neon.cpp compares them on every host that runs this set).
//
// Cost per element, stated as DESIGN.md asks (w = weight row, a = activation):
//   vec_dot q8_0 x q8_0 : 34/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q4_0 x q8_0 : 18/32 B of w + 34/32 B of a;  2 int8 MAC ops (+2 ops unpack)
//   vec_dot f16 x f32   : 2 B of w + 4 B of a;           2 FLOPs (+1 convert)
//   vec_dot f32 x f32   : 4 B of w + 4 B of a;           2 FLOPs
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
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/neon/simd_neon.h"
#include "tensor/blocks.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif

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

// ---- float rows ----------------------------------------------------------------

// The reference sums in double. Here: 4 float32x4 FMA chains (enough to
// cover the FMA latency of ~4 cycles at 2 issues per cycle on big cores),
// flushed to a double every kChunk elements so that the rounding error
// stays that of a 256-element float sum however long the row is.
constexpr int64_t kChunk = 256;

template <class Load4>
float dot_float_rows(int64_t n, const Load4& load, const float* a) {
  double total = 0;
  int64_t i = 0;
  while (n - i >= 16) {
    const int64_t end = i + std::min(kChunk, (n - i) / 16 * 16);
    float32x4_t s0 = vdupq_n_f32(0), s1 = s0, s2 = s0, s3 = s0;
    for (; i < end; i += 16) {
      s0 = vfmaq_f32(s0, load(i), vld1q_f32(a + i));
      s1 = vfmaq_f32(s1, load(i + 4), vld1q_f32(a + i + 4));
      s2 = vfmaq_f32(s2, load(i + 8), vld1q_f32(a + i + 8));
      s3 = vfmaq_f32(s3, load(i + 12), vld1q_f32(a + i + 12));
    }
    const float32x4_t s = vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3));
    total += vaddvq_f64(vaddq_f64(vcvt_f64_f32(vget_low_f32(s)), vcvt_high_f64_f32(s)));
  }
  for (; i < n; ++i) total += double(load.scalar(i)) * double(a[i]);  // < 16 left
  return float(total);
}

struct LoadF32 {
  const float* p;
  float32x4_t operator()(int64_t i) const { return vld1q_f32(p + i); }
  float scalar(int64_t i) const { return p[i]; }
};
struct LoadF16 {
  const uint16_t* p;
  // FCVTL: exact for every half (subnormals, inf, NaN), base ARMv8.
  float32x4_t operator()(int64_t i) const { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p + i))); }
  float scalar(int64_t i) const { return fp16_to_f32(p[i]); }
};

// bf16 is the upper half of an f32: widening by a 16-bit shift (USHLL), exact.
struct LoadBF16 {
  const uint16_t* p;
  float32x4_t operator()(int64_t i) const { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p + i), 16)); }
  float scalar(int64_t i) const { return bf16_to_f32(p[i]); }
};

float vec_dot_f32(int64_t n, const void* w, const void* a) {
  return dot_float_rows(n, LoadF32{static_cast<const float*>(w)}, static_cast<const float*>(a));
}
float vec_dot_bf16(int64_t n, const void* w, const void* a) {
  return dot_float_rows(n, LoadBF16{static_cast<const uint16_t*>(w)}, static_cast<const float*>(a));
}
float vec_dot_f16(int64_t n, const void* w, const void* a) {
  return dot_float_rows(n, LoadF16{static_cast<const uint16_t*>(w)}, static_cast<const float*>(a));
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

bool has_dotprod() { return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0; }

}  // namespace

// Advanced SIMD is mandatory on AArch64 Linux; FEAT_DotProd picks the SDOT
// variants of the integer dots, otherwise the widening ARMv8.0 ones.
void register_neon(KernelSet& k) {
  const bool dotprod = has_dotprod();
  k.isa = "neon";
  k.vec_dot[int(GgmlType::F32)] = vec_dot_f32;
  k.vec_dot[int(GgmlType::F16)] = vec_dot_f16;
  k.vec_dot[int(GgmlType::BF16)] = vec_dot_bf16;
  k.vec_dot[int(GgmlType::Q4_0)] = dotprod ? vec_dot_q4_0<DotProd> : vec_dot_q4_0<Widen>;
  k.vec_dot[int(GgmlType::Q8_0)] = dotprod ? vec_dot_q8_0<DotProd> : vec_dot_q8_0<Widen>;
  k.quantize_act[int(GgmlType::Q8_0)] = quantize_q8_0;
  register_q5_neon(k, dotprod);
  register_kquant_neon(k, dotprod);
  register_iq4_neon(k, dotprod);
  register_gemv_neon(k, dotprod);
}

}  // namespace edgellm
