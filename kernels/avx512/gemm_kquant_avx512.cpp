// Prefill GEMM for q4_K, q5_K, q6_K and iq4_xs weights x q8_K activations, AVX-512 VNNI
// (KernelSet::gemm; reference twin: the scalar vec_dot per row and token,
// tests/test_kernels_gemm.cpp). q4_K and q6_K are the hub's Q4_K_M files
// whose rows are multiples of 256 (Llama, Qwen 1.5B+, Mistral ...): q6_K
// holds half of ffn_down and attn_v there.
//
// Same layout as gemm_avx512.cpp: 16 weight rows in the int32 lanes. Per
// 256-element super-block and row tile, packed once per call:
//   - 8 sub-blocks x 8 lines: line j of sub-block s holds, in lane r, levels
//     4j..4j+3 (0..15, unsigned, so vpdpbusd needs no bias) of row r's
//     sub-block s;
//   - the 6-bit scale and min of each sub-block as int32 lanes, d and dmin as
//     float lanes.
// Per super-block and token: for each sub-block 8 vpdpbusd (16 rows x 32
// elements) and one vpmulld by its scales; the min term is sum_s m_s * y_s
// with y_s the token's sub-block sums (from q8_K's bsums), 8 vpmulld; then
//   acc += d_a * (d * float(sum_s sc_s * dot_s) - dmin * float(sum_s m_s * y_s)).
// ~100 vector ops per 16 x 256 = 4096 MACs (the per-row vec_dot spends ~4x that).
// Integer ranges: dot_s <= 32 * 15 * 128 = 61440, sc_s * dot_s <= 63 * 61440
// and the sum of 8 such < 2^25; m_s * y_s <= 63 * 4096: exact in int32.
//
// q6_K: levels 0..63 (value = level - 32) in 16 sub-blocks of 16 with signed
// 8-bit scales. The 256 levels are rebuilt per 32-element chunk (4 low bits
// from ql, 2 high bits from qh) and transposed into lines like q4_K's; per
// sub-block (4 lines) one vpmulld by its scales; the -32 * sum(y) term is
// sum_s sc_s * bsum_s, 8 vpdpwssd of the scales as int16 pairs against the
// token's bsums pairs. |isum| < 2^29 (see the reference vec_dot).
// iq4_xs: q4_K's tile with the grid's values as levels, + 128 (one vpshufb
// per 32 elements at packing, as the iq4_nl GEMM), the signed 6-bit scale
// ls - 32 as sc_s, and the bias 128 * sum_s sc_s * y_s taken off in int32
// before the one conversion (the m lanes hold sc_s too): dot_s <= 32 * 241 *
// 127 < 2^20, |sc_s * dot_s| < 2^25, the bias < 2^27; exact.
// Results agree with vec_dot within the kernels' tolerance (another float
// summation order), like the other AVX-512 GEMMs (KernelSet::gemm_reordered).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/gemm_lanes_avx512.h"

namespace edgellm {

namespace {

constexpr int kSub = QK_K / 32;

struct alignas(64) SuperBlock {
  uint8_t line[kSub][8][64];
  int32_t sc[kSub][kLaneRows];
  int32_t m[kSub][kLaneRows];
  float d[kLaneRows];
  float dmin[kLaneRows];
};

struct TokSuper {
  float d;
  int32_t ysum[kSub];
};

// q4_K, or q5_K (Block = block_q5_K): the same lines with levels 0..31, the
// fifth bit of element 64p + l (sub-block 2p) / 64p + 32 + l (2p+1) being bit
// 2p / 2p+1 of qh[l]. Same tile: dot_s <= 32 * 31 * 128, sum of 8 scaled < 2^26.
template <class Block>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, SuperBlock* out) {
  const Block* x[kLaneRows];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const Block*>(w + size_t(r) * ws);
  for (int64_t b = 0; b < nb; ++b) {
    SuperBlock& o = out[b];
    for (int r = 0; r < kLaneRows; ++r) {
      if (r < R) {
        const ScalesMinsK4 sm = unpack_scales_mins_k4(x[r][b].scales);
        for (int s = 0; s < kSub; ++s) {
          o.sc[s][r] = sm.sc[s];
          o.m[s][r] = sm.m[s];
        }
        o.d[r] = half(x[r][b].d);
        o.dmin[r] = half(x[r][b].dmin);
      } else {
        for (int s = 0; s < kSub; ++s) o.sc[s][r] = o.m[s][r] = 0;
        o.d[r] = o.dmin[r] = 0;
      }
    }
    // Sub-blocks 2p and 2p+1: low and high nibbles of qs[32p .. 32p+31].
    for (int p = 0; p < kSub / 2; ++p) {
      __m256i lo[kLaneRows], hi[kLaneRows];
      for (int r = 0; r < kLaneRows; ++r) {
        if (r < R) levels_k4_pair(x[r][b], p, &lo[r], &hi[r]);
        else lo[r] = hi[r] = _mm256_setzero_si256();
      }
      rows_to_lines(lo, o.line[2 * p]);
      rows_to_lines(hi, o.line[2 * p + 1]);
    }
  }
}

// iq4_xs rows in q4_K's tile form: levels value + 128, sc = m = ls - 32.
void pack_rows_iq4_xs(int64_t nb, const uint8_t* w, size_t ws, int R, SuperBlock* out) {
  const block_iq4_xs* x[kLaneRows];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const block_iq4_xs*>(w + size_t(r) * ws);
  for (int64_t b = 0; b < nb; ++b) {
    SuperBlock& o = out[b];
    for (int r = 0; r < kLaneRows; ++r) {
      for (int s = 0; s < kSub; ++s) o.sc[s][r] = o.m[s][r] = r < R ? iq4xs_scale(x[r][b], s) - 32 : 0;
      o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
      o.dmin[r] = 0;
    }
    for (int s = 0; s < kSub; ++s) {
      __m256i u[kLaneRows];
      for (int r = 0; r < kLaneRows; ++r) u[r] = r < R ? levels_iq4(x[r][b].qs + 16 * s) : _mm256_setzero_si256();
      rows_to_lines(u, o.line[s]);
    }
  }
}

void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, TokSuper* out) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* y = reinterpret_cast<const block_q8_K*>(a + size_t(t) * as);
    for (int64_t b = 0; b < nb; ++b) {
      TokSuper& o = out[t * nb + b];
      o.d = y[b].d;
      for (int s = 0; s < kSub; ++s) o.ysum[s] = int32_t(y[b].bsums[2 * s]) + int32_t(y[b].bsums[2 * s + 1]);
    }
  }
}

