// Prefill GEMM for q4_0, q5_0 and q8_0 weights x q8_0 activations, AVX-512 VNNI
// (KernelSet::gemm; compiled with the kernels/avx512 flags, only called when
// cpu_features().can_run_avx512()). Reference twin: the scalar set's gemm
// (one scalar vec_dot per row and token); tests/test_kernels_gemm.cpp.
//
// Micro-tile: kR = 4 weight rows x kC = 4 tokens, over the whole row (K).
// The 16 (row, token) dots each keep a zmm of float partial sums, so the tile
// holds 16 accumulators + 4 weight vectors + 4 weight-scale vectors + ~5
// temporaries in the 32 zmm registers. One step covers two 32-element blocks
// (64 bytes = one zmm of int8/uint8):
//   - each of the 4 weight rows: one 64 B load of its two blocks as unsigned
//     bytes u = w + bias (q4_0: nibbles 0..15 = q, bias 8; q8_0: x ^ 0x80,
//     bias 128) and its two block scales (one 8 B broadcast + a permute);
//   - each of the 4 tokens: one 64 B load of its two q8_0 blocks, its scales,
//     and -bias*sum(y) per int32 lane (one vpdpbusd against the bias, negated):
//     vpdpbusd(u, y) - bias*sum(y) = sum(w*y), exact for every byte;
//   - each of the 16 pairs: vpdpbusd (64 u8 x s8 products into 16 int32 lanes,
//     starting from the correction), int -> float, d_w * d_a (lanes 0..7 carry
//     block i's scales, 8..15 block i+1's) and one FMA into its accumulator.
// The operands come pre-arranged (gemm(), pack_rows/pack_tokens): the nibble
// unpacking or biasing, the joining of two 32 B blocks into one 64 B line and
// the fp16 -> f32 scale conversions are done once per 4-row tile (not once
// per token tile) and once per block of tokens (not once per row tile), into
// per-thread buffers of 72 B per row (or token) and block pair.
//
// Per step: 8 x 64 B lines + 8 x 8 B of scales = 576 B loaded for 16 x 64 =
// 1024 int8 MACs, 0.56 B/MAC from L1/L2 (a per-row vec_dot loads 104 B of
// raw blocks per 64 MACs, 1.6 B/MAC, and unpacks the weight for every token).
// The 4 vector ops per pair (dpbusd, cvt, mul, fma) are ~70% of the ~90
// vector ops of a step, the rest being the per-row and per-token work above;
// at ~2 loads and ~2 vector ops per cycle the loop is bound by the vector
// ALUs (compute), not by loads: ~110-120 GMAC/s on one Zen 5 core.
// The 16 horizontal sums happen once per tile (not once per block), four
// accumulators at a time into one xmm of four consecutive rows of y.
//
// Every (row, token) result is bit-identical to the set's vec_dot (tested), so
// a prompt gives the same logits however it is split into batches: the int32
// lanes, the d_w * d_a products and the FMAs are the same, and so is the
// order: vec_dot runs two FMA chains (even block pairs, odd pairs + an odd
// tail block) and sums them in a fixed tree; the tile runs the even pairs as a
// first pass (its 16 accumulators parked in L1), the odd ones as a second,
// and sums in the same tree. Each block is still loaded once per tile.
//
// Edge tiles (rows % 4, tokens % 4) are the same template at smaller R x C.
// An odd block count ends with a half step whose upper 32 bytes are zero
// (and whose scale lines hold the one block's d twice, as vec_dot's set1).
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read, and holds the helpers shared with the vec_dot kernels.
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

constexpr int kR = 4, kC = 4;

// Weight formats as unsigned bytes u with u = w + kBias, so that
// vpdpbusd(u, y) - kBias * sum(y) = sum(w * y).
struct Q4 {
  using Block = block_q4_0;
  static constexpr char kBias = 8;
  static __m512i two(const Block* x, int64_t i) { return join(nibbles(x[i].qs), nibbles(x[i + 1].qs)); }
  static __m512i one(const Block* x, int64_t i) { return join(nibbles(x[i].qs), _mm256_setzero_si256()); }
};
struct Q5 {  // levels 0..31 (bit 4 from qh), value = level - 16
  using Block = block_q5_0;
  static constexpr char kBias = 16;
  static __m512i two(const Block* x, int64_t i) { return join(levels_q5_0(x[i]), levels_q5_0(x[i + 1])); }
  static __m512i one(const Block* x, int64_t i) { return join(levels_q5_0(x[i]), _mm256_setzero_si256()); }
};
struct Q8 {
  using Block = block_q8_0;
  static constexpr char kBias = char(0x80);
  static __m512i two(const Block* x, int64_t i) {
    return _mm512_xor_si512(join(load256(x[i].qs), load256(x[i + 1].qs)), _mm512_set1_epi8(char(0x80)));
  }
  // Upper half 0: its activations are 0 as well, so it adds nothing.
  static __m512i one(const Block* x, int64_t i) {
    return join(_mm256_xor_si256(load256(x[i].qs), _mm256_set1_epi8(char(0x80))), _mm256_setzero_si256());
  }
};

