// Prefill GEMM for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0 activations, AVX2 + FMA
// (KernelSet::gemm; compiled with -mavx2 -mfma -mf16c, only called when
// cpu_features().can_run_avx2()). Reference twin: the scalar set's gemm;
// tests/test_kernels_gemm.cpp.
//
// Micro-tile: kR = 4 weight rows x kC = 2 tokens over the whole row (K), one
// 32-element block (one ymm of bytes) per step. 8 accumulators (ymm of float
// partial sums) + per-token activation bytes, scale and correction + per-row
// scales in the 16 ymm registers; the weight bytes are memory operands read
// from L1. Per step:
//   - each weight row: its block's operand lines, prepared once per 4-row tile
//     by pack_rows (not once per token tile): q4_0 the 16 B of nibbles as 32
//     unsigned bytes 0..15 (q5_0: 0..31 with the fifth bits); q8_0 |x| and x
//     (2 x 32 B); iq4_nl as q8_0, x its nibbles' grid values (the lookup
//     paid once per row tile, not per token); and its scale as a float;
//   - each token: its q8_0 block (32 B), scale, and for q4_0 8*sum(y) per int32
//     lane (vpmaddubsw(8, y) then vpmaddwd(1)), the correction for the q+8 bias
//     (q5_0: 16*sum(y));
//   - each (row, token) pair, q4_0: vpmaddubsw(q, y) (u8 x s8 pairs into int16,
//     at most 2*15*128: no saturation), vpmaddwd(1) to int32, minus the
//     correction; q8_0: the sign trick of dot_avx2.cpp (|x| times y with x's
//     sign, exact because q8_0 activations are never -128), vpmaddubsw, vpmaddwd;
//     then int -> float, d_w * d_a and one FMA into the accumulator.
// Per step 4*36 + 2*34 = 212 B (q4_0; q8_0: 340 B) for 8*32 = 256 int8 MACs,
// 0.8 B/MAC from L1/L2, against 52 B per 32 MACs = 1.6 B/MAC for per-row
// vec_dot (which also unpacks the weight for every token); the ~6 vector ops
// per pair per block (~50 per step, at ~2 per cycle) outweigh the ~12 loads
// of a step (2-3 per cycle), so the loop is ALU-bound: ~45 GMAC/s on one Zen 5
// core. Horizontal sums once per tile: 4 rows of a token at once.
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

#include "kernels/avx2/simd_avx2.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

constexpr int kR = 4, kC = 2;


// A 4-row tile's weight blocks, prepared once per row tile and reused by
// every token tile: kLines 32 B lines per row and block, and the block scale.
struct alignas(32) Line {
  uint8_t b[32];
};
inline __m256i load(const Line& l) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(l.b)); }
inline void store(Line& l, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(l.b), v); }

// Per weight format: pack() turns a row's block into its lines, per_token()
// computes what a token's block needs once per step, dot() the int32 lanes of
// one (row, token) block pair.
// q4_0 / q5_0: unsigned levels u (0..15 / 0..31) with value u - kBias; the
// tile sums u*y and subtracts kBias*sum(y) per int32 lane, the same integer
// per group of 4 bytes as vec_dot's signed values (pairs at most 2*31*127:
// no saturation), so results stay bit-identical.
template <class B, int kBias>
struct Biased {
  using Block = B;
  static constexpr int kLines = 1;
  static void pack(const Block& b, Line* l) {
    if constexpr (kBias == 8) {
      store(l[0], nibbles(b.qs));
    } else {  // q5_0: the fifth bits of qh as 0x10
      store(l[0], levels_q5(b.qs, b.qh));
    }
  }
  static __m256i per_token(__m256i y) {  // kBias * sum(y) per group of 4 bytes
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(kBias), y), _mm256_set1_epi16(1));
  }
  static __m256i dot(const Line* l, __m256i y, __m256i corr) {
    return _mm256_sub_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(load(l[0]), y), _mm256_set1_epi16(1)), corr);
  }
};
using Q4 = Biased<block_q4_0, 8>;
using Q5 = Biased<block_q5_0, 16>;
// Signed weight bytes x, q8_0's own or iq4_nl's grid values (-127..113): the
// sign trick of dot_i8.
inline __m256i signed_bytes(const block_q8_0& b) { return load256(b.qs); }
inline __m256i signed_bytes(const block_iq4_nl& b) { return values_iq4(b.qs); }
template <class B>
struct Signed {
  using Block = B;
  static constexpr int kLines = 2;  // |x| (unsigned, 0..128) and x (for its signs)
  static void pack(const Block& b, Line* l) {
    const __m256i x = signed_bytes(b);
    store(l[0], _mm256_sign_epi8(x, x));
    store(l[1], x);
  }
  static __m256i per_token(__m256i) { return _mm256_setzero_si256(); }
  static __m256i dot(const Line* l, __m256i y, __m256i) {
    const __m256i p16 = _mm256_maddubs_epi16(load(l[0]), _mm256_sign_epi8(y, load(l[1])));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
  }
};
using Q8 = Signed<block_q8_0>;
using IQ4NL = Signed<block_iq4_nl>;

