// Prefill GEMM for q4_0, q5_0 and q8_0 weights x q8_0 activations, AVX-512 VNNI
// (KernelSet::gemm; compiled with the kernels/avx512 flags, only called when
// cpu_features().can_run_avx512()). Reference twin: the scalar set's gemm
// (one scalar vec_dot per row and token); tests/test_kernels_gemm.cpp.
//
// Layout: weight rows in the 16 int32 lanes ("rows in lanes"), not elements.
// A row tile of 16 rows is packed once per call (reused by every token): for
// each 32-element block, 8 zmm lines where line j holds, in lane r, bytes
// 4j..4j+3 of row r's block as unsigned levels u = w + kBias (q4_0: the
// nibbles, bias 8; q5_0: 5-bit levels, bias 16; q8_0: x ^ 0x80, bias 128),
// plus the 16 rows' fp16 scales as floats. Per block and token:
//   - int32 accumulator := -kBias * sum(y) (per token and block, precomputed),
//   - 8 x vpdpbusd(acc, line j, broadcast of the token's 4 bytes 4j..4j+3):
//     16 rows x 32 elements = 512 exact int8 MACs,
//   - cvt to float, x (d_w of 16 rows * d_a), one FMA into the token's float
//     accumulator of 16 rows.
// 8 + 3 vector ops (+1 broadcast) per 512 MACs, where the "elements in lanes"
// layout a vec_dot uses needs dpbusd + cvt + mul + fma per 64 MACs (one
// block pair of one row and token): ~3.7x fewer vector ops, and no
// horizontal sums (a token's 16 results are one zmm store).
// Micro-tile: 16 rows x up to 8 tokens: 8 int32 + 8 float accumulators, one
// weight line, the scales and broadcasts in registers. Per block of the tile:
// 8 weight lines (576 B with scales, from L1/L2, reused by 8 tokens) and
// 8 x 34 B of activations for 4096 MACs.
//
// Arithmetic: the int32 dot of each block is exact and identical to vec_dot's;
// the float steps are d_w * d_a * dot summed over the blocks in order, one FMA
// chain per (row, token). vec_dot sums the same products in another order
// (lanes over elements, then a tree), so a GEMM result may differ from the
// decode one by float rounding (within the tolerance of every kernel,
// ~1e-6 of sum|w x|); KernelSet::gemm_exact is false for this set.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read, and holds the helpers shared with the vec_dot kernels.
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

constexpr int kRows = 16;  // rows per tile: one per int32 lane
constexpr int kMaxTok = 8;  // tokens per micro-tile

// A block's 32 weights as unsigned levels u = w + kBias, element order.
struct Q4 {
  using Block = block_q4_0;
  static constexpr int kBias = 8;
  static __m256i levels(const Block& b) { return nibbles(b.qs); }
};
struct Q5 {
  using Block = block_q5_0;
  static constexpr int kBias = 16;
  static __m256i levels(const Block& b) { return levels_q5_0(b); }
};
struct Q8 {
  using Block = block_q8_0;
  static constexpr int kBias = 128;
  static __m256i levels(const Block& b) { return _mm256_xor_si256(load256(b.qs), _mm256_set1_epi8(char(0x80))); }
};

// One block of a 16-row tile: line j, lane r = bytes 4j..4j+3 of row r.
struct alignas(64) RowBlock {
  uint8_t line[8][64];
  float d[kRows];
};

// Per token and block: the bias correction and the activation scale.
struct TokBlock {
  int32_t corr;
  float d;
};

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

// Rows [0, R) of a tile; rows R..15 are zero (scale 0, so they add nothing;
// their lanes are never stored). Per block, the 16 rows' 32 levels (8 dwords
// each) are transposed in registers into the 8 lines: two 8 x 8 dword
// transposes and a join per line, ~56 shuffles per 16 rows. (One gather per
// line instead made packing 30% of a 16-token prefill on a 7B model.)
template <class W>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, RowBlock* out) {
  const typename W::Block* x[kRows];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws);
  for (int64_t b = 0; b < nb; ++b) {
    RowBlock& o = out[b];
    __m256i u[kRows], lo[8], hi[8];
    for (int r = 0; r < kRows; ++r) {
      u[r] = r < R ? W::levels(x[r][b]) : _mm256_setzero_si256();
      o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
    }
    transpose8x8(u, lo);
    transpose8x8(u + 8, hi);
    for (int j = 0; j < 8; ++j) _mm512_store_si512(o.line[j], _mm512_inserti64x4(_mm512_castsi256_si512(lo[j]), hi[j], 1));
  }
}