// {hsum(a), hsum(b), hsum(c), hsum(d)}, each summed in the same tree as
// hsum() of simd_avx512.h (lane j + lane j+8, then j + j+4, j + (j^2), 0 + 1),
// so that a GEMM result is bit-identical to the set's vec_dot.
inline __m128 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  // 128-bit chunks: ab = [a0+a2, a1+a3, b0+b2, b1+b3], cd likewise.
  const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
  // Chunk k of s: four partial sums of the k-th input (lanes j + j+4 of the above).
  __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
  s = _mm512_add_ps(s, _mm512_permute_ps(s, 0x4E));
  s = _mm512_add_ps(s, _mm512_permute_ps(s, 0xB1));
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), s));
}

// Operands prepared once and reused by many tiles: 64 B lines of bytes (the
// u8 weight operand, or the s8 activations; the upper half 0 in the step of a
// trailing odd block) and, per line, the two fp16 block scales as floats,
// expanded to lanes 0..7 / 8..15 at use (a trailing odd block stores d twice).
struct alignas(64) Line {
  uint8_t b[64];
};

inline __m512 expand(const float* d2) {
  double both;
  std::memcpy(&both, d2, sizeof both);
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_castpd_ps(_mm512_set1_pd(both)));
}

// The R rows of a row tile, once per row tile (reused by every token tile):
// step s, row r at q[s*R + r], scales at d[(s*R + r)*2].
template <class W>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Line* q, float* d) {
  for (int r = 0; r < R; ++r) {
    const auto* x = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws);
    for (int64_t i = 0, s = 0; i < nb; i += 2, ++s) {
      const bool two = i + 1 < nb;
      _mm512_store_si512(q[s * R + r].b, two ? W::two(x, i) : W::one(x, i));
      d[(s * R + r) * 2] = half(x[i].d);
      d[(s * R + r) * 2 + 1] = half(x[two ? i + 1 : i].d);
    }
  }
}

// A block of tokens, once per call (reused by every row tile): token tile g,
// step s, token c of the tile at y[(g*steps + s)*kC + c], scales likewise.
void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Line* q, float* d) {
  const int64_t steps = (nb + 1) / 2;
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* y = reinterpret_cast<const block_q8_0*>(a + size_t(t) * as);
    for (int64_t i = 0, s = 0; i < nb; i += 2, ++s) {
      const int64_t k = ((t / kC) * steps + s) * kC + t % kC;
      const bool two = i + 1 < nb;
      _mm512_store_si512(q[k].b, join(load256(y[i].qs), two ? load256(y[i + 1].qs) : _mm256_setzero_si256()));
      d[k * 2] = half(y[i].d);
      d[k * 2 + 1] = half(y[two ? i + 1 : i].d);
    }
  }
}

struct Packed {
  const Line* q;
  const float* d;
};

using TileFn = void (*)(int64_t nb, Packed rows, Packed toks, float* y, size_t ldy);

