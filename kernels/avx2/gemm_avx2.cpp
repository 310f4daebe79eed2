// Prefill GEMM for q4_0 and q8_0 weights x q8_0 activations, AVX2 + FMA
// (KernelSet::gemm; compiled with -mavx2 -mfma -mf16c, only called when
// cpu_features().can_run_avx2()). Reference twin: the scalar set's gemm;
// tests/test_kernels_gemm.cpp.
//
// Micro-tile: kR = 4 weight rows x kC = 2 tokens over the whole row (K), one
// 32-element block (one ymm of bytes) per step. 8 accumulators (ymm of float
// partial sums) + per-row weight bytes and scales + per-token activation
// bytes, scale and correction: a little over the 16 ymm registers, so a few
// row operands are re-read from L1 as memory operands. Per step:
//   - each weight row: one block loaded once (q4_0: 16 B of nibbles unpacked to
//     unsigned bytes 0..15; q8_0: 32 B, kept signed) and its fp16 scale;
//   - each token: its q8_0 block (32 B), scale, and for q4_0 8*sum(y) per int32
//     lane (vpmaddubsw(8, y) then vpmaddwd(1)), the correction for the q+8 bias;
//   - each (row, token) pair, q4_0: vpmaddubsw(q, y) (u8 x s8 pairs into int16,
//     at most 2*15*128: no saturation), vpmaddwd(1) to int32, minus the
//     correction; q8_0: the sign trick of dot_avx2.cpp (|x| times y with x's
//     sign, exact because q8_0 activations are never -128), vpmaddubsw, vpmaddwd;
//     then int -> float, d_w * d_a and one FMA into the accumulator.
// Per step 4*18 + 2*34 = 140 B (q4_0; q8_0: 204 B) for 8*32 = 256 int8 MACs,
// 0.55 B/MAC, against 52 B per 32 MACs = 1.6 B/MAC for per-row vec_dot; the
// ~6 vector ops per pair per block outweigh the loads (which hit L1/L2), so the
// loop is ALU-bound. Horizontal sums once per tile: 4 rows of a token at once.
//
// Every (row, token) result is bit-identical to the set's vec_dot (tested), so
// batching never changes a logit: same int32 lanes (both sum each group of 4
// byte products exactly), same d_w * d_a, same FMAs in the same order: vec_dot
// runs two chains (even blocks, odd blocks) summed in a fixed tree; the tile
// runs the even blocks as a first pass (accumulators parked in L1), the odd
// ones as a second, and sums in the same tree.
//
// Edge tiles (rows % 4, tokens % 2) are the same template at smaller R x C.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

constexpr int kR = 4, kC = 2;

inline float half(uint16_t h) { return _cvtsh_ss(h); }
inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// q4_0 nibbles (0..15, unsigned) in element order.
inline __m256i nibbles(const uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
}

// Per weight format: prep() turns a row's block into its operand, per_token()
// computes what a token's block needs once per step, dot() the int32 lanes of
// one (row, token) block pair.
struct Q4 {
  using Block = block_q4_0;
  static __m256i prep(const Block& b) { return nibbles(b.qs); }
  static __m256i per_token(__m256i y) {  // 8 * sum(y) per group of 4 bytes
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(8), y), _mm256_set1_epi16(1));
  }
  static __m256i dot(__m256i q, __m256i y, __m256i corr) {
    return _mm256_sub_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(q, y), _mm256_set1_epi16(1)), corr);
  }
};
struct Q8 {
  using Block = block_q8_0;
  static __m256i prep(const Block& b) { return load256(b.qs); }
  static __m256i per_token(__m256i) { return _mm256_setzero_si256(); }
  static __m256i dot(__m256i x, __m256i y, __m256i) {
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
  }
};

// {hsum(a), hsum(b), hsum(c), hsum(d)}, each summed in the same tree as
// hsum() of dot_avx2.cpp (lane j + lane j+4, then j + j+2, then 0 + 1), so that
// a GEMM result is bit-identical to the set's vec_dot.
inline __m128 reduce4(__m256 a, __m256 b, __m256 c, __m256 d) {
  __m128 ta = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  __m128 tb = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
  __m128 tc = _mm_add_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
  __m128 td = _mm_add_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1));
  _MM_TRANSPOSE4_PS(ta, tb, tc, td);  // now ta = lane 0 of each input, tb = lane 1, ...
  return _mm_add_ps(_mm_add_ps(ta, tc), _mm_add_ps(tb, td));
}