// kLevelBias (iq4_xs): the levels carry + 128, taken off as 128 * imin in
// int32; otherwise imin is the mins' term, scaled by dmin.
template <int C, bool kLevelBias = false>
void tile(int64_t nb, const SuperBlock* rows, int R, const uint8_t* a, size_t as, const TokSuper* tb, float* y,
          size_t ldy) {
  TileState<block_q8_K, C> st(a, as);
  auto& acc = st.acc;
  const auto& act = st.act;
  for (int64_t b = 0; b < nb; ++b) {
    const SuperBlock& sb = rows[b];
    __m512i isum[C], imin[C];
    for (int c = 0; c < C; ++c) isum[c] = imin[c] = _mm512_setzero_si512();
    for (int s = 0; s < kSub; ++s) {
      __m512i dot[C];
      for (int c = 0; c < C; ++c) dot[c] = _mm512_setzero_si512();
      for (int j = 0; j < 8; ++j) {
        const __m512i wl = _mm512_load_si512(sb.line[s][j]);
        for (int c = 0; c < C; ++c)
          dot[c] = _mm512_dpbusd_epi32(dot[c], wl, _mm512_set1_epi32(load32(act[c][b].qs + 32 * s + 4 * j)));
      }
      const __m512i sc = _mm512_load_si512(sb.sc[s]), m = _mm512_load_si512(sb.m[s]);
      for (int c = 0; c < C; ++c) {
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(dot[c], sc));
        imin[c] = _mm512_add_epi32(imin[c], _mm512_mullo_epi32(m, _mm512_set1_epi32(tb[c * nb + b].ysum[s])));
      }
    }
    const __m512 d = _mm512_load_ps(sb.d), dmin = _mm512_load_ps(sb.dmin);
    for (int c = 0; c < C; ++c) {
      __m512 v;
      if constexpr (kLevelBias) v = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(isum[c], _mm512_slli_epi32(imin[c], 7))));
      else v = _mm512_fmsub_ps(d, _mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(imin[c])));
      acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(tb[c * nb + b].d), v, acc[c]);
    }
  }
  store_rows(acc, R, y, ldy);
}

// ---- q6_K --------------------------------------------------------------------

struct alignas(64) SuperBlock6 {
  uint8_t line[kSub][8][64];   // chunk c (elements 32c..32c+31): lines as in q4_K
  int32_t sc[2 * kSub][kLaneRows];  // 16 sub-blocks of 16
  int32_t sc_pair[kSub][kLaneRows];  // scales 2i, 2i+1 as two int16 (for vpdpwssd)
  float d[kLaneRows];
};

struct TokSuper6 {
  float d;
  int32_t bsum_pair[kSub];  // bsums 2i, 2i+1 as two int16
};

void pack_rows6(int64_t nb, const uint8_t* w, size_t ws, int R, SuperBlock6* out) {
  const block_q6_K* x[kLaneRows];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const block_q6_K*>(w + size_t(r) * ws);
  for (int64_t b = 0; b < nb; ++b) {
    SuperBlock6& o = out[b];
    for (int r = 0; r < kLaneRows; ++r) {
      for (int s = 0; s < 2 * kSub; ++s) o.sc[s][r] = r < R ? x[r][b].scales[s] : 0;
      for (int i = 0; i < kSub; ++i)
        o.sc_pair[i][r] = int32_t(uint32_t(uint16_t(int16_t(o.sc[2 * i][r]))) |
                                  (uint32_t(uint16_t(int16_t(o.sc[2 * i + 1][r]))) << 16));
      o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
    }
    for (int c = 0; c < kSub; ++c) {
      __m256i u[kLaneRows];
      for (int r = 0; r < kLaneRows; ++r) u[r] = r < R ? levels_q6_K(x[r][b], c) : _mm256_setzero_si256();
      rows_to_lines(u, o.line[c]);
    }
  }
}

