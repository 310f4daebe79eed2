// Prefill GEMM for q4_K, q5_K, q6_K and iq4_xs weights x q8_K activations,
// AVX2 + FMA, weight rows in the 8 int32 lanes of a ymm (KernelSet::gemm;
// the layout of gemm_avx2.cpp and gemm_kquant_avx512.cpp, driver
// kernels/gemm_lanes.h). Reference twin: the scalar vec_dot per row and
// token; tests/test_kernels_gemm.cpp. q2_K and q3_K keep
// gemm_kquant_avx2.cpp's tile over the unpacked integer form.
//
// Per 256-element super-block and 8-row tile, packed once per call: for each
// 32-element chunk 8 lines (line j, lane r = levels 4j..4j+3 of row r; iq4_xs
// 16: |x| then x), each sub-block's scale twice as int16 per lane, and the
// mins as int16 pairs. Per super-block and token:
//   - q4_K (levels 0..15): per sub-block of 32 the 8 lines' vpmaddubsw
//     against the token's broadcast bytes add up in int16 (at most 8 * 2 *
//     15 * 127 = 30480: exact, q8_K activations are -127..127), then one
//     vpmaddwd by the scale pair widens and scales at once: 8 maddubs + 7
//     adds + madd + add per 256 MACs, where the elements-in-lanes tile of
//     gemm_kquant_avx2.cpp spends 8 x (maddubs, madd, add); q5_K (0..31):
//     two groups of 4 lines (31496);
//   - mins: sum_s m_s * ysum_s as 4 vpmaddwd of the (m_2i, m_2i+1) pairs
//     against the token's sub-block sums, |ysum| <= 32 * 127 fitting int16;
//     acc += d_a * (d * isum - dmin * imin);
//   - q6_K (levels 0..63, value level - 32, 16 sub-blocks of 16 with signed
//     scales): int16 chains of 2 lines (2 * 2 * 63 * 127 = 32004), one
//     vpmaddwd by the scale per chain; the -32 * sum_s sc_s * bsum_s term as
//     8 vpmaddwd of scale pairs against bsum pairs;
//   - iq4_xs (signed grid values, |x| <= 127): the sign trick per line
//     (pairs up to 2 * 127 * 127 leave no room to add two), one vpmaddwd by
//     the scale ls - 32 per line, no mins.
// Integer ranges per super-block and lane: q4_K / q5_K |isum| < 8 * 2 * 2 *
// 31496 * 63 < 2^27; q6_K < 32 * 2 * 32004 * 128 < 2^29; iq4_xs < 64 * 2 *
// 32258 * 32 < 2^28: exact in int32.
// Results agree with vec_dot within the kernels' tolerance (another float
// summation order): KernelSet::gemm_reordered.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/shared_x86.h"
#include "kernels/avx2/simd_avx2.h"
#include "kernels/gemm_lanes.h"

