// AVX2 + FMA + F16C row kernels (compiled with -mavx2 -mfma -mf16c; only
// called when cpu_features().can_run_avx2()). Each has a scalar twin in
// tensor/ (tests/test_kernels.cpp compares them on every host that can run
// this set).
//
// Cost per element, stated as DESIGN.md asks (w = weight row, a = activation):
//   vec_dot q8_0 x q8_0 : 34/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q4_0 x q8_0 : 18/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot f16 x f32   : 2 B of w + 4 B of a;           2 FLOPs
//   vec_dot f32 x f32   : 4 B of w + 4 B of a;           2 FLOPs
//   quantize q8_0       : 4 B read + 34/32 B written;    ~4 FLOPs (abs-max, scale, round)
// In decode the activation row stays in L1/L2 across all rows of a matrix, so
// the bytes that bound the speed are the weight bytes (DRAM traffic).
#include <immintrin.h>

#include <cstring>

#include <cmath>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/avx2/simd_avx2.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

inline double hsum(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

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

// Float dots: 4 independent 8-lane FMA chains (covers the 4-cycle FMA latency
// at 2 FMAs/cycle with 8 of 16 ymm registers to spare for loads). The
// reference accumulates in double; to stay well inside its tolerance at any
// n, the float partial sums are flushed into double every kChunk elements, so
// each float lane sums at most kChunk/32 = 8 products.
constexpr int64_t kChunk = 256;

inline void flush(__m256 s, __m256d& d0, __m256d& d1) {
  d0 = _mm256_add_pd(d0, _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
  d1 = _mm256_add_pd(d1, _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
}

// Load supplies load8(i) (8 weights as floats) and load1(i) (one weight).
template <class Load>
inline float dot_float(int64_t n, const Load& w, const float* xa) {
  __m256d d0 = _mm256_setzero_pd(), d1 = _mm256_setzero_pd();
  int64_t i = 0;
  while (i + 32 <= n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    const int64_t end = (n - i >= kChunk) ? i + kChunk : i + (n - i) / 32 * 32;
    for (; i < end; i += 32) {
      s0 = _mm256_fmadd_ps(w.load8(i), _mm256_loadu_ps(xa + i), s0);
      s1 = _mm256_fmadd_ps(w.load8(i + 8), _mm256_loadu_ps(xa + i + 8), s1);
      s2 = _mm256_fmadd_ps(w.load8(i + 16), _mm256_loadu_ps(xa + i + 16), s2);
      s3 = _mm256_fmadd_ps(w.load8(i + 24), _mm256_loadu_ps(xa + i + 24), s3);
    }
    flush(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)), d0, d1);
  }
  __m256 s = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) s = _mm256_fmadd_ps(w.load8(i), _mm256_loadu_ps(xa + i), s);
  flush(s, d0, d1);
  double sum = hsum(_mm256_add_pd(d0, d1));
  for (; i < n; ++i) sum += double(w.load1(i)) * double(xa[i]);
  return float(sum);
}

struct F32Row {
  const float* p;
  __m256 load8(int64_t i) const { return _mm256_loadu_ps(p + i); }
  float load1(int64_t i) const { return p[i]; }
};
struct F16Row {
  const uint16_t* p;
  __m256 load8(int64_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
  }
  float load1(int64_t i) const { return half(p[i]); }
};

// bf16 is the upper half of an f32: widening is a zero-extend and a shift, exact.
struct BF16Row {
  const uint16_t* p;
  __m256 load8(int64_t i) const {
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
  }
  float load1(int64_t i) const { return bf16_to_f32(p[i]); }
};

float vec_dot_f32(int64_t n, const void* w, const void* a) {
  return dot_float(n, F32Row{static_cast<const float*>(w)}, static_cast<const float*>(a));
}

float vec_dot_bf16(int64_t n, const void* w, const void* a) {
  return dot_float(n, BF16Row{static_cast<const uint16_t*>(w)}, static_cast<const float*>(a));
}

float vec_dot_f16(int64_t n, const void* w, const void* a) {
  return dot_float(n, F16Row{static_cast<const uint16_t*>(w)}, static_cast<const float*>(a));
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

void register_avx2(KernelSet& k) {
  k.isa = "avx2";
  k.vec_dot[int(GgmlType::F32)] = vec_dot_f32;
  k.vec_dot[int(GgmlType::F16)] = vec_dot_f16;
  k.vec_dot[int(GgmlType::BF16)] = vec_dot_bf16;
  k.vec_dot[int(GgmlType::Q4_0)] = vec_dot_q4_0;
  k.vec_dot[int(GgmlType::Q8_0)] = vec_dot_q8_0;
  k.quantize_act[int(GgmlType::Q8_0)] = quantize_q8_0;
  register_q5_avx2(k);
  register_kquant_avx2(k);
  register_iq4_avx2(k);
}

}  // namespace edgellm
