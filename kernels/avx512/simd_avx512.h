// Helpers shared by the kernels/avx512 files (all inside the target region
// of kernels/avx512/isa_begin.h). Internal linkage: only files of
// this folder may include this, and no copy of these may be merged with one
// built for another ISA.
//
// The int8 dots use VNNI's vpdpbusd (u8 x s8, four products summed into each
// int32 lane, no intermediate saturation).
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx512/simd_avx512.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
// GCC 12's avx512fintrin.h initialises its "undefined" vectors from
// themselves (__m512 __Y = __Y;), which -W(maybe-)uninitialized reports at every
// inlined use (GCC bug 105593, fixed in GCC 13). Not our code; silenced here only.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/shared_x86.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// Two 32-byte halves into one zmm (block i in lanes 0..7, block i+1 in 8..15).
inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Per-int32-lane scales: s0 for the first block's 8 lanes, s1 for the second's.
inline __m512 scales(float s0, float s1) {
  return _mm512_mask_blend_ps(__mmask16(0xFF00), _mm512_set1_ps(s0), _mm512_set1_ps(s1));
}

// sum over each group of 4 bytes of x*y, x and y signed, exact: a signed
// weight byte x becomes the unsigned x+128 (x ^ 0x80), and 128*sum(y) is taken
// back off with a second vpdpbusd. Exact for every byte value, -128 included.
inline __m512i dot_s8s8(__m512i x, __m512i y) {
  const __m512i c128 = _mm512_set1_epi8(char(0x80));
  const __m512i biased = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(x, c128), y);
  return _mm512_sub_epi32(biased, _mm512_dpbusd_epi32(_mm512_setzero_si512(), c128, y));
}

// sum over each group of 4 of (q-offset)*y, q unsigned levels (q4_0's nibbles
// with offset 8, q5_0's 5-bit values with offset 16), exact.
inline __m512i dot_offset_s8(__m512i q, __m512i y, char offset) {
  const __m512i raw = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, y);
  return _mm512_sub_epi32(raw, _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(offset), y));
}

// The 32 nibbles of 16 bytes (unsigned) in element order: low nibbles
// (elements 0..15), then high nibbles (16..31). The q4_0/q5_0 layout.
inline __m256i nibbles(const uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
}

// A 5-bit block's 32 levels q (0..31, unsigned) in element order: bit j of
// the little-endian qh word is element j's bit 4. q5_0 (value q - 16) and
// q5_1 (value d*q + m) share the layout.
template <class Block>
inline __m256i levels_q5(const Block& b) {
  uint32_t h;
  std::memcpy(&h, b.qh, 4);
  const __m256i nib = nibbles(b.qs);
  return _mm256_mask_add_epi8(nib, __mmask32(h), nib, _mm256_set1_epi8(16));
}

// 32 weights packed as in iq4_nl (16 bytes of nibbles, q4_0's order) as
// their signed grid values kvalues_iq4nl[nibble], element order (one
// vpshufb; the table load is loop-invariant and hoisted) ...
inline __m256i values_iq4(const uint8_t* qs) {
  const __m128i grid = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl));
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(grid), nibbles(qs));
}
// ... and as unsigned levels u = value + 128: the form the q8_0 GEMM / GEMV
// tiles take (bias 128, as their q8_0 levels x ^ 0x80).
inline __m256i levels_iq4(const uint8_t* qs) { return _mm256_xor_si256(values_iq4(qs), _mm256_set1_epi8(char(0x80))); }

// Sum of the 16 lanes in a fixed tree: lane j + lane j+8, then j + j+4, then
// j + (j^2), then 0 + 1 (what GCC's _mm512_reduce_add_ps does, spelled out so
// that it cannot change under another compiler), so that a vec_dot result
// does not depend on the compiler.
inline float hsum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_permute_ps(q, 0x4E));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