namespace edgellm {

namespace {

constexpr int kSub = QK_K / 32;   // 32-element chunks per super-block

// Two int16 in one int32 lane (a, b = low, high), the operand form of vpmaddwd.
inline int32_t pair16(int a, int b) {
  return int32_t(uint32_t(uint16_t(int16_t(a))) | (uint32_t(uint16_t(int16_t(b))) << 16));
}

inline __m256i line(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }

// ---- q4_K / q5_K / iq4_xs ---------------------------------------------------

template <int kLines>
struct alignas(32) SuperK {
  uint8_t line[kSub][kLines][32];
  int32_t sc[kSub][kRows8];     // sc_s twice as int16
  int32_t m[kSub / 2][kRows8];  // (m_2i, m_2i+1) as int16
  float d[kRows8], dmin[kRows8];
};

struct TokK {
  float d;
  int32_t ysum[kSub / 2];  // (ysum_2i, ysum_2i+1) as int16, ysum_s = the sub-block's sum
};

template <class Block>  // block_q4_K, block_q5_K or block_iq4_xs
struct LanesK {
  static constexpr bool kIq4 = std::is_same_v<Block, block_iq4_xs>;
  // Lines whose int16 pair sums add before widening: q4_K 8, q5_K 4, iq4_xs 1.
  static constexpr int kGroup = kIq4 ? 1 : std::is_same_v<Block, block_q5_K> ? 4 : 8;
  using Rows = SuperK<kIq4 ? 16 : 8>;
  using Toks = TokK;
  static constexpr int kRows = kRows8;
  static constexpr int64_t kBlock = QK_K;
  static constexpr int kMaxTok = 4;

  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) {
    const Block* x[kRows8];
    for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const Block*>(w + size_t(r) * ws);
    for (int64_t b = 0; b < nb; ++b) {
      Rows& o = out[b];
      for (int r = 0; r < kRows8; ++r) {
        int sc[kSub] = {}, m[kSub] = {};
        if (r < R) {
          if constexpr (kIq4) {
            for (int s = 0; s < kSub; ++s) sc[s] = iq4xs_scale(x[r][b], s) - 32;
          } else {
            const ScalesMinsK4 sm = unpack_scales_mins_k4(x[r][b].scales);
            for (int s = 0; s < kSub; ++s) sc[s] = sm.sc[s], m[s] = sm.m[s];
          }
        }
        for (int s = 0; s < kSub; ++s) o.sc[s][r] = pair16(sc[s], sc[s]);
        for (int i = 0; i < kSub / 2; ++i) o.m[i][r] = pair16(m[2 * i], m[2 * i + 1]);
        o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
        if constexpr (kIq4) o.dmin[r] = 0.0f;
        else o.dmin[r] = r < R ? half(x[r][b].dmin) : 0.0f;
      }
      __m256i u[kSub][kRows8];  // chunk s of row r
      for (int r = 0; r < kRows8; ++r)
        for (int p = 0; p < kSub / 2; ++p) {
          if (r >= R) {
            u[2 * p][r] = u[2 * p + 1][r] = _mm256_setzero_si256();
          } else if constexpr (kIq4) {
            u[2 * p][r] = values_iq4(x[r][b].qs + 16 * (2 * p));
            u[2 * p + 1][r] = values_iq4(x[r][b].qs + 16 * (2 * p + 1));
          } else {
            levels_k4_pair(x[r][b], p, &u[2 * p][r], &u[2 * p + 1][r]);
          }
        }
      for (int s = 0; s < kSub; ++s) {
        __m256i col[kRows8];
        transpose8x8(u[s], col);
        for (int j = 0; j < 8; ++j) {
          if constexpr (kIq4) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[s][j]), _mm256_sign_epi8(col[j], col[j]));
            _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[s][8 + j]), col[j]);
          } else {
            _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[s][j]), col[j]);
          }
        }
      }
    }
  }

  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    for (int64_t t = 0; t < n_tok; ++t) {
      const auto* y = reinterpret_cast<const block_q8_K*>(a + size_t(t) * as);
      for (int64_t b = 0; b < nb; ++b) {
        Toks& o = out[t * nb + b];
        o.d = y[b].d;
        for (int i = 0; i < kSub / 2; ++i)
          o.ysum[i] = pair16(y[b].bsums[4 * i] + y[b].bsums[4 * i + 1], y[b].bsums[4 * i + 2] + y[b].bsums[4 * i + 3]);
      }
    }
  }

  // 8 rows (R of them stored) x C tokens.
  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    TileState8<block_q8_K, C> st(a, as);
    auto& acc = st.acc;
    const auto& act = st.act;
    for (int64_t b = 0; b < nb; ++b) {
      const Rows& sb = rows[b];
      __m256i isum[C];
      for (int c = 0; c < C; ++c) isum[c] = _mm256_setzero_si256();
      for (int s = 0; s < kSub; ++s) {
        const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i*>(sb.sc[s]));
        for (int j0 = 0; j0 < 8; j0 += kGroup) {
          __m256i s16[C];
          for (int j = j0; j < j0 + kGroup; ++j) {
            const __m256i wl = line(sb.line[s][j]);
            for (int c = 0; c < C; ++c) {
              const __m256i yb = bcast4(act[c][b].qs + 32 * s + 4 * j);
              const __m256i p = kIq4 ? _mm256_maddubs_epi16(wl, _mm256_sign_epi8(yb, line(sb.line[s][8 + j])))
                                     : _mm256_maddubs_epi16(wl, yb);
              s16[c] = j == j0 ? p : _mm256_add_epi16(s16[c], p);
              in_register(s16[c]);
            }
          }
          for (int c = 0; c < C; ++c) {
            isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(s16[c], sc));
            in_register(isum[c]);
          }
        }
      }
      const __m256 d = _mm256_load_ps(sb.d);
      for (int c = 0; c < C; ++c) {
        __m256 v = _mm256_mul_ps(d, _mm256_cvtepi32_ps(isum[c]));
        if constexpr (!kIq4) {
          __m256i imin = _mm256_setzero_si256();
          for (int i = 0; i < kSub / 2; ++i)
            imin = _mm256_add_epi32(imin, _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(sb.m[i])),
                                                            _mm256_set1_epi32(tb[c * nb + b].ysum[i])));
          v = _mm256_fnmadd_ps(_mm256_load_ps(sb.dmin), _mm256_cvtepi32_ps(imin), v);
        }
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(tb[c * nb + b].d), v, acc[c]);
      }
    }
    st.store(R, y, ldy);
  }

};

