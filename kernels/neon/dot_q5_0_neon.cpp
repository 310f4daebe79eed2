// NEON vec_dot for q5_0 weights x q8_0 activations (this folder's flags;
// registered by register_neon, SDOT variant where hwcaps report dotprod,
// else the ARMv8.0 widening one). Scalar twin: ref::vec_dot_q5_0_q8_0 in
// tensor/quant_legacy.cpp.
//
// Why: llama.cpp's Q4_K_M files store every tensor whose rows are not a
// multiple of 256 (all of qwen2.5-0.5b's 896-wide ones) as q5_0, so on such
// models q5_0 is most of the weight bytes.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot q5_0 x q8_0 : 22/32 B of w + 34/32 B of a;  2 int8 MAC ops
//                         (+ ~8 ops per 32 to spread the fifth bits to bytes)
#include <arm_neon.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/neon/simd_neon.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

// 8 bits of one byte to 8 bytes, 0xFF where set: byte k tests bit k.
inline uint8x8_t bits_to_bytes(uint8_t bits) {
  const uint8x8_t sel = vcreate_u8(0x8040201008040201ull);
  return vtst_u8(vdup_n_u8(bits), sel);
}

// q5_0: value q - 16 with q = nibble | bit4 << 4, i.e. the nibble itself if
// its fifth bit (bit j of qh for element j) is set, else nibble - 16, which as
// a byte is nibble | 0xF0.
inline void values_q5_0(const block_q5_0& b, int8x16_t& lo, int8x16_t& hi) {
  uint8x16_t l, h;
  nibbles(b.qs, l, h);
  const uint8x16_t f0 = vdupq_n_u8(0xF0);
  const uint8x16_t set_lo = vcombine_u8(bits_to_bytes(b.qh[0]), bits_to_bytes(b.qh[1]));
  const uint8x16_t set_hi = vcombine_u8(bits_to_bytes(b.qh[2]), bits_to_bytes(b.qh[3]));
  lo = vreinterpretq_s8_u8(vorrq_u8(l, vbicq_u8(f0, set_lo)));
  hi = vreinterpretq_s8_u8(vorrq_u8(h, vbicq_u8(f0, set_hi)));
}

template <class D>
float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_blocks_q8_0<D>(static_cast<const block_q5_0*>(w), static_cast<const block_q8_0*>(a), n / QK5_0,
                            [](const block_q5_0& b, int8x16_t& lo, int8x16_t& hi) { values_q5_0(b, lo, hi); });
}

}  // namespace

void register_q5_0_neon(KernelSet& k, bool dotprod) {
  k.vec_dot[int(GgmlType::Q5_0)] = dotprod ? vec_dot_q5_0<DotProd> : vec_dot_q5_0<Widen>;
}

}  // namespace edgellm