template <class W>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Line* q, float* d) {
  for (int r = 0; r < R; ++r) {
    const auto* x = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws);
    for (int64_t i = 0; i < nb; ++i) {
      W::pack(x[i], q + (i * R + r) * W::kLines);
      d[i * R + r] = half(x[i].d);
    }
  }
}

using TileFn = void (*)(int64_t nb, const Line* wq, const float* wd, const uint8_t* a, size_t as, float* y,
                        size_t ldy);

template <class W, int R, int C>
void tile(int64_t nb, const Line* wq, const float* wd, const uint8_t* a, size_t as, float* y, size_t ldy) {
  const block_q8_0* ya[C];
  for (int c = 0; c < C; ++c) ya[c] = reinterpret_cast<const block_q8_0*>(a + size_t(c) * as);
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();

  auto step = [&](int64_t i) {
    const Line* q = wq + i * R * W::kLines;
    __m256 dw[R];
    for (int r = 0; r < R; ++r) dw[r] = _mm256_broadcast_ss(wd + i * R + r);
    for (int c = 0; c < C; ++c) {
      const __m256i yv = load256(ya[c][i].qs);
      const __m256i corr = W::per_token(yv);
      const __m256 da = _mm256_set1_ps(half(ya[c][i].d));
      for (int r = 0; r < R; ++r)
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(W::dot(q + r * W::kLines, yv, corr)), _mm256_mul_ps(dw[r], da), acc[r][c]);
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

// Scratch (GemmScratchFn): one row tile's packed blocks, laid out as
//   [Line wq[nb * R * kLines]] [float wd[nb * R]]      each rounded up to 64 B
// with R = min(kR, n_rows) (pack_rows lays a tile out at its own height) and
// nb = n / 32: q4_0 / q5_0 (kLines 1) 36 B per row and block, q8_0 / iq4_nl 68 B;
// e.g. a 4864-wide q4_0 row tile 152 * 4 * 36 = 21.9 KB. Independent of n_tok.
template <class W>
size_t gemm_scratch(int64_t n, int64_t n_rows, int64_t) {
  const size_t cells = size_t(n / QK8_0) * size_t(std::clamp<int64_t>(n_rows, 1, kR));
  return scratch_round64(cells * W::kLines * sizeof(Line)) + scratch_round64(cells * sizeof(float));
}

// Rows outer (a 4-row tile packed once, then kept in L1), tokens inner (the
// activation rows stream from L2: matmul hands over blocks that fit).
template <class W>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
          float* y, size_t ldy, void* scratch) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  // The caller's area, gemm_scratch<W>(n, n_rows, n_tok) bytes.
  const size_t cells = size_t(nb) * size_t(std::min<int64_t>(kR, n_rows));
  Line* rq = static_cast<Line*>(scratch);
  float* rd = reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) + scratch_round64(cells * W::kLines * sizeof(Line)));
  for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
    const int rr = int(std::min<int64_t>(kR, n_rows - r0));
    pack_rows<W>(nb, wb + size_t(r0) * ws, ws, rr, rq, rd);
    const TileFn full = pick<W>(rr, kC);
    float* yr = y + size_t(r0);
    int64_t t0 = 0;
    for (; t0 + kC <= n_tok; t0 += kC) full(nb, rq, rd, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
    if (t0 < n_tok)
      pick<W>(rr, int(n_tok - t0))(nb, rq, rd, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
  }
}

}  // namespace

void register_gemm_avx2(KernelSet& k) {
  k.gemm[int(GgmlType::Q4_0)] = gemm<Q4>;
  k.gemm[int(GgmlType::Q5_0)] = gemm<Q5>;
  k.gemm[int(GgmlType::Q8_0)] = gemm<Q8>;
  k.gemm_scratch[int(GgmlType::Q4_0)] = gemm_scratch<Q4>;
  k.gemm_scratch[int(GgmlType::Q5_0)] = gemm_scratch<Q5>;
  k.gemm_scratch[int(GgmlType::Q8_0)] = gemm_scratch<Q8>;
  k.gemm[int(GgmlType::IQ4_NL)] = gemm<IQ4NL>;
  k.gemm_scratch[int(GgmlType::IQ4_NL)] = gemm_scratch<IQ4NL>;
}

}  // namespace edgellm
