// Helpers shared by the kernels/avx2 files (inside their AVX2 + FMA + F16C
// target region, kernels/avx2/isa_begin.h). Internal linkage: only files of this folder may include this, and
// no copy of these may be merged with one built for another ISA.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx2/simd_avx2.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"

namespace edgellm {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// {hsum(a), hsum(b), hsum(c), hsum(d)}, each summed in the same tree as
// hsum() above (lane j + lane j+4, then j + j+2, then 0 + 1), so that
// a GEMM result is bit-identical to the set's vec_dot.
inline __m128 reduce4(__m256 a, __m256 b, __m256 c, __m256 d) {
  __m128 ta = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  __m128 tb = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
  __m128 tc = _mm_add_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
  __m128 td = _mm_add_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1));
  _MM_TRANSPOSE4_PS(ta, tb, tc, td);  // now ta = lane 0 of each input, tb = lane 1, ...
  return _mm_add_ps(_mm_add_ps(ta, tc), _mm_add_ps(tb, td));
}

inline int32_t hsum_i32(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(v);
}
inline int32_t hsum_i32(__m256i v) {
  return hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

// fp16 -> f32 with F16C: exact for every half, subnormals included.
inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Sum over 8 int32 lanes of x*y for 32 signed bytes each, where y is never
// -128 (our q8_0 activations are in [-127, 127]). maddubs wants one operand
// unsigned: |x| (0..128) times y with x's sign moved onto it (|y| <= 127),
// so a pair sums to at most 2*128*127 = 32512 and the int16 step never
// saturates: the result is exact for every weight byte.
inline __m256i dot_i8(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  const __m256i p16 = _mm256_maddubs_epi16(ax, sy);
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// The 32 nibbles of 16 bytes as unsigned bytes in element order: low
// nibbles (elements 0..15) in the low lane, high nibbles (16..31) above. The
// q4_0/q5_0 layout.
inline __m256i nibbles(const uint8_t* qs) {
  const __m128i b = load128(qs);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
}

// 32 weights packed as in iq4_nl (16 bytes of nibbles, q4_0's order) as
// their signed grid values kvalues_iq4nl[nibble] in element order: one
// vpshufb, the 16-entry grid in both 128-bit lanes (the table load is
// loop-invariant and hoisted).
inline __m256i values_iq4(const uint8_t* qs) {
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(kvalues_iq4nl)), nibbles(qs));
}

// Bit j of the little-endian 32-bit word at qh as byte j: 0xFF if set, else 0.
inline __m256i bits_to_bytes(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, 4);
  // Byte j takes word byte j/8 (shuffle works per 128-bit lane; both hold the
  // whole word), then tests its bit j%8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(int(v)),
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// The 32 levels q = nibble | fifth bit << 4 (0..31, unsigned bytes, element
// order) of a 5-bit block: q5_0 (value q - 16) and q5_1 (value d*q + m) share
// this layout.
inline __m256i levels_q5(const uint8_t* qs, const uint8_t* qh) {
  return _mm256_or_si256(nibbles(qs), _mm256_and_si256(bits_to_bytes(qh), _mm256_set1_epi8(0x10)));
}

// Sum over 8 int32 lanes of q*y for 32 unsigned levels q <= 31 and signed y:
// maddubs takes q as it is, a pair sums to at most 2*31*128 = 7936, so no
// int16 saturation and the result is exact (cheaper than dot_i8's sign moves).
inline __m256i dot_u5_i8(__m256i q, __m256i y) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), _mm256_set1_epi16(1));
}

// Sum over nb blocks of d_w * d_a * ints(x[i], y[i]), where ints() gives the
// 8 int32 lanes of a weight block's integer dot with its activation block
// (pass a lambda, which always inlines, not a function pointer). Two blocks
// per iteration into two accumulators (the FMA chain is the latency bound;
// the loads are independent). Affine weights (q5_1: a field m) against q8_1
// (s = d_a * sum(a)) add m_w * s_a per block, as the reference does, into two
// scalar accumulators of their own so that they do not lengthen the vector
// FMA chain.
template <class Block, class Act, class Ints>
inline float dot_blocks(const Block* x, const Act* y, int64_t nb, Ints ints) {
  constexpr bool affine = requires(const Block& b, const Act& a) { b.m; a.s; };
  auto block = [&](int64_t i, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(ints(x[i], y[i])), _mm256_set1_ps(half(x[i].d) * half(y[i].d)), acc);
  };
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  float off0 = 0, off1 = 0;
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    acc0 = block(i, acc0);
    acc1 = block(i + 1, acc1);
    if constexpr (affine) {
      off0 += half(x[i].m) * half(y[i].s);
      off1 += half(x[i + 1].m) * half(y[i + 1].s);
    }
  }
  if (i < nb) {
    acc0 = block(i, acc0);
    if constexpr (affine) off0 += half(x[i].m) * half(y[i].s);
  }
  if constexpr (affine) return hsum(_mm256_add_ps(acc0, acc1)) + (off0 + off1);
  return hsum(_mm256_add_ps(acc0, acc1));
}

// dot_blocks with q8_0 activations and signed weight values: values() gives
// a weight block's 32 signed bytes in element order.
template <class Block, class Values>
inline float dot_blocks_q8_0(const Block* x, const block_q8_0* y, int64_t nb, Values values) {
  return dot_blocks(x, y, nb, [&](const Block& b, const block_q8_0& a) { return dot_i8(values(b), load256(a.qs)); });
}

}  // namespace
}  // namespace edgellm