using TileFn = void (*)(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy);

template <class W, int R, int C>
void tile(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy) {
  using Block = typename W::Block;
  const Block* x[R];
  const block_q8_0* ya[C];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const Block*>(w + size_t(r) * ws);
  for (int c = 0; c < C; ++c) ya[c] = reinterpret_cast<const block_q8_0*>(a + size_t(c) * as);
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();

  auto step = [&](int64_t i) {
    __m256i q[R];
    __m256 dw[R];
    for (int r = 0; r < R; ++r) {
      q[r] = W::prep(x[r][i]);
      dw[r] = _mm256_set1_ps(half(x[r][i].d));
    }
    for (int c = 0; c < C; ++c) {
      const __m256i yv = load256(ya[c][i].qs);
      const __m256i corr = W::per_token(yv);
      const __m256 da = _mm256_set1_ps(half(ya[c][i].d));
      for (int r = 0; r < R; ++r)
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(W::dot(q[r], yv, corr)), _mm256_mul_ps(dw[r], da), acc[r][c]);
    }
  };
  // vec_dot's schedule: block i goes to chain i % 2, result = hsum(chain0 +
  // chain1). Chain 0 (even blocks) is one pass, parked in L1; chain 1 another.
  alignas(32) float chain0[R][C][8];
  for (int64_t i = 0; i < nb; i += 2) step(i);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      _mm256_store_ps(chain0[r][c], acc[r][c]);
      acc[r][c] = _mm256_setzero_ps();
    }
  for (int64_t i = 1; i < nb; i += 2) step(i);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_add_ps(_mm256_load_ps(chain0[r][c]), acc[r][c]);

  const __m256 z = _mm256_setzero_ps();
  for (int c = 0; c < C; ++c) {
    const __m128 s = reduce4(acc[0][c], R > 1 ? acc[R > 1 ? 1 : 0][c] : z, R > 2 ? acc[R > 2 ? 2 : 0][c] : z,
                             R > 3 ? acc[R > 3 ? 3 : 0][c] : z);
    float* yc = y + size_t(c) * ldy;
    if constexpr (R == 4) {
      _mm_storeu_ps(yc, s);
    } else {
      alignas(16) float tmp[4];
      _mm_store_ps(tmp, s);
      for (int r = 0; r < R; ++r) yc[r] = tmp[r];
    }
  }
}

template <class W, int R>
TileFn pick_c(int c) {
  static_assert(kC == 2);
  return c == 1 ? tile<W, R, 1> : tile<W, R, 2>;
}
template <class W>
TileFn pick(int r, int c) {
  static_assert(kR == 4);
  switch (r) {
    case 1: return pick_c<W, 1>(c);
    case 2: return pick_c<W, 2>(c);
    case 3: return pick_c<W, 3>(c);
    default: return pick_c<W, 4>(c);
  }
}

// Rows outer, tokens inner: a tile's kR weight rows stay in L1 while the
// tokens' activation rows stream past them (matmul keeps those in L2).
template <class W>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
          float* y, size_t ldy) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
    const int rr = int(std::min<int64_t>(kR, n_rows - r0));
    const TileFn full = pick<W>(rr, kC);
    const uint8_t* wr = wb + size_t(r0) * ws;
    int64_t t0 = 0;
    for (; t0 + kC <= n_tok; t0 += kC) full(nb, wr, ws, ab + size_t(t0) * as, as, y + size_t(t0) * ldy + size_t(r0), ldy);
    if (t0 < n_tok)
      pick<W>(rr, int(n_tok - t0))(nb, wr, ws, ab + size_t(t0) * as, as, y + size_t(t0) * ldy + size_t(r0), ldy);
  }
}

}  // namespace

void register_gemm_avx2(KernelSet& k) {
  k.gemm[int(GgmlType::Q4_0)] = gemm<Q4>;
  k.gemm[int(GgmlType::Q8_0)] = gemm<Q8>;
}

}  // namespace edgellm