void pack_tokens6(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, TokSuper6* out) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* y = reinterpret_cast<const block_q8_K*>(a + size_t(t) * as);
    for (int64_t b = 0; b < nb; ++b) {
      TokSuper6& o = out[t * nb + b];
      o.d = y[b].d;
      for (int i = 0; i < kSub; ++i)
        o.bsum_pair[i] = int32_t(uint32_t(uint16_t(y[b].bsums[2 * i])) | (uint32_t(uint16_t(y[b].bsums[2 * i + 1])) << 16));
    }
  }
}

template <int C>
void tile6(int64_t nb, const SuperBlock6* rows, int R, const uint8_t* a, size_t as, const TokSuper6* tb, float* y,
           size_t ldy) {
  TileState<block_q8_K, C> st(a, as);
  auto& acc = st.acc;
  const auto& act = st.act;
  for (int64_t b = 0; b < nb; ++b) {
    const SuperBlock6& sb = rows[b];
    __m512i isum[C], corr[C];
    for (int c = 0; c < C; ++c) isum[c] = corr[c] = _mm512_setzero_si512();
    for (int ch = 0; ch < kSub; ++ch) {
      for (int half_ = 0; half_ < 2; ++half_) {  // sub-block 2ch + half_: lines 4 half_ .. 4 half_ + 3
        __m512i dot[C];
        for (int c = 0; c < C; ++c) dot[c] = _mm512_setzero_si512();
        for (int j = 4 * half_; j < 4 * half_ + 4; ++j) {
          const __m512i wl = _mm512_load_si512(sb.line[ch][j]);
          for (int c = 0; c < C; ++c)
            dot[c] = _mm512_dpbusd_epi32(dot[c], wl, _mm512_set1_epi32(load32(act[c][b].qs + 32 * ch + 4 * j)));
        }
        const __m512i sc = _mm512_load_si512(sb.sc[2 * ch + half_]);
        for (int c = 0; c < C; ++c) isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(dot[c], sc));
      }
      const __m512i scp = _mm512_load_si512(sb.sc_pair[ch]);
      for (int c = 0; c < C; ++c) corr[c] = _mm512_dpwssd_epi32(corr[c], scp, _mm512_set1_epi32(tb[c * nb + b].bsum_pair[ch]));
    }
    const __m512 d = _mm512_load_ps(sb.d);
    for (int c = 0; c < C; ++c) {
      const __m512i total = _mm512_sub_epi32(isum[c], _mm512_slli_epi32(corr[c], 5));
      acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(tb[c * nb + b].d)), _mm512_cvtepi32_ps(total), acc[c]);
    }
  }
  store_rows(acc, R, y, ldy);
}

// ---- formats for gemm_lanes (kernels/gemm_lanes.h) ------------------------------

// Up to 4 tokens per micro-tile: each keeps two int32 sums and a float
// accumulator across the 8 or 16 sub-blocks.
template <class Block>  // block_q4_K, block_q5_K or block_iq4_xs
struct Q4K {
  using Rows = SuperBlock;
  using Toks = TokSuper;
  static constexpr int64_t kBlock = QK_K;
  static constexpr int kRows = kLaneRows;
  static constexpr int kMaxTok = 4;
  static constexpr bool kIq4 = std::is_same_v<Block, block_iq4_xs>;
  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) {
    if constexpr (kIq4) pack_rows_iq4_xs(nb, w, ws, R, out);
    else edgellm::pack_rows<Block>(nb, w, ws, R, out);
  }
  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    edgellm::pack_tokens(nb, a, as, n_tok, out);
  }
  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    edgellm::tile<C, kIq4>(nb, rows, R, a, as, tb, y, ldy);
  }
};
struct Q6K {
  using Rows = SuperBlock6;
  using Toks = TokSuper6;
  static constexpr int64_t kBlock = QK_K;
  static constexpr int kRows = kLaneRows;
  static constexpr int kMaxTok = 4;
  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) { pack_rows6(nb, w, ws, R, out); }
  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    pack_tokens6(nb, a, as, n_tok, out);
  }
  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    tile6<C>(nb, rows, R, a, as, tb, y, ldy);
  }
};

}  // namespace

void register_gemm_kquant_avx512(KernelSet& k) {
  set_gemm_lanes<Q4K<block_q4_K>>(k, GgmlType::Q4_K);
  set_gemm_lanes<Q4K<block_q5_K>>(k, GgmlType::Q5_K);
  set_gemm_lanes<Q6K>(k, GgmlType::Q6_K);
  set_gemm_lanes<Q4K<block_iq4_xs>>(k, GgmlType::IQ4_XS);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
