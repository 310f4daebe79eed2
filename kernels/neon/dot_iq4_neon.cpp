// NEON vec_dot for the non-linear 4-bit weights iq4_nl x q8_0 and iq4_xs x
// q8_K activations (the NEON target region; registered by register_iq4_neon, SDOT
// variant where the CPU has FEAT_DotProd, else the ARMv8.0 widening one).
// Scalar twins: ref::vec_dot_iq4_nl_q8_0 and ref::vec_dot_iq4_xs_q8_K in
// tensor/quant_iq4.cpp.
//
// The 16-entry grid kvalues_iq4nl is one q register, so a nibble becomes its
// signed grid value with one TBL per 16 weights; from there it is q8_0's
// int8 dot.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot iq4_nl x q8_0 : 18/32 B of w + 34/32 B of a;    2 int8 MAC ops (+1 TBL per 16)
//   vec_dot iq4_xs x q8_K : 136/256 B of w + 292/256 B of a; 2 int8 MAC ops (+1 TBL per 16)
// Bandwidth-bound in decode, as q4_0 (~0.55 B of weights per MAC).
//
// Exactness: products of grid values (-127..113) and activations (-127..127)
// fit int16 (widening path) and int32 lanes hold any block's sums; iq4_xs
// scales each sub-block's int32 lanes by its 6-bit scale (-32..31) and sums
// the super-block exactly before the reference's float expression.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

// 32 weights packed as in iq4_nl (16 bytes) as signed grid values: elements
// 0..15 in lo, 16..31 in hi.
inline void values_iq4(int8x16_t table, const uint8_t* qs, int8x16_t& lo, int8x16_t& hi) {
  uint8x16_t l, h;
  nibbles(qs, l, h);
  lo = vqtbl1q_s8(table, l);
  hi = vqtbl1q_s8(table, h);
}

template <class D>
float vec_dot_iq4_nl(int64_t n, const void* w, const void* a) {
  const int8x16_t table = vld1q_s8(kvalues_iq4nl);
  return dot_blocks<D>(static_cast<const block_iq4_nl*>(w), static_cast<const block_q8_0*>(a), n / 32,
                       [table](const block_iq4_nl& b, int8x16_t& lo, int8x16_t& hi) {
                         values_iq4(table, b.qs, lo, hi);
                       });
}

template <class D>
float vec_dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_iq4_xs*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const int8x16_t table = vld1q_s8(kvalues_iq4nl);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    // Two accumulators: the even and odd sub-blocks' chains overlap.
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int j = 0; j < 8; j += 2) {
      int8x16_t l0, h0, l1, h1;
      values_iq4(table, x[i].qs + 16 * j, l0, h0);
      values_iq4(table, x[i].qs + 16 * j + 16, l1, h1);
      const int8_t* q8 = y[i].qs + 32 * j;
      const int32x4_t d0 = D::dot(D::dot(vdupq_n_s32(0), l0, vld1q_s8(q8)), h0, vld1q_s8(q8 + 16));
      const int32x4_t d1 = D::dot(D::dot(vdupq_n_s32(0), l1, vld1q_s8(q8 + 32)), h1, vld1q_s8(q8 + 48));
      acc0 = vmlaq_n_s32(acc0, d0, iq4xs_scale(x[i], j) - 32);
      acc1 = vmlaq_n_s32(acc1, d1, iq4xs_scale(x[i], j + 1) - 32);
    }
    const int32_t isum = vaddvq_s32(vaddq_s32(acc0, acc1));
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

}  // namespace

void register_iq4_neon(KernelSet& k) {
  const bool dotprod = cpu_features().dotprod;
  k.vec_dot[int(GgmlType::IQ4_NL)] = dotprod ? vec_dot_iq4_nl<DotProd> : vec_dot_iq4_nl<Widen>;
  k.vec_dot[int(GgmlType::IQ4_XS)] = dotprod ? vec_dot_iq4_xs<DotProd> : vec_dot_iq4_xs<Widen>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
