// AVX2 + F16C helpers that the kernels/avx2 and kernels/avx512 files both
// use: the f16 scales of four blocks as one float vector (the GEMVs scale four
// blocks' integer sums at once), and for the "rows in lanes" GEMMs the 8 x 8
// dword transpose that packs weight rows into lines and the per-token block
// values. Internal linkage: each
// includer gets its own copy compiled with its own flags.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"

namespace edgellm {
namespace {

// d of blocks x[0..3] as floats.
template <class Block>
inline __m128 scales4(const Block* x) {
  __m128i h = _mm_cvtsi32_si128(x[0].d);
  h = _mm_insert_epi16(h, x[1].d, 1);
  h = _mm_insert_epi16(h, x[2].d, 2);
  h = _mm_insert_epi16(h, x[3].d, 3);
  return _mm_cvtph_ps(h);
}

// Columns of an 8 x 8 matrix of dwords (8 ymm rows): col[j] = dword j of
// rows 0..7. Three rounds of unpacks and 128-bit lane swaps, 24 shuffles.
inline void transpose8x8(const __m256i r[8], __m256i col[8]) {
  __m256i t[8], u[8];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    u[4 * k + 0] = _mm256_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
    u[4 * k + 1] = _mm256_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
    u[4 * k + 2] = _mm256_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
    u[4 * k + 3] = _mm256_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    col[j] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
    col[j + 4] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
  }
}

// Four bytes of an activation block as one int32 (the "rows in lanes"
// GEMMs broadcast them against a weight line).
inline int32_t load32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Per token and block of the q8_0 activations, for the "rows in lanes"
// GEMMs of 32-element blocks: the bias correction -bias * sum(y) and d.
struct TokBlock {
  int32_t corr;
  float d;
};

// Per token and block: -bias * sum(y) (sad of y ^ 0x80 sums y + 128) and d.
inline void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, int bias, TokBlock* out) {
  const __m256i flip = _mm256_set1_epi8(char(0x80));
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* y = reinterpret_cast<const block_q8_0*>(a + size_t(t) * as);
    for (int64_t b = 0; b < nb; ++b) {
      int32_t s = 0;
      if (bias != 0) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
        const __m256i s4 = _mm256_sad_epu8(_mm256_xor_si256(q, flip), _mm256_setzero_si256());
        const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
        s = int32_t(_mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1)) - 128 * QK8_0;
      }
      out[t * nb + b] = TokBlock{-bias * s, _cvtsh_ss(y[b].d)};
    }
  }
}

}  // namespace
}  // namespace edgellm
