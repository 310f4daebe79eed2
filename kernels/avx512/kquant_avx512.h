// The integer core of one K-quant super-block x q8_K, AVX-512 VNNI, shared by
// the per-row vec_dot (dot_kquant_avx512.cpp) and the decode GEMV
// (gemv_kquant_avx512.cpp). Internal linkage, like every kernels/avx512 header.
//
// 64 elements per zmm: vpdpbusd of the unsigned weight levels (0..63) with the
// signed q8_K bytes into 16 int32 lanes, each lane inside one sub-block, so the
// sub-block scales are applied with one vpmulld against a lane-permuted scale
// vector. The result's lanes sum to the super-block's exact integer sum
// (q4_K/q5_K: sum_j sc_j * sum(q*a), the mins left to the caller; q6_K: with
// the -32 offset already applied through bsums).
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx512/kquant_avx512.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

// Scale-vector lane permutation: int32 lane l takes scale first + l / per.
inline __m512i lane_groups(int first, int per) {
  alignas(64) int32_t idx[16];
  for (int l = 0; l < 16; ++l) idx[l] = first + l / per;
  return _mm512_load_si512(idx);
}

// The activation's 4 chunks of 64 bytes.
inline void load_chunks(const block_q8_K& y, __m512i* yq) {
  for (int p = 0; p < 4; ++p) yq[p] = load512(y.qs + 64 * p);
}

// Constants of the q4_K/q5_K core, built once per row (or call).
struct AffineK {
  __m512i idx[4];  // chunk p (elements 64p..64p+63) -> sub-blocks 2p, 2p+1
  __m512i sel[4];  // q5_K: the qh bits of chunk p
  AffineK() {
    for (int p = 0; p < 4; ++p) {
      idx[p] = lane_groups(2 * p, 8);
      sel[p] = join(_mm256_set1_epi8(char(1 << (2 * p))), _mm256_set1_epi8(char(2 << (2 * p))));
    }
  }
};

// q4_K and q5_K: 8 sub-blocks of 32, x = d*sc*q - dmin*m, q = 4 or 5 bits.
// qs[32p + l]: low nibble element 64p + l (sub-block 2p), high nibble element
// 64p + 32 + l (sub-block 2p+1); q5_K's fifth bits are bits 2p / 2p+1 of qh[l].
// sc8: the 8 sub-block scales in the low 8 bytes (scales_mins_k4).
template <class Block>
inline __m512i affine_isum(const AffineK& k, const Block& x, __m128i sc8, const __m512i* yq) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const __m512i m4 = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
  const __m512i sc = _mm512_cvtepu8_epi32(sc8);
  __m512i hb = _mm512_setzero_si512();
  if constexpr (kFifthBit) hb = join(load256(x.qh), load256(x.qh));
  __m512i acc = _mm512_setzero_si512();
  for (int p = 0; p < 4; ++p) {
    const __m256i b = load256(x.qs + 32 * p);
    __m512i q = _mm512_and_si512(join(b, _mm256_srli_epi16(b, 4)), m4);
    if constexpr (kFifthBit) q = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(hb, k.sel[p]), q, c16);
    const __m512i dp = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, yq[p]);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dp, _mm512_permutexvar_epi32(k.idx[p], sc)));
  }
  return acc;
}

// q6_K: 16 sub-blocks of 16, x = d*sc*(q-32), q = 6 bits. Per half h of 128
// elements: the 64 bytes ql[64h ..] hold in their low nibbles elements 0..63
// of the half and in their high nibbles elements 64..127, in order; qh[32h + l]
// holds the top two bits of elements l, l+32, l+64, l+96 at bit pairs 0..3.
struct Q6K {
  __m512i idx[4];
  Q6K() {
    for (int c = 0; c < 4; ++c) idx[c] = lane_groups(4 * c, 4);
  }
};
// Half h (128 elements) of a q6_K block as 6-bit levels: q0 the first 64
// elements, q1 the last 64. Bit pairs 0/1 (first 64 elements) and 2/3 (last
// 64) of qh sit at bits 4..5 of the lanes of elements l (low 32 bytes) and
// l+32 (high 32 bytes).
inline void q6_levels(const block_q6_K& x, int h, __m512i& q0, __m512i& q1) {
  const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  const __m512i ql = load512(x.ql + 64 * h);
  const __m256i qh = load256(x.qh + 32 * h);
  const __m512i hh = join(qh, _mm256_srli_epi16(qh, 2));
  q0 = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_slli_epi16(hh, 4), m30));
  q1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_and_si512(hh, m30));
}
// The 16 sub-block scales as int32 lanes.
inline __m512i q6_scales(const block_q6_K& x) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales)));
}

// bsums32: the activation's 16 bsums as int32 lanes.
inline __m512i q6_isum(const Q6K& k, const block_q6_K& x, const __m512i* yq, __m512i bsums32) {
  const __m512i sc = q6_scales(x);
  __m512i acc = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    __m512i q0, q1;
    q6_levels(x, h, q0, q1);
    const __m512i d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q0, yq[2 * h]);
    const __m512i d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q1, yq[2 * h + 1]);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d0, _mm512_permutexvar_epi32(k.idx[2 * h], sc)));
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d1, _mm512_permutexvar_epi32(k.idx[2 * h + 1], sc)));
  }
  // The -32 offset: 32 * sum_j sc_j * bsums_j.
  return _mm512_sub_epi32(acc, _mm512_slli_epi32(_mm512_mullo_epi32(sc, bsums32), 5));
}

}  // namespace
}  // namespace edgellm
