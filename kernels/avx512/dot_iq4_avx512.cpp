// AVX-512 (BW, VL, VNNI) vec_dot for the non-linear 4-bit weights iq4_nl x
// q8_0 and iq4_xs x q8_K activations (the AVX-512 target region). Scalar twins: ref::vec_dot_iq4_nl_q8_0 and
// ref::vec_dot_iq4_xs_q8_K in tensor/quant_iq4.cpp.
//
// Two blocks of 32 per zmm: their nibbles are turned into signed grid values
// by a vpshufb against kvalues_iq4nl (values_iq4, simd_avx512.h), then dotted
// with the activations by dot_s8s8 (two vpdpbusd, exact for any byte).
//
// Cost per element (w = weight row, a = activation):
//   vec_dot iq4_nl x q8_0 : 18/32 B of w + 34/32 B of a;    2 int8 MAC ops (+1 shuffle per 32)
//   vec_dot iq4_xs x q8_K : 136/256 B of w + 292/256 B of a; 2 int8 MAC ops (+1 shuffle per 32, 1 vpmulld per 64)
// Bandwidth-bound in decode, as q4_0 (~0.55 B of weights per MAC).
//
// iq4_xs: each pair of sub-blocks' int32 lanes are multiplied by their 6-bit
// scales (-32..31; |lane| <= 4*127*127, so no overflow) and the super-block
// is summed exactly in int32 before the reference's float expression.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read.
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"

namespace edgellm {

namespace {

float vec_dot_iq4_nl(int64_t n, const void* w, const void* a) {
  return dot_pairs(static_cast<const block_iq4_nl*>(w), static_cast<const block_q8_0*>(a), n / 32,
                   [](const block_iq4_nl& b0, const block_iq4_nl& b1, __m512i y) {
                     return dot_s8s8(join(values_iq4(b0.qs), values_iq4(b1.qs)), y);
                   });
}

float vec_dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_iq4_xs*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    __m512i acc = _mm512_setzero_si512();
    for (int j = 0; j < 8; j += 2) {
      const __m512i v = join(values_iq4(x[i].qs + 16 * j), values_iq4(x[i].qs + 16 * j + 16));
      const __m512i d = dot_s8s8(v, load512(y[i].qs + 32 * j));
      const __m512i s = _mm512_mask_blend_epi32(__mmask16(0xFF00), _mm512_set1_epi32(iq4xs_scale(x[i], j) - 32),
                                                _mm512_set1_epi32(iq4xs_scale(x[i], j + 1) - 32));
      acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d, s));
    }
    const int32_t isum = _mm512_reduce_add_epi32(acc);
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

}  // namespace

void register_iq4_avx512(KernelSet& k) {
  k.vec_dot[int(GgmlType::IQ4_NL)] = vec_dot_iq4_nl;
  k.vec_dot[int(GgmlType::IQ4_XS)] = vec_dot_iq4_xs;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
