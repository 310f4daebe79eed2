// Attention rows over an f16 KV cache with F16C + FMA: 8 halves per
// _mm256_cvtph_ps, one FMA each. Per cached position and head this moves
// 2*head_dim bytes of K (and of V) and does head_dim multiply-adds, so decode
// attention is bound by how fast the cache streams, like the weights.
#include <immintrin.h>

#include "base/fp16.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

float kv_dot_f16(const float* q, const uint16_t* k, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(k + i))), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(k + i + 8))), a1);
  }
  for (; i + 8 <= n; i += 8)
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(k + i))), a0);
  float s = hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += q[i] * fp16_to_f32(k[i]);
  return s;
}

void kv_axpy_f16(float* acc, float w, const uint16_t* v, int64_t n) {
  const __m256 wv = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(v + i)));
    _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(wv, x, _mm256_loadu_ps(acc + i)));
  }
  for (; i < n; ++i) acc[i] += w * fp16_to_f32(v[i]);
}

}  // namespace

void register_kv_avx2(KernelSet& k) {
  k.kv_dot_f16 = kv_dot_f16;
  k.kv_axpy_f16 = kv_axpy_f16;
}

}  // namespace edgellm
