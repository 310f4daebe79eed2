// AVX2 + F16C helpers that the kernels/avx2 and kernels/avx512 files both
// use: the f16 scales of four blocks as one float vector (the GEMVs scale four
// blocks' integer sums at once), and for the "rows in lanes" GEMMs the 8 x 8
// dword transpose that packs weight rows into lines, the per-token block
// values and the K-quant levels; and the q4_K/q5_K min term. Internal linkage: each
// includer gets its own copy compiled for its own target region.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx2/shared_x86.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

// m_j * (bsums[2j] + bsums[2j+1]) over the 8 sub-blocks of 32, summed in
// pairs into 4 int32 lanes (mins_bsums4) or in all (mins_dot_bsums): the min
// term of a q4_K/q5_K x q8_K super-block. Pair sums (|.| <= 4064) by hadd.
// sm: scales_mins_k4's register (the mins in its high 8 bytes).
inline __m128i mins_bsums4(__m128i sm, const int16_t* bsums) {
  const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8)));
  return _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm)), bs);
}
inline int32_t mins_dot_bsums(__m128i sm, const int16_t* bsums) {
  __m128i v = mins_bsums4(sm, bsums);
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(v);
}

// unpack_scales_mins_k4 (kernels/kquant_scales.h, its scalar twin) in one
// register: bytes 0..7 the 8 sub-block scales, 8..15 the 8 mins. 9 vector
// ops on the 12 packed bytes, against ~25 scalar ones and a store and reload
// through the stack per super-block in the decode GEMV's loop.
inline __m128i scales_mins_k4(const uint8_t* packed) {
  uint32_t a2;
  std::memcpy(&a2, packed + 8, 4);
  const __m128i a = _mm_insert_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed)), int(a2), 2);
  const __m128i p = _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 1, 2, 0));  // a0 a2 a1 a2
  const __m128i q = _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 1, 0, 0));  // a0 a0 a1 a1
  const __m128i lo6 = _mm_and_si128(p, _mm_set1_epi32(0x3f3f3f3f));  // lanes 0, 2: scales 0..3, mins 0..3
  const __m128i nib = _mm_and_si128(_mm_srlv_epi32(p, _mm_setr_epi32(0, 0, 0, 4)), _mm_set1_epi32(0x0f0f0f0f));
  const __m128i top = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(q, 6), _mm_set1_epi32(0x03030303)), 4);
  return _mm_blend_epi32(lo6, _mm_or_si128(nib, top), 0b1010);  // lanes 1, 3: scales 4..7, mins 4..7
}

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

// Weight rows per "rows in lanes" AVX2 tile: one per int32 lane of a ymm.
constexpr int kRows8 = 8;

// Four activation bytes broadcast to every int32 lane (one per weight row).
inline __m256i bcast4(const int8_t* p) { return _mm256_set1_epi32(load32(p)); }

// Keeps a running integer sum a chain: GCC otherwise re-associates a block's
// integer adds into a tree whose 4 x 8 products outnumber the 16 registers
// (the compiled q4_0 GEMM loop spilled every product to the stack: 290 -> 430
// tok/s pp512 on the 0.5B with the chain).
inline void in_register(__m256i& v) { asm("" : "+x"(v)); }

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

// A "rows in lanes" micro-tile of 8 rows x C tokens (AVX2): the float
// accumulators (zeroed), the C activation rows, and the store of each
// token's 8 results, R of them real rows.
template <class Block, int C>
struct TileState8 {
  __m256 acc[C];
  const Block* act[C];
  TileState8(const uint8_t* a, size_t as) {
    for (int c = 0; c < C; ++c) {
      acc[c] = _mm256_setzero_ps();
      act[c] = reinterpret_cast<const Block*>(a + size_t(c) * as);
    }
  }
  void store(int R, float* y, size_t ldy) const {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(R), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int c = 0; c < C; ++c) _mm256_maskstore_ps(y + size_t(c) * ldy, mask, acc[c]);
  }
};

// Levels of sub-blocks 2p (low nibbles of qs[32p .. 32p+31]) and 2p+1 (high
// nibbles) of a q4_K block, 0..15, or of a q5_K block (Block = block_q5_K),
// 0..31: the fifth bit of element 64p + l / 64p + 32 + l is bit 2p / 2p+1 of
// qh[l].
template <class Block>
inline void levels_k4_pair(const Block& b, int p, __m256i* lo, __m256i* hi) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * p));
  *lo = _mm256_and_si256(q, low);
  *hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
  if constexpr (std::is_same_v<Block, block_q5_K>) {
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh)), one = _mm256_set1_epi8(1);
    const __m256i b_lo = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * p)), one);
    const __m256i b_hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * p + 1)), one);
    *lo = _mm256_or_si256(*lo, _mm256_slli_epi16(b_lo, 4));
    *hi = _mm256_or_si256(*hi, _mm256_slli_epi16(b_hi, 4));
  }
}

// Levels 0..63 (value = level - 32) of elements 32c..32c+31 of a q6_K block.
inline __m256i levels_q6_K(const block_q6_K& b, int c) {
  const int h = c / 4, quarter = c % 4;
  const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32 * (quarter & 1)));
  const __m256i low4 = quarter < 2 ? _mm256_and_si256(ql, _mm256_set1_epi8(0x0F))
                                   : _mm256_and_si256(_mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0F));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
  const __m256i high2 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * quarter)), _mm256_set1_epi8(3));
  return _mm256_or_si256(low4, _mm256_slli_epi16(high2, 4));
}

}  // namespace
}  // namespace edgellm
