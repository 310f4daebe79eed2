// The integer cores of the AVX2 K-quant dots, shared by the vec_dot kernels
// (dot_kquant_avx2.cpp) and the decode GEMVs (gemv_kquant_avx2.cpp): one
// 256-element super-block of weights against its q8_K activations, as 8
// int32 lanes whose total is the exact integer dot. Internal linkage, like
// every kernels/avx2 header.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx2/kquant_avx2.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/avx2/shared_x86.h"
#include "kernels/avx2/simd_avx2.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

// q4_K and q5_K: 8 sub-blocks of 32, x = d*sc*q - dmin*m, q = 4 or 5 bits.
// qs[32p + l]: low nibble element 64p + l (sub-block 2p), high nibble element
// 64p + 32 + l (sub-block 2p+1); q5_K's fifth bits are bits 2p / 2p+1 of qh[l].
// Returns sum_s sc_s * (q . y over sub-block s) in lanes (the mins' term,
// sum_s m_s * ysum_s, is mins_dot_bsums); sc8: x's 8 scales (scales_mins_k4).
// maddubs of levels 0..31 with q8_K bytes cannot saturate (2 * 31 * 127).
template <class Block>
inline __m256i affine_isum(const Block& x, __m128i sc8, const block_q8_K& y) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const __m256i m4 = _mm256_set1_epi8(0x0F), bit0 = _mm256_set1_epi8(1);
  __m256i hb = _mm256_setzero_si256();
  if constexpr (kFifthBit) hb = load256(x.qh);
  // The 8 scales as int16 in both 128-bit halves; sub-block j's broadcast by
  // one vpshufb (byte pair 2j, 2j+1 everywhere) instead of a GPR round trip.
  const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));
  auto scale = [&](int j) { return _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(short(0x0100 + 0x0202 * j))); };
  __m256i acc = _mm256_setzero_si256();
  for (int p = 0; p < 4; ++p) {
    const __m256i b = load256(x.qs + 32 * p);
    __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
    if constexpr (kFifthBit) {  // bits 2p, 2p+1 of qh: hb is shifted down by 2 per p
      lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hb, bit0), 4));
      hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), bit0), 4));
      hb = _mm256_srli_epi16(hb, 2);
    }
    const __m256i p0 = _mm256_maddubs_epi16(lo, load256(y.qs + 64 * p));
    const __m256i p1 = _mm256_maddubs_epi16(hi, load256(y.qs + 64 * p + 32));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p0, scale(2 * p)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p1, scale(2 * p + 1)));
  }
  return acc;
}

// q6_K: 16 sub-blocks of 16, x = d*sc*(q-32), q = 6 bits. Per half h of 128
// elements: ql[64h + l] holds the low nibbles of elements l (low) and l+64
// (high), ql[64h + 32 + l] those of l+32 and l+96; qh[32h + l] holds their
// top two bits at bit pairs 0, 1, 2, 3. Returns sum_s sc_s * ((q - 32) . y
// over sub-block s) in lanes, the -32 through q8_K's bsums (2 * 63 * 127:
// no saturation; |total| < 2^29, see the reference vec_dot).
inline __m256i q6_isum(const block_q6_K& x, const block_q8_K& y) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  // Pair k of a half (sub-blocks 2k, 2k+1 of its 8 scales as int16): int16
  // lane 2k broadcast to the low 128 bits, lane 2k+1 to the high.
  auto pair_shuffle = [](int k) {
    return _mm256_set_m128i(_mm_set1_epi16(short(0x0100 + 0x0202 * (2 * k + 1))),
                            _mm_set1_epi16(short(0x0100 + 0x0202 * (2 * k))));
  };
  const __m256i shuf[4] = {pair_shuffle(0), pair_shuffle(1), pair_shuffle(2), pair_shuffle(3)};
  __m256i acc = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = x.ql + 64 * h;
    const int8_t* q8 = y.qs + 128 * h;
    const __m256i l0 = load256(ql), l1 = load256(ql + 32), hb = load256(x.qh + 32 * h);
    const __m256i sc = _mm256_broadcastsi128_si256(
        _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.scales + 8 * h))));
    // Unsigned levels 0..63 of elements 32k .. 32k+31 of this half.
    const __m256i q[4] = {
        _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m30)),
        _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(hb, m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(hb, 2), m30))};
    for (int k = 0; k < 4; ++k) {
      const __m256i p16 = _mm256_maddubs_epi16(q[k], load256(q8 + 32 * k));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p16, _mm256_shuffle_epi8(sc, shuf[k])));
    }
  }
  // The -32 offset: 32 * sum_j sc_j * bsums_j.
  const __m256i off = _mm256_madd_epi16(_mm256_cvtepi8_epi16(load128(x.scales)), load256(y.bsums));
  return _mm256_sub_epi32(acc, _mm256_slli_epi32(off, 5));
}

}  // namespace
}  // namespace edgellm