// ---- q6_K ---------------------------------------------------------------------

struct alignas(32) Super6 {
  uint8_t line[kSub][8][32];       // chunk c (elements 32c..32c+31): levels 0..63
  int32_t sc[2 * kSub][kRows8];    // sub-block of 16 s: sc_s twice as int16
  int32_t sc_pair[kSub][kRows8];   // (sc_2i, sc_2i+1) as int16
  float d[kRows8];
};

struct Tok6 {
  float d;
  int32_t bsum[kSub];  // (bsums 2i, 2i+1) as int16
};

struct Lanes6 {
  using Rows = Super6;
  using Toks = Tok6;
  static constexpr int kRows = kRows8;
  static constexpr int64_t kBlock = QK_K;
  static constexpr int kMaxTok = 4;

  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) {
    const block_q6_K* x[kRows8];
    for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const block_q6_K*>(w + size_t(r) * ws);
    for (int64_t b = 0; b < nb; ++b) {
      Rows& o = out[b];
      for (int r = 0; r < kRows8; ++r) {
        for (int s = 0; s < 2 * kSub; ++s) {
          const int sc = r < R ? x[r][b].scales[s] : 0;
          o.sc[s][r] = pair16(sc, sc);
        }
        for (int i = 0; i < kSub; ++i)
          o.sc_pair[i][r] = r < R ? pair16(x[r][b].scales[2 * i], x[r][b].scales[2 * i + 1]) : 0;
        o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
      }
      for (int c = 0; c < kSub; ++c) {
        __m256i u[kRows8], col[kRows8];
        for (int r = 0; r < kRows8; ++r) u[r] = r < R ? levels_q6_K(x[r][b], c) : _mm256_setzero_si256();
        transpose8x8(u, col);
        for (int j = 0; j < 8; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[c][j]), col[j]);
      }
    }
  }

  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    for (int64_t t = 0; t < n_tok; ++t) {
      const auto* y = reinterpret_cast<const block_q8_K*>(a + size_t(t) * as);
      for (int64_t b = 0; b < nb; ++b) {
        Toks& o = out[t * nb + b];
        o.d = y[b].d;
        for (int i = 0; i < kSub; ++i) o.bsum[i] = pair16(y[b].bsums[2 * i], y[b].bsums[2 * i + 1]);
      }
    }
  }

  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    TileState8<block_q8_K, C> st(a, as);
    auto& acc = st.acc;
    const auto& act = st.act;
    for (int64_t b = 0; b < nb; ++b) {
      const Rows& sb = rows[b];
      __m256i isum[C];
      for (int c = 0; c < C; ++c) isum[c] = _mm256_setzero_si256();
      for (int ch = 0; ch < kSub; ++ch) {
        for (int j0 = 0; j0 < 8; j0 += 2) {  // lines j0, j0 + 1: sub-block 2ch + j0 / 4
          const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i*>(sb.sc[2 * ch + j0 / 4]));
          const __m256i w0 = line(sb.line[ch][j0]), w1 = line(sb.line[ch][j0 + 1]);
          for (int c = 0; c < C; ++c) {
            const int8_t* q = act[c][b].qs + 32 * ch + 4 * j0;
            const __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(q)), _mm256_maddubs_epi16(w1, bcast4(q + 4)));
            isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(s16, sc));
            in_register(isum[c]);
          }
        }
      }
      const __m256 d = _mm256_load_ps(sb.d);
      for (int c = 0; c < C; ++c) {
        __m256i corr = _mm256_setzero_si256();
        for (int i = 0; i < kSub; ++i)
          corr = _mm256_add_epi32(corr, _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(sb.sc_pair[i])),
                                                          _mm256_set1_epi32(tb[c * nb + b].bsum[i])));
        const __m256i total = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(corr, 5));
        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(tb[c * nb + b].d)), _mm256_cvtepi32_ps(total), acc[c]);
      }
    }
    st.store(R, y, ldy);
  }
};

}  // namespace

void register_gemm_kquant_lanes_avx2(KernelSet& k) {
  set_gemm_lanes<LanesK<block_q4_K>>(k, GgmlType::Q4_K);
  set_gemm_lanes<LanesK<block_q5_K>>(k, GgmlType::Q5_K);
  set_gemm_lanes<Lanes6>(k, GgmlType::Q6_K);
  set_gemm_lanes<LanesK<block_iq4_xs>>(k, GgmlType::IQ4_XS);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
