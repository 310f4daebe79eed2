// AVX2 vec_dot for the K-quant weights q4_K, q5_K and q6_K x q8_K activations
// (the AVX2 target region). Scalar
// twins: ref::vec_dot_q{4,5,6}_K_q8_K in tensor/quant_k.cpp.
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
// Exactness: each super-block's integer sum is computed exactly in int32
// lanes (maddubs of unsigned weight levels 0..63 with the signed q8_K bytes
// cannot saturate: 2*63*128 < 32767), reduced to one int, and then scaled and
// accumulated in float with the reference's own expression and order (the
// result differs from it only where the compiler fuses that multiply-add into
// an FMA here: in the last bit). The weights' offset (q6_K's -32,
// q4_K/q5_K's mins) is applied through q8_K's per-16 sums (bsums) instead of
// per element; for q8_K rows from the quantizer bsums are exactly those sums.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/kquant_avx2.h"
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {

template <class Block>
float vec_dot_k_affine(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const __m128i s = scales_mins_k4(x[i].scales);
    const int32_t summs = mins_dot_bsums(s, y[i].bsums);
    const int32_t isum = hsum_i32(affine_isum(x[i], s, y[i]));
    sum += y[i].d * half(x[i].d) * float(isum) - y[i].d * half(x[i].dmin) * float(summs);
  }
  return sum;
}

float vec_dot_q6_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) sum += half(x[i].d) * y[i].d * float(hsum_i32(q6_isum(x[i], y[i])));
  return sum;
}

// q8_K activations, the same bytes as ref::quantize_q8_K: the abs-max by SIMD
// max (exact), the signed value of the first element reaching it (the
// reference's scan order), iscale = -127/max, one float multiply per element,
// vcvtps2dq's round-half-even (= nearest_int), min(127); each bsum the int32
// sum of its 16 values. 32 values at a time are packed to bytes with two
// saturating packs (exact: all in -127..127) and one lane permute.
void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int c = 0; c < 32; ++c) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * c)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float max = 0;
    for (int c = 0; c < 32; ++c) {
      const int hit = _mm256_movemask_ps(
          _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * c)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
      if (hit) {
        max = x[8 * c + __builtin_ctz(unsigned(hit))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m256 vs = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int c = 0; c < 8; ++c) {  // 32 values: bsums 2c, 2c + 1
      __m256i q[4];
      for (int v = 0; v < 4; ++v)
        q[v] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * c + 8 * v), vs)), top);
      y[i].bsums[2 * c] = int16_t(hsum_i32(_mm256_add_epi32(q[0], q[1])));
      y[i].bsums[2 * c + 1] = int16_t(hsum_i32(_mm256_add_epi32(q[2], q[3])));
      const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + 32 * c), _mm256_permutevar8x32_epi32(b, order));
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace

void register_kquant_avx2(KernelSet& k) {
  k.quantize_act[int(GgmlType::Q8_K)] = quantize_q8_K;
  k.vec_dot[int(GgmlType::Q4_K)] = vec_dot_k_affine<block_q4_K>;
  k.vec_dot[int(GgmlType::Q5_K)] = vec_dot_k_affine<block_q5_K>;
  k.vec_dot[int(GgmlType::Q6_K)] = vec_dot_q6_K;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
