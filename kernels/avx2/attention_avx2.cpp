// Attention over an f16 KV cache for a group of query heads that share one KV
// head (GQA), and SwiGLU, with AVX2 + FMA + F16C (also used by the AVX-512
// set). Reference twins: attend_group_reference() (kernels/attention.cpp) and
// swiglu_inplace() (kernels/nn_ops.cpp); tests/test_attention_kernels.cpp.
//
// Per tile of kTile cached positions, the K and V rows are converted to f32
// once for the whole group (qwen2.5-0.5b: 7 query heads per KV head, so 7x
// fewer conversions than per head), then each head takes kTile scores (FMA
// dots), one vector exp over the tile, one rescale of its running sum when
// the tile raises its max, and kTile FMA row updates. Prefill attention of
// a 512-token prompt is ~3 G multiply-adds on qwen2.5-0.5b, and before this
// the scalar expf (one per score, 44 M per prompt) was a third of it.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/attention.h"
#include "kernels/avx2/simd_avx2.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

// e^x, 8 lanes, relative error ~2e-7 on [-87, 88] (Cephes expf: x = n ln2 + r,
// |r| <= ln2/2, degree-6 polynomial for e^r, 2^n through the exponent bits).
// Inputs are clamped to [-87.3, 88.7], so e^x stays finite and normal.
inline __m256 exp256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.7f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

constexpr int64_t kTile = 16;
constexpr int64_t kMaxDim = 256;  // head sizes above this take the reference path

inline void to_f32(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_store_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

inline float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_load_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_load_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_load_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

inline void axpy_f32(float* acc, float w, const float* x, int64_t n) {
  const __m256 wv = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(wv, _mm256_load_ps(x + i), _mm256_loadu_ps(acc + i)));
  for (; i < n; ++i) acc[i] += w * x[i];
}

inline void scale_f32(float* x, float c, int64_t n) {
  const __m256 cv = _mm256_set1_ps(c);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(cv, _mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] *= c;
}

// Rows of the f32 tiles are padded to a multiple of 8 floats (32 B aligned).
constexpr int64_t pad8(int64_t n) { return (n + 7) / 8 * 8; }

void attend_heads(const AttendGroup& g, int h0, int nh) {
  constexpr int kMaxHeads = 16;
  alignas(32) float kt[kTile * kMaxDim], vt[kTile * kMaxDim], w[kTile];
  float m[kMaxHeads], l[kMaxHeads];
  const int64_t kd = pad8(g.head_dim), vd = pad8(g.head_dim_v);
  for (int h = 0; h < nh; ++h) {
    m[h] = -std::numeric_limits<float>::infinity();
    l[h] = 0;
    std::fill_n(g.out + size_t(h0 + h) * g.out_stride, g.head_dim_v, 0.0f);
  }
  for (int64_t s0 = 0; s0 < g.n_kv; s0 += kTile) {
    const int64_t n = std::min(kTile, g.n_kv - s0);
    for (int64_t j = 0; j < n; ++j) {
      to_f32(g.k + size_t(s0 + j) * g.k_stride, kt + j * kd, g.head_dim);
      to_f32(g.v + size_t(s0 + j) * g.v_stride, vt + j * vd, g.head_dim_v);
    }
    for (int h = 0; h < nh; ++h) {
      const float* q = g.q + size_t(h0 + h) * g.q_stride;
      float* acc = g.out + size_t(h0 + h) * g.out_stride;
      float tile_max = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        w[j] = dot_f32(q, kt + j * kd, g.head_dim) * g.scale;
        tile_max = std::max(tile_max, w[j]);
      }
      if (tile_max > m[h]) {  // new running max: rescale what was accumulated so far
        const float c = std::exp(m[h] - tile_max);
        l[h] *= c;
        scale_f32(acc, c, g.head_dim_v);
        m[h] = tile_max;
      }
      for (int64_t j = n; j < kTile; ++j) w[j] = -std::numeric_limits<float>::infinity();
      const __m256 mv = _mm256_set1_ps(m[h]);
      __m256 sum = _mm256_setzero_ps();
      for (int64_t j = 0; j < kTile; j += 8) {
        // Unused slots (-inf) would clamp to e^-87.3, not 0: mask them out.
        const __m256 x = _mm256_loadu_ps(w + j);
        const __m256 unused = _mm256_cmp_ps(x, _mm256_set1_ps(-std::numeric_limits<float>::infinity()), _CMP_EQ_OQ);
        const __m256 p = _mm256_blendv_ps(exp256(_mm256_sub_ps(x, mv)), _mm256_setzero_ps(), unused);
        _mm256_storeu_ps(w + j, p);
        sum = _mm256_add_ps(sum, p);
      }
      l[h] += hsum(sum);
      for (int64_t j = 0; j < n; ++j) axpy_f32(acc, w[j], vt + j * vd, g.head_dim_v);
    }
  }
  for (int h = 0; h < nh; ++h) scale_f32(g.out + size_t(h0 + h) * g.out_stride, 1.0f / l[h], g.head_dim_v);
}

void attend_group_f16(const AttendGroup& g) {
  if (g.head_dim > kMaxDim || g.head_dim_v > kMaxDim) {
    attend_group_reference(g);
    return;
  }
  for (int h0 = 0; h0 < g.nq; h0 += 16) attend_heads(g, h0, std::min(16, g.nq - h0));
}

void swiglu(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace

void register_attention_avx2(KernelSet& k) {
  k.attend_group_f16 = attend_group_f16;
  k.swiglu = swiglu;
}

}  // namespace edgellm
