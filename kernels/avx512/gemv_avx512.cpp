// Decode matrix x vector for q4_0 weights x q8_0 activations, AVX-512 VNNI
// (KernelSet::gemv; reference twin: vec_dot per row, the scalar set's gemm).
//
// Decode is one token: each weight byte is used once, so the speed limit is
// memory bandwidth (qwen2.5-0.5b Q4_0: 346 MB per token) unless the core
// cannot unpack and multiply the blocks as fast as they stream in. One core
// running vec_dot row by row managed ~18 GB/s: per pair of blocks it spends
// ~23 vector ops, half of them on the activations (load, bias correction,
// scales) that are the same for every row. Here 4 rows share them:
//   per pair of blocks, once:   activations in nibble order (2 loads, join,
//                               one 128-bit lane shuffle), -8 * sum(y) per
//                               int32 lane (one vpdpbusd), d_a of both blocks;
//   per row:                    2 x 16 B of nibbles -> 64 levels (insert,
//                               shift, insert, and), one vpdpbusd from the
//                               correction, cvt, one FMA with d_w * d_a;
//   per row and 4 blocks:       d_w of 4 blocks by one vcvtph2ps.
// Nibble order: the low nibbles of block i (its elements 0..15), of block i+1
// (0..15), then the high nibbles of i (16..31) and of i+1 (16..31), so int32
// lanes 0-3 and 8-11 belong to block i and 4-7, 12-15 to block i+1; the
// activations are shuffled to match (128-bit lanes 0, 2, 1, 3 of the joined
// pair).
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

// Software prefetch distance in a weight row's stream. Measured on qwen2.5-0.5b
// Q4_0, 2 threads: none ~109 tok/s, 18 blocks (~0.3 KB) ~102, ~2 KB ~120,
// ~4.5 KB ~120 (noisy host, +-4).
constexpr int kPrefetchBytes = 2304;
// Rows per pass: each shares one activation load, shuffle and correction.
constexpr int kGemvRows = 8;

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Levels 0..15 of blocks x[0], x[1] in nibble order (see above).
inline __m512i levels_pair(const block_q4_0* x) {
  const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(x[0].qs)), load128(x[1].qs), 1);
  return _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(b), _mm256_srli_epi16(b, 4), 1),
                          _mm512_set1_epi8(0x0F));
}

// d of blocks x[0..3] as floats.
inline __m128 scales4(const block_q4_0* x) {
  __m128i h = _mm_cvtsi32_si128(x[0].d);
  h = _mm_insert_epi16(h, x[1].d, 1);
  h = _mm_insert_epi16(h, x[2].d, 2);
  h = _mm_insert_epi16(h, x[3].d, 3);
  return _mm_cvtph_ps(h);
}

// Rows x[r] (R of them, ws bytes apart) . y, nb blocks; results to out[r].
template <int R>
void rows_q4_0(int64_t nb, const uint8_t* w, size_t ws, const block_q8_0* y, float* out) {
  const block_q4_0* x[R];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const block_q4_0*>(w + size_t(r) * ws);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const __m512i eight = _mm512_set1_epi8(8);
  // int32 lane -> block of the pair: lanes 0-3, 8-11 block 0; 4-7, 12-15 block 1.
  const __m512i pick0 = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1);
  const __m512i pick1 = _mm512_add_epi32(pick0, _mm512_set1_epi32(2));
  // One pair of blocks (i, i+1) into every row; sd holds d_w * d_a at
  // positions k, k+1 (pick).
  auto pair = [&](int64_t i, const __m512* s4, const __m512i pick) {
    const __m512i ya = _mm512_inserti64x4(_mm512_castsi256_si512(load256(y[i].qs)), load256(y[i + 1].qs), 1);
    const __m512i yv = _mm512_shuffle_i64x2(ya, ya, 0xD8);
    const __m512i corr = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, yv));
    for (int r = 0; r < R; ++r) {
      const __m512i p = _mm512_dpbusd_epi32(corr, levels_pair(x[r] + i), yv);
      const __m512 s = _mm512_permutexvar_ps(pick, s4[r]);
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), s, acc[r]);
    }
  };
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    // ~2 KB ahead in each row's stream (see kPrefetchBytes).
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(x[r] + i) + kPrefetchBytes, _MM_HINT_T0);
    __m128i hy = _mm_cvtsi32_si128(y[i].d);
    hy = _mm_insert_epi16(hy, y[i + 1].d, 1);
    hy = _mm_insert_epi16(hy, y[i + 2].d, 2);
    hy = _mm_insert_epi16(hy, y[i + 3].d, 3);
    const __m128 da4 = _mm_cvtph_ps(hy);
    __m512 s4[R];  // d_w * d_a of the 4 blocks, per row
    for (int r = 0; r < R; ++r) s4[r] = _mm512_castps128_ps512(_mm_mul_ps(scales4(x[r] + i), da4));
    pair(i, s4, pick0);
    pair(i + 2, s4, pick1);
  }
  // Tail: 0-3 blocks, one at a time (nibbles of one block against its y).
  float tail[R] = {};
  for (; i < nb; ++i) {
    const __m256i yv = load256(y[i].qs);
    const float da = half(y[i].d);
    for (int r = 0; r < R; ++r) {
      const __m128i b = load128(x[r][i].qs);
      const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
      const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, yv);
      const __m256i c = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(8), yv);
      const __m256i dsum = _mm256_sub_epi32(p, c);
      __m128i s = _mm_add_epi32(_mm256_castsi256_si128(dsum), _mm256_extracti128_si256(dsum, 1));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
      tail[r] += half(x[r][i].d) * da * float(_mm_cvtsi128_si32(s));
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]) + tail[r];
}

void gemv_q4_0(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
               float* y, size_t ldy) {
  const int64_t nb = n / QK4_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    float* yt = y + size_t(t) * ldy;
    int64_t r = 0;
    for (; r + kGemvRows <= n_rows; r += kGemvRows) rows_q4_0<kGemvRows>(nb, wb + size_t(r) * ws, ws, act, yt + r);
    if (n_rows - r >= 4) {
      rows_q4_0<4>(nb, wb + size_t(r) * ws, ws, act, yt + r);
      r += 4;
    }
    switch (n_rows - r) {
      case 3: rows_q4_0<3>(nb, wb + size_t(r) * ws, ws, act, yt + r); break;
      case 2: rows_q4_0<2>(nb, wb + size_t(r) * ws, ws, act, yt + r); break;
      case 1: rows_q4_0<1>(nb, wb + size_t(r) * ws, ws, act, yt + r); break;
      default: break;
    }
  }
}

}  // namespace

void register_gemv_avx512(KernelSet& k) { k.gemv[int(GgmlType::Q4_0)] = gemv_q4_0; }

}  // namespace edgellm
