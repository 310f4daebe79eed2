// AVX2 vec_dot for the non-linear 4-bit weights iq4_nl x q8_0 and iq4_xs x
// q8_K activations (the AVX2 target region). Scalar twins: ref::vec_dot_iq4_nl_q8_0 and
// ref::vec_dot_iq4_xs_q8_K in tensor/quant_iq4.cpp.
//
// The 16-entry grid kvalues_iq4nl fits one 128-bit register, so a nibble
// becomes its signed grid value with one vpshufb per 32 weights (the table
// sits in both 128-bit lanes); from there it is q8_0's int8 dot.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot iq4_nl x q8_0 : 18/32 B of w + 34/32 B of a;    2 int8 MAC ops (+1 shuffle per 32)
//   vec_dot iq4_xs x q8_K : 136/256 B of w + 292/256 B of a; 2 int8 MAC ops (+1 shuffle per 32)
// Decode reads ~0.53-0.56 B of weights per MAC, so like q4_0 these are
// bandwidth-bound; the lookup is hidden under the loads.
//
// Exactness: grid values are in -127..113 and activations in -127..127, so
// maddubs(|w|, a * sign(w)) pairs sum to at most 2*127*127 = 32258 (no int16
// saturation). iq4_xs multiplies those int16 pairs by its sub-block scale
// (-32..31) in the same vpmaddwd that widens them, and sums the super-block
// exactly in int32 before the reference's float expression.
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {

float vec_dot_iq4_nl(int64_t n, const void* w, const void* a) {
  return dot_blocks_q8_0(static_cast<const block_iq4_nl*>(w), static_cast<const block_q8_0*>(a), n / 32,
                         [](const block_iq4_nl& b) { return values_iq4(b.qs); });
}

float vec_dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_iq4_xs*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    // Two accumulators: the even and odd sub-blocks' chains overlap.
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    for (int j = 0; j < 8; j += 2) {
      const __m256i v0 = values_iq4(x[i].qs + 16 * j), v1 = values_iq4(x[i].qs + 16 * j + 16);
      const __m256i y0 = load256(y[i].qs + 32 * j), y1 = load256(y[i].qs + 32 * j + 32);
      const __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(v0, v0), _mm256_sign_epi8(y0, v0));
      const __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(v1, v1), _mm256_sign_epi8(y1, v1));
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, _mm256_set1_epi16(short(iq4xs_scale(x[i], j) - 32))));
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(p1, _mm256_set1_epi16(short(iq4xs_scale(x[i], j + 1) - 32))));
    }
    const int32_t isum = hsum_i32(_mm256_add_epi32(acc0, acc1));
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

}  // namespace

void register_iq4_avx2(KernelSet& k) {
  k.vec_dot[int(GgmlType::IQ4_NL)] = vec_dot_iq4_nl;
  k.vec_dot[int(GgmlType::IQ4_XS)] = vec_dot_iq4_xs;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