// rows: the R packed rows; toks: the packed token tile (kC slots, C used).
template <class W, int R, int C>
void tile(int64_t nb, Packed rows, Packed toks, float* y, size_t ldy) {
  __m512 acc[R][C];
  const __m512i bias = _mm512_set1_epi8(W::kBias);
  // Block pair s (or the trailing odd block) into every accumulator.
  auto step = [&](int64_t s) {
    __m512i q[R];
    __m512 dw[R];
    for (int r = 0; r < R; ++r) {
      q[r] = _mm512_load_si512(rows.q[s * R + r].b);
      dw[r] = expand(rows.d + (s * R + r) * 2);
    }
    for (int c = 0; c < C; ++c) {
      const __m512i yv = _mm512_load_si512(toks.q[s * kC + c].b);
      const __m512i neg_corr =
          _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, yv));
      const __m512 da = expand(toks.d + (s * kC + c) * 2);
      for (int r = 0; r < R; ++r) {
        const __m512i p = _mm512_dpbusd_epi32(neg_corr, q[r], yv);
        acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw[r], da), acc[r][c]);
      }
    }
  };
  // vec_dot's schedule: block pair k (blocks 2k, 2k+1) goes to chain k % 2, a
  // trailing odd block to chain 1, result = hsum(chain0 + chain1). Chain 0
  // (even pairs) is one pass, parked in L1; chain 1 (odd pairs, tail) another.
  const int64_t pairs = nb / 2;
  alignas(64) float chain0[R][C][16];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t k = 0; k < pairs; k += 2) step(k);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      _mm512_store_ps(chain0[r][c], acc[r][c]);
      acc[r][c] = _mm512_setzero_ps();
    }
  for (int64_t k = 1; k < pairs; k += 2) step(k);
  if (nb % 2) step(pairs);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_add_ps(_mm512_load_ps(chain0[r][c]), acc[r][c]);

  const __m512 z = _mm512_setzero_ps();
  for (int c = 0; c < C; ++c) {
    const __m128 s = reduce4(acc[0][c], R > 1 ? acc[R > 1 ? 1 : 0][c] : z, R > 2 ? acc[R > 2 ? 2 : 0][c] : z,
                             R > 3 ? acc[R > 3 ? 3 : 0][c] : z);
    if constexpr (R == 4)
      _mm_storeu_ps(y + size_t(c) * ldy, s);
    else
      _mm_mask_storeu_ps(y + size_t(c) * ldy, __mmask8((1u << R) - 1), s);
  }
}

template <class W, int R>
TileFn pick_c(int c) {
  static_assert(kC == 4);
  switch (c) {
    case 1: return tile<W, R, 1>;
    case 2: return tile<W, R, 2>;
    case 3: return tile<W, R, 3>;
    default: return tile<W, R, 4>;
  }
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

// Tokens in blocks whose packed form (72 B per token and block pair) fits in
// kTokPackBytes of L2; per block, rows outer (a 4-row tile packed once) and
// token tiles inner.
constexpr size_t kTokPackBytes = 512 * 1024;

template <class W>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
          float* y, size_t ldy) {
  const int64_t nb = n / QK8_0, steps = (nb + 1) / 2;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  const int64_t tok_bytes = steps * int64_t(sizeof(Line) + 2 * sizeof(float));
  const int64_t tp = std::min(std::max<int64_t>(kC, int64_t(kTokPackBytes) / tok_bytes / kC * kC),
                              (n_tok + kC - 1) / kC * kC);
  // Grow once per thread to the largest sizes seen (prefill only, never decode).
  thread_local std::vector<Line> rq, tq;
  thread_local std::vector<float> rd, td;
  if (rq.size() < size_t(steps * kR)) rq.resize(size_t(steps * kR)), rd.resize(size_t(steps * kR * 2));
  if (tq.size() < size_t(tp * steps)) tq.resize(size_t(tp * steps)), td.resize(size_t(tp * steps * 2));
  for (int64_t tt = 0; tt < n_tok; tt += tp) {
    const int64_t nt = std::min(tp, n_tok - tt);
    pack_tokens(nb, ab + size_t(tt) * as, as, nt, tq.data(), td.data());
    for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
      const int rr = int(std::min<int64_t>(kR, n_rows - r0));
      pack_rows<W>(nb, wb + size_t(r0) * ws, ws, rr, rq.data(), rd.data());
      const Packed rows{rq.data(), rd.data()};
      const TileFn full = pick<W>(rr, kC);
      float* yr = y + size_t(tt) * ldy + size_t(r0);
      int64_t t0 = 0;
      for (; t0 + kC <= nt; t0 += kC)
        full(nb, rows, Packed{tq.data() + t0 * steps, td.data() + t0 * steps * 2}, yr + size_t(t0) * ldy, ldy);
      if (t0 < nt)
        pick<W>(rr, int(nt - t0))(nb, rows, Packed{tq.data() + t0 * steps, td.data() + t0 * steps * 2},
                                  yr + size_t(t0) * ldy, ldy);
    }
  }
}

}  // namespace

void register_gemm_avx512(KernelSet& k) {
  k.gemm[int(GgmlType::Q4_0)] = gemm<Q4>;
  k.gemm[int(GgmlType::Q5_0)] = gemm<Q5>;
  k.gemm[int(GgmlType::Q8_0)] = gemm<Q8>;
}

}  // namespace edgellm