// fx(x[k]) * fy(y[k]) for k = 0..3, fp16 fields, as 4 floats: the 8 halves
// are gathered into one xmm and converted by a single vcvtph2ps (exact), then
// multiplied once; the same float products as half() * half() one by one, at
// a third of the instructions. Scales: (&Block::d, &Act::d); q5_1's offset
// term: (&block_q5_1::m, &block_q8_1::s).
template <class Block, class Act>
inline __m128 half_products4(const Block* x, const Act* y, uint16_t Block::*fx, uint16_t Act::*fy) {
  __m128i h = _mm_cvtsi32_si128(x[0].*fx);
  h = _mm_insert_epi16(h, x[1].*fx, 1);
  h = _mm_insert_epi16(h, x[2].*fx, 2);
  h = _mm_insert_epi16(h, x[3].*fx, 3);
  h = _mm_insert_epi16(h, y[0].*fy, 4);
  h = _mm_insert_epi16(h, y[1].*fy, 5);
  h = _mm_insert_epi16(h, y[2].*fy, 6);
  h = _mm_insert_epi16(h, y[3].*fy, 7);
  const __m256 f = _mm256_cvtph_ps(h);
  return _mm_mul_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));
}

// Sum over nb blocks of d_w * d_a * (weights . y[i].qs), y q8_0 or q8_1.
// dot(b0, b1, y) returns the int32 lanes of two weight blocks against the
// activations y of both (b0 in lanes 0..7, b1 in 8..15). Blocks are walked two
// to a zmm, two zmms (four blocks) per iteration into two accumulators, the
// four blocks' scales converted together; a trailing pair / odd block takes
// its scales one by one, the odd block passing itself as b1 against zero
// activations. Affine weights (q5_1: a field m) against q8_1 (s = d_a *
// sum(a)) add m_w * s_a per block as the reference does: four at a time into
// an xmm of their own (off the zmm FMA chains), the tail one by one.
template <class Block, class Act, class Dot>
inline float dot_pairs(const Block* x, const Act* y, int64_t nb, Dot dot) {
  constexpr bool affine = requires(const Block& b, const Act& a) { b.m; a.s; };
  auto pair_ints = [&](int64_t i) {
    return _mm512_cvtepi32_ps(dot(x[i], x[i + 1], join(load256(y[i].qs), load256(y[i + 1].qs))));
  };
  // Lanes 0..7 take product k, lanes 8..15 product k+1.
  const __m512i first = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i second = _mm512_add_epi32(first, _mm512_set1_epi32(2));
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m128 off4 = _mm_setzero_ps();
  float off = 0;
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    const __m512 s4 = _mm512_castps128_ps512(half_products4(x + i, y + i, &Block::d, &Act::d));
    acc0 = _mm512_fmadd_ps(pair_ints(i), _mm512_permutexvar_ps(first, s4), acc0);
    acc1 = _mm512_fmadd_ps(pair_ints(i + 2), _mm512_permutexvar_ps(second, s4), acc1);
    if constexpr (affine) off4 = _mm_add_ps(off4, half_products4(x + i, y + i, &Block::m, &Act::s));
  }
  if (i + 1 < nb) {
    acc0 = _mm512_fmadd_ps(pair_ints(i),
                           scales(half(x[i].d) * half(y[i].d), half(x[i + 1].d) * half(y[i + 1].d)), acc0);
    if constexpr (affine) off += half(x[i].m) * half(y[i].s) + half(x[i + 1].m) * half(y[i + 1].s);
    i += 2;
  }
  if (i < nb) {
    const __m512i p = dot(x[i], x[i], join(load256(y[i].qs), _mm256_setzero_si256()));
    acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_set1_ps(half(x[i].d) * half(y[i].d)), acc1);
    if constexpr (affine) off += half(x[i].m) * half(y[i].s);
  }
  if constexpr (affine) {
    off4 = _mm_add_ps(off4, _mm_permute_ps(off4, 0x4E));
    return hsum(_mm512_add_ps(acc0, acc1)) + (_mm_cvtss_f32(_mm_add_ss(off4, _mm_movehdup_ps(off4))) + off);
  }
  return hsum(_mm512_add_ps(acc0, acc1));
}

// 16 rows of 32 bytes (u[r]) into 8 lines of 64 B, line j holding dword j of
// row r in int32 lane r: the "rows in lanes" operand of the GEMM kernels.
inline void rows_to_lines(const __m256i u[16], uint8_t (*line)[64]) {
  __m256i lo[8], hi[8];
  transpose8x8(u, lo);
  transpose8x8(u + 8, hi);
  for (int j = 0; j < 8; ++j) _mm512_store_si512(line[j], _mm512_inserti64x4(_mm512_castsi256_si512(lo[j]), hi[j], 1));
}

}  // namespace
}  // namespace edgellm
