// Integer scores of quantized key rows and the widening of cache rows for
// kernels/attention_tile.h on x86 (Isa::kq_scores, Isa::row_to_f32), shared by kernels/avx2/attention_avx2.cpp
// (maddubs + madd, AVX2) and kernels/avx512/attention_avx512.cpp (VNNI
// vpdpbusd at 256 bits: a key block is one 32-byte register, and the 512-bit
// form would pair blocks of different query rows for no gain at
// head sizes of 64..128). Internal linkage: each includer gets its own copy
// compiled for its own target region.
//
// Per key and 32 elements: 34 (q8_0) or 18 (q4_0) bytes of the cached row
// (f16: 64), read from memory once per call, from L1 for the other query
// rows; per query row 1 sign + 1 (VNNI) or 2 int8 multiply-adds, 1 convert,
// 1 mul, 1 FMA, where the f16 path widens the row and spends 32 FMA lanes
// per row.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx2/attention_kv_x86.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/types.h"

namespace edgellm {
namespace {

struct X86Half {
  static float h2f(uint16_t h) { return _cvtsh_ss(h); }
  // 8 halves widened in a register (keys read in place).
  static __m256 half_vec(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void half_to_float(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, half_vec(src + i));
    for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
  }
};

// Key block b of a row of type KT as 32 signed int8 (q4_0: q - 8, element j
// from the low nibble of qs[j], j + 16 from the high one) and its scale.
template <GgmlType KT>
inline __m256i key_block(const uint8_t* row, int64_t b, float* d) {
  if constexpr (KT == GgmlType::Q8_0) {
    const auto& k = reinterpret_cast<const block_q8_0*>(row)[b];
    *d = _cvtsh_ss(k.d);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.qs));
  } else {
    const auto& k = reinterpret_cast<const block_q4_0*>(row)[b];
    *d = _cvtsh_ss(k.d);
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k.qs));
    const __m256i n = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(15));
    return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
  }
}

// 8 int32 partial sums of x * y over 32 int8 pairs. |x| <= 127 (never -128:
// the quantizers map to +-127), so |x| fits u8 and maddubs cannot saturate
// (2 * 127 * 127 < 32767).
template <bool kVnni>
inline __m256i dot_i8(__m256i ax, __m256i sy) {
  if constexpr (kVnni) return _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
  else return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// Scores of 4 keys x NR query rows: out[j * ldo + r] = scale *
// vec_dot(key j, qq + r * nb). The 4 x NR sums stay in 8-lane float
// accumulators across the blocks and are reduced together at the end (3
// hadds per row for 4 keys instead of a horizontal sum per key). Per (key,
// row, block): 1 sign, 1 (VNNI) or 2 int8 multiply-adds, 1 convert, 1 mul,
// 1 FMA; the key block is loaded (and unpacked) once for the NR rows.
template <GgmlType KT, bool kVnni, int NR>
inline void kq_tile(const uint8_t* const* keys, const block_q8_0* qq, int64_t nb, float scale, float* out, int nk,
                    size_t ldo) {
  __m256 acc[NR][4];
  for (int r = 0; r < NR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i x[4], ax[4];
    __m256 dk[4];
    for (int j = 0; j < 4; ++j) {
      float d;
      x[j] = key_block<KT>(keys[j], b, &d);
      ax[j] = _mm256_sign_epi8(x[j], x[j]);
      dk[j] = _mm256_set1_ps(d);
    }
    for (int r = 0; r < NR; ++r) {
      const block_q8_0& q = qq[r * nb + b];
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.qs));
      const __m256 dq = _mm256_set1_ps(_cvtsh_ss(q.d));
      for (int j = 0; j < 4; ++j) {
        const __m256i sy = _mm256_sign_epi8(y, x[j]);
        acc[r][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_i8<kVnni>(ax[j], sy)), _mm256_mul_ps(dk[j], dq), acc[r][j]);
      }
    }
  }
  const __m128 sc = _mm_set1_ps(scale);
  for (int r = 0; r < NR; ++r) {
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(acc[r][0], acc[r][1]), _mm256_hadd_ps(acc[r][2], acc[r][3]));
    alignas(16) float s4[4];
    _mm_store_ps(s4, _mm_mul_ps(_mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)), sc));
    for (int j = 0; j < nk; ++j) out[size_t(j) * ldo + size_t(r)] = s4[j];
  }
}

template <GgmlType KT, bool kVnni>
inline void kq_scores_t(const uint8_t* k, size_t k_stride, int nk, const block_q8_0* qq, int64_t nb, int nr,
                        float scale, float* out, size_t ldo) {
  for (int j0 = 0; j0 < nk; j0 += 4) {
    const int n = nk - j0 < 4 ? nk - j0 : 4;
    const uint8_t* keys[4];
    for (int j = 0; j < 4; ++j) keys[j] = k + size_t(j0 + (j < n ? j : 0)) * k_stride;  // tail: repeat key 0, not stored
    float* o = out + size_t(j0) * ldo;
    int r = 0;
    for (; r + 2 <= nr; r += 2) kq_tile<KT, kVnni, 2>(keys, qq + r * nb, nb, scale, o + r, n, ldo);
    if (r < nr) kq_tile<KT, kVnni, 1>(keys, qq + r * nb, nb, scale, o + r, n, ldo);
  }
}

// One cache row of n elements widened to f32: q8_0 / q4_0 block by block
// (float(q) * d, as dequantize_row), f16 by F16C.
inline void row_to_f32_x86(GgmlType t, const uint8_t* src, float* dst, int64_t n) {
  if (t == GgmlType::F16) {
    X86Half::half_to_float(reinterpret_cast<const uint16_t*>(src), dst, n);
  } else if (t == GgmlType::Q8_0) {
    const auto* b = reinterpret_cast<const block_q8_0*>(src);
    for (int64_t i = 0; i < n / QK8_0; ++i, dst += QK8_0) {
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
      for (int c = 0; c < QK8_0; c += 8) {
        const __m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b[i].qs + c)));
        _mm256_storeu_ps(dst + c, _mm256_mul_ps(_mm256_cvtepi32_ps(x), d));
      }
    }
  } else {
    const auto* b = reinterpret_cast<const block_q4_0*>(src);
    const __m128i m4 = _mm_set1_epi8(15), e8 = _mm_set1_epi8(8);
    for (int64_t i = 0; i < n / QK4_0; ++i, dst += QK4_0) {
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
      const __m128i lo = _mm_sub_epi8(_mm_and_si128(q, m4), e8);
      const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), m4), e8);
      const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
      for (int c = 0; c < 4; ++c)
        _mm256_storeu_ps(dst + 8 * c, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[c])), d));
    }
  }
}

template <bool kVnni>
struct X86Kv : X86Half {
  static void kq_scores(GgmlType kt, const uint8_t* k, size_t k_stride, int nk, const block_q8_0* qq, int64_t nb,
                        int nr, float scale, float* out, size_t ldo) {
    if (kt == GgmlType::Q8_0) kq_scores_t<GgmlType::Q8_0, kVnni>(k, k_stride, nk, qq, nb, nr, scale, out, ldo);
    else kq_scores_t<GgmlType::Q4_0, kVnni>(k, k_stride, nk, qq, nb, nr, scale, out, ldo);
  }
  static void row_to_f32(GgmlType t, const uint8_t* src, float* dst, int64_t n) { row_to_f32_x86(t, src, dst, n); }
};

}  // namespace
}  // namespace edgellm
