// AVX2 + FMA + F16C row kernels (kernels/avx2/isa_begin.h's region; only
// called when cpu_features().can_run_avx2()). Each has a scalar twin in
// tensor/ (tests/test_kernels.cpp compares them on every host that can run
// this set).
//
// Cost per element, stated as DESIGN.md asks (w = weight row, a = activation):
//   vec_dot q8_0 x q8_0 : 34/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q4_0 x q8_0 : 18/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   quantize q8_0       : 4 B read + 34/32 B written;    ~4 FLOPs (abs-max, scale, round)
// In decode the activation row stays in L1/L2 across all rows of a matrix, so
// the bytes that bound the speed are the weight bytes (DRAM traffic).
#include <immintrin.h>

#include <cstring>

#include <cmath>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {

// The 32 q4_0 values of a block as signed bytes q-8 in element order.
inline __m256i values_q4_0(const block_q4_0& b) {
  return _mm256_sub_epi8(nibbles(b.qs), _mm256_set1_epi8(8));
}

float vec_dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_blocks_q8_0(static_cast<const block_q8_0*>(w), static_cast<const block_q8_0*>(a), n / QK8_0,
                         [](const block_q8_0& b) { return load256(b.qs); });
}

float vec_dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_blocks_q8_0(static_cast<const block_q4_0*>(w), static_cast<const block_q8_0*>(a), n / QK4_0,
                         [](const block_q4_0& b) { return values_q4_0(b); });
}

// roundf semantics (half away from zero) for |v| < 2^23: truncate, then step
// one away from zero when the dropped fraction is >= 0.5. v - trunc(v) is
// exact, so this is bit-identical to std::roundf (the reference quantizer),
// unlike _MM_FROUND_TO_NEAREST_INT, which rounds ties to even.
inline __m256 round_half_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 sign = _mm256_and_ps(v, _mm256_set1_ps(-0.0f));
  const __m256 frac = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(v, t));
  const __m256 step = _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ),
                                    _mm256_or_ps(sign, _mm256_set1_ps(1.0f)));
  return _mm256_add_ps(t, step);
}

// Same bytes as ref::quantize_q8_0: amax by SIMD max (exact), d = amax/127 and
// id = 1/d in scalar float exactly as the reference, q = roundf(x*id) (one
// float multiply, no FMA, then the exact rounding above), d stored via the
// same f32_to_fp16.
void quantize_q8_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_0*>(dst);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / QK8_0; ++i, src += QK8_0) {
    const __m256 v0 = _mm256_loadu_ps(src), v1 = _mm256_loadu_ps(src + 8);
    const __m256 v2 = _mm256_loadu_ps(src + 16), v3 = _mm256_loadu_ps(src + 24);
    __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, abs_mask), _mm256_and_ps(v1, abs_mask)),
                             _mm256_max_ps(_mm256_and_ps(v2, abs_mask), _mm256_and_ps(v3, abs_mask)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    const __m256 vid = _mm256_set1_ps(id);
    const __m256i q0 = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v0, vid)));
    const __m256i q1 = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v1, vid)));
    const __m256i q2 = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v2, vid)));
    const __m256i q3 = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v3, vid)));
    // Packs interleave 128-bit lanes; the final permute restores element order.
    const __m256i q01 = _mm256_packs_epi32(q0, q1), q23 = _mm256_packs_epi32(q2, q3);
    const __m256i q = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(q01, q23),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), q);
  }
}

}  // namespace

void register_dot_avx2(KernelSet& k) {
  k.vec_dot[int(GgmlType::Q4_0)] = vec_dot_q4_0;
  k.vec_dot[int(GgmlType::Q8_0)] = vec_dot_q8_0;
  k.quantize_act[int(GgmlType::Q8_0)] = quantize_q8_0;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
