// AVX-512 (BW, VL, VNNI) vec_dot for the K-quant weights q4_K, q5_K and q6_K
// x q8_K activations (the AVX-512 target region). Scalar twins: ref::vec_dot_q{4,5,6}_K_q8_K in
// tensor/quant_k.cpp.
//
// Why: the scalar K-quant dots unpack one element at a time and run ~20x
// slower than the int8 SIMD dots; Q4_K_M / Q5_K_M files are mostly q4_K/q5_K
// with q6_K for ffn_down and the output matrix.
//
// Cost per element (w = weight row, a = activation, 292/256 B of q8_K):
//   vec_dot q4_K x q8_K : 144/256 B of w + 292/256 B of a;  2 int8 MAC ops
//   vec_dot q5_K x q8_K : 176/256 B of w + 292/256 B of a;  2 int8 MAC ops (+2 ops 5th bit)
//   vec_dot q6_K x q8_K : 210/256 B of w + 292/256 B of a;  2 int8 MAC ops (+3 ops unpack)
// plus per 256-element super-block a few dozen ops for the sub-block scales.
//
// The integer core per super-block is kernels/avx512/kquant_avx512.h (shared
// with the decode GEMV). Each super-block's integer sum is exact and is scaled
// with the reference's own float expression; the weights' offset (q6_K's -32,
// the mins of q4_K/q5_K) goes through q8_K's per-16 sums (bsums), which for
// rows from the q8_K quantizer are exactly the sums of its bytes.
// kquant_avx512.h first: it includes simd_avx512.h, which silences GCC 12's
// intrinsic-header warnings before <immintrin.h> is read.
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/kquant_avx512.h"

namespace edgellm {

namespace {

template <class Block>
float vec_dot_k_affine(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const AffineK k;
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const __m128i s = scales_mins_k4(x[i].scales);
    const int32_t summs = mins_dot_bsums(s, y[i].bsums);
    __m512i yq[4];
    load_chunks(y[i], yq);
    const int32_t isum = _mm512_reduce_add_epi32(affine_isum(k, x[i], s, yq));
    sum += y[i].d * half(x[i].d) * float(isum) - y[i].d * half(x[i].dmin) * float(summs);
  }
  return sum;
}

float vec_dot_q6_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const Q6K k;
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    __m512i yq[4];
    load_chunks(y[i], yq);
    const int32_t isum = _mm512_reduce_add_epi32(q6_isum(k, x[i], yq, _mm512_cvtepi16_epi32(load256(y[i].bsums))));
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// q8_K activations, the same bytes as ref::quantize_q8_K: the abs-max by SIMD
// max (exact), the signed value of the first element reaching it (the
// reference's scan order), iscale = -127/max, one float multiply per element,
// vcvtps2dq's round-half-even (= nearest_int), min(127), each bsum the int32
// sum of its 16 bytes (one zmm).
void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    __m512 m = _mm512_setzero_ps();
    for (int c = 0; c < 16; ++c) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + 16 * c)));
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float max = 0;
    for (int c = 0; c < 16; ++c) {
      const __mmask16 hit =
          _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * c)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit) {
        max = x[16 * c + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 vs = _mm512_set1_ps(iscale);
    for (int c = 0; c < 16; ++c) {
      const __m512i q =
          _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * c), vs)), _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16 * c), _mm512_cvtepi32_epi8(q));
      y[i].bsums[c] = int16_t(_mm512_reduce_add_epi32(q));
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace

void register_kquant_avx512(KernelSet& k) {
  k.quantize_act[int(GgmlType::Q8_K)] = quantize_q8_K;
  k.vec_dot[int(GgmlType::Q4_K)] = vec_dot_k_affine<block_q4_K>;
  k.vec_dot[int(GgmlType::Q5_K)] = vec_dot_k_affine<block_q5_K>;
  k.vec_dot[int(GgmlType::Q6_K)] = vec_dot_q6_K;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
