// Helpers shared by the kernels/neon files (all inside an ARMv8.2 dotprod +
// fp16 target region, kernels/neon/isa_begin.h; only the functions the host's hwcaps allow
// are ever called). Internal linkage: only files of this folder may include
// this, and no copy of these may be merged with one built for another ISA.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/neon/simd_neon.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "base/fp16.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

// ---- int8 dots of 16 bytes into 4 int32 lanes --------------------------------

struct DotProd {
  static int32x4_t dot(int32x4_t acc, int8x16_t x, int8x16_t y) { return vdotq_s32(acc, x, y); }
};
struct Widen {
  static int32x4_t dot(int32x4_t acc, int8x16_t x, int8x16_t y) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
    return vpadalq_s16(acc, vmull_high_s8(x, y));
  }
};

// fp16 -> f32 by the FPU (FCVT, base ARMv8: exact for every half, subnormals
// included). base/fp16.h's portable conversion is ~10 scalar instructions and
// two branches; in the quantized dots it ran twice per 32-weight block and
// cost more than the block's SIMD work.
inline float half(uint16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, sizeof v);
  return float(v);
}

// Sum over nb blocks of d_w * d_a * (weights . y[i].qs) with q8_0 or q8_1
// activations; values(block, lo, hi) gives a weight block's 32 signed values
// (elements 0..15 in lo, 16..31 in hi; pass a lambda, which always inlines,
// not a function pointer). Two blocks per iteration in two accumulators,
// so consecutive blocks' dot and FMA chains overlap; each block's int32 lanes
// are scaled by d_w * d_a in float (the reference rounds float(sumi) * d_w *
// d_a the same way, up to the order of the float additions). Affine weights
// (q5_1: a field m) against q8_1 (s = d_a * sum(a)) add m_w * s_a per block,
// as the reference does, into two scalar accumulators of their own.
template <class D, class Block, class Act, class Values>
inline float dot_blocks(const Block* x, const Act* y, int64_t nb, Values values) {
  constexpr bool affine = requires(const Block& b, const Act& a) { b.m; a.s; };
  auto block = [&](int64_t i) {
    int8x16_t lo, hi;
    values(x[i], lo, hi);
    return D::dot(D::dot(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs)), hi, vld1q_s8(y[i].qs + 16));
  };
  float32x4_t acc0 = vdupq_n_f32(0), acc1 = vdupq_n_f32(0);
  float off0 = 0, off1 = 0;
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    const int32x4_t s0 = block(i), s1 = block(i + 1);
    acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(s0), half(x[i].d) * half(y[i].d));
    acc1 = vfmaq_n_f32(acc1, vcvtq_f32_s32(s1), half(x[i + 1].d) * half(y[i + 1].d));
    if constexpr (affine) {
      off0 += half(x[i].m) * half(y[i].s);
      off1 += half(x[i + 1].m) * half(y[i + 1].s);
    }
  }
  for (; i < nb; ++i) {
    acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(block(i)), half(x[i].d) * half(y[i].d));
    if constexpr (affine) off0 += half(x[i].m) * half(y[i].s);
  }
  if constexpr (affine) return vaddvq_f32(vaddq_f32(acc0, acc1)) + (off0 + off1);
  return vaddvq_f32(vaddq_f32(acc0, acc1));
}

// The 32 nibbles of 16 bytes as unsigned bytes: low nibbles (elements
// 0..15) in lo, high nibbles (16..31) in hi. The q4_0/q5_0 layout.
inline void nibbles(const uint8_t* qs, uint8x16_t& lo, uint8x16_t& hi) {
  const uint8x16_t b = vld1q_u8(qs);
  lo = vandq_u8(b, vdupq_n_u8(0x0F));
  hi = vshrq_n_u8(b, 4);
}

// 8 bits of one byte to 8 bytes, 0xFF where set: byte k tests bit k.
inline uint8x8_t bits_to_bytes(uint8_t bits) {
  const uint8x8_t sel = vcreate_u8(0x8040201008040201ull);
  return vtst_u8(vdup_n_u8(bits), sel);
}

// The fifth bits of a 5-bit block (q5_0, q5_1) as bytes, 0xFF where set:
// bit j of the little-endian qh word is element j's bit 4 (elements 0..15 in
// lo, 16..31 in hi).
inline void fifth_bits(const uint8_t* qh, uint8x16_t& lo, uint8x16_t& hi) {
  lo = vcombine_u8(bits_to_bytes(qh[0]), bits_to_bytes(qh[1]));
  hi = vcombine_u8(bits_to_bytes(qh[2]), bits_to_bytes(qh[3]));
}

// q5_0: value q - 16 with q = nibble | bit4 << 4, i.e. the nibble itself if
// its fifth bit is set, else nibble - 16, which as a byte is nibble | 0xF0.
inline void values_q5_0(const block_q5_0& b, int8x16_t& lo, int8x16_t& hi) {
  uint8x16_t l, h, set_lo, set_hi;
  nibbles(b.qs, l, h);
  fifth_bits(b.qh, set_lo, set_hi);
  const uint8x16_t f0 = vdupq_n_u8(0xF0);
  lo = vreinterpretq_s8_u8(vorrq_u8(l, vbicq_u8(f0, set_lo)));
  hi = vreinterpretq_s8_u8(vorrq_u8(h, vbicq_u8(f0, set_hi)));
}

// q5_1: the level q = nibble | bit4 << 4 itself (0..31, so also a valid
// signed byte for the signed dots); the value is d * q + m.
// q5_0 shares the layout: its levels (value q - 16) are these too.
template <class Block5>
inline void levels_q5(const Block5& b, int8x16_t& lo, int8x16_t& hi) {
  uint8x16_t l, h, set_lo, set_hi;
  nibbles(b.qs, l, h);
  fifth_bits(b.qh, set_lo, set_hi);
  const uint8x16_t b4 = vdupq_n_u8(0x10);
  lo = vreinterpretq_s8_u8(vorrq_u8(l, vandq_u8(set_lo, b4)));
  hi = vreinterpretq_s8_u8(vorrq_u8(h, vandq_u8(set_hi, b4)));
}
inline void values_q5_1(const block_q5_1& b, int8x16_t& lo, int8x16_t& hi) { levels_q5(b, lo, hi); }

}  // namespace
}  // namespace edgellm