// Per token and block: -bias * sum(y) (sad of y ^ 0x80 sums y + 128) and d.
void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, int bias, TokBlock* out) {
  const __m256i flip = _mm256_set1_epi8(char(0x80));
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* y = reinterpret_cast<const block_q8_0*>(a + size_t(t) * as);
    for (int64_t b = 0; b < nb; ++b) {
      const __m256i s4 = _mm256_sad_epu8(_mm256_xor_si256(load256(y[b].qs), flip), _mm256_setzero_si256());
      const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
      const int32_t s = int32_t(_mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1)) - 128 * QK8_0;
      out[t * nb + b] = TokBlock{-bias * s, half(y[b].d)};
    }
  }
}

inline int32_t load32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 16 rows (R of them stored) x C tokens.
template <int C>
void tile(int64_t nb, const RowBlock* rows, int R, const uint8_t* a, size_t as, const TokBlock* tb, float* y,
          size_t ldy) {
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const block_q8_0* act[C];
  for (int c = 0; c < C; ++c) act[c] = reinterpret_cast<const block_q8_0*>(a + size_t(c) * as);
  for (int64_t b = 0; b < nb; ++b) {
    const RowBlock& rb = rows[b];
    __m512i dot[C];
    for (int c = 0; c < C; ++c) dot[c] = _mm512_set1_epi32(tb[c * nb + b].corr);
    for (int j = 0; j < 8; ++j) {
      const __m512i wl = _mm512_load_si512(rb.line[j]);
      for (int c = 0; c < C; ++c)
        dot[c] = _mm512_dpbusd_epi32(dot[c], wl, _mm512_set1_epi32(load32(act[c][b].qs + 4 * j)));
    }
    const __m512 dw = _mm512_load_ps(rb.d);
    for (int c = 0; c < C; ++c)
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[c]), _mm512_mul_ps(dw, _mm512_set1_ps(tb[c * nb + b].d)), acc[c]);
  }
  const __mmask16 m = __mmask16((1u << R) - 1);
  for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + size_t(c) * ldy, m, acc[c]);
}

using TileFn = void (*)(int64_t, const RowBlock*, int, const uint8_t*, size_t, const TokBlock*, float*, size_t);

TileFn pick(int c) {
  static_assert(kMaxTok == 8);
  static constexpr TileFn fns[kMaxTok] = {tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};
  return fns[c - 1];
}

template <class W>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
          float* y, size_t ldy) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  // Grow once per thread to the largest sizes seen (prefill only, never decode).
  thread_local std::vector<RowBlock> rq;
  thread_local std::vector<TokBlock> tq;
  if (rq.size() < size_t(nb)) rq.resize(size_t(nb));
  if (tq.size() < size_t(n_tok * nb)) tq.resize(size_t(n_tok * nb));
  pack_tokens(nb, ab, as, n_tok, W::kBias, tq.data());
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
    const int R = int(std::min<int64_t>(kRows, n_rows - r0));
    pack_rows<W>(nb, wb + size_t(r0) * ws, ws, R, rq.data());
    for (int64_t t0 = 0; t0 < n_tok; t0 += kMaxTok) {
      const int C = int(std::min<int64_t>(kMaxTok, n_tok - t0));
      pick(C)(nb, rq.data(), R, ab + size_t(t0) * as, as, tq.data() + t0 * nb, y + size_t(t0) * ldy + size_t(r0), ldy);
    }
  }
}

}  // namespace

void register_gemm_avx512(KernelSet& k) {
  k.gemm[int(GgmlType::Q4_0)] = gemm<Q4>;
  k.gemm[int(GgmlType::Q5_0)] = gemm<Q5>;
  k.gemm[int(GgmlType::Q8_0)] = gemm<Q8>;
  k.gemm_exact = false;
}

}  // namespace edgellm
