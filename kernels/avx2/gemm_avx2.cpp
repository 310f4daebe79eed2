// Prefill GEMM for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0 activations, AVX2 + FMA
// (KernelSet::gemm; AVX2 + FMA + F16C target region, only called when
// cpu_features().can_run_avx2()). Reference twin: the scalar set's gemm
// (one scalar vec_dot per row and token); tests/test_kernels_gemm.cpp.
//
// Layout: weight rows in the 8 int32 lanes of a ymm ("rows in lanes", the
// AVX-512 GEMM's layout at half the width; driver kernels/gemm_lanes.h). A
// tile of 8 rows is packed once per call and reused by every token: per
// 32-element block, lines where line j holds, in lane r, bytes 4j..4j+3 of
// row r's block, plus the 8 rows' scales as floats. AVX2 has no u8 x s8
// four-way dot (VNNI), so each line pairs with the token's broadcast bytes
// through vpmaddubsw (u8 x s8 pairs into int16) and vpmaddwd(1):
//   - q4_0 (levels u = q + 8 in 0..15): the 8 lines' int16 pair sums add up
//     in int16 (at most 8 * 2 * 15 * 127 = 30480 < 32767: exact, q8_0
//     activations are never -128), then one vpmaddwd to int32, plus the
//     token's -8 * sum(y) for the bias: per block and token 8 maddubs + 7
//     adds + 4 (madd, add, cvt, FMA) + 1 mul for 8 x 32 = 256 MACs;
//   - q5_0 (levels 0..31): the same in two groups of 4 lines (4 * 2 * 31 *
//     127 = 31496), one more madd and add;
//   - q8_0 and iq4_nl (signed values, |x| <= 127): unsigned levels would
//     overflow the int16 pairs (2 * 255 * 127), so lines hold |x| and x and
//     each pairs with sign(y, x) (dot_avx2.cpp's sign trick), one madd per
//     line: 8 x (sign, maddubs, madd, add) + 4 per 256 MACs.
// The elements-in-lanes tile this replaces spent 6 ops per 32 MACs of a
// (row, token) pair (maddubs, madd, bias, cvt, mul, FMA): 48 per 256 MACs for
// q4_0 against ~20 here, and a horizontal reduction per tile.
// Micro-tile: 8 rows x up to 4 tokens: 4 int32 (+ 4 int16) and 4 float
// accumulators, a line and a broadcast in the 16 ymm registers.
//
// Arithmetic: each block's integer dot is exact and the same as vec_dot's;
// the float steps are d_w * d_a * dot summed over the blocks in order, one
// FMA chain per (row, token). vec_dot sums the same products in another
// order, so a GEMM result may differ from the decode one by float rounding
// (within every kernel test's tolerance); KernelSet::gemm_reordered is set.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/shared_x86.h"
#include "kernels/avx2/simd_avx2.h"
#include "kernels/gemm_lanes.h"

namespace edgellm {

namespace {

// Per weight format: the block's 32 weights as one 32-byte row (levels() for
// the unsigned formats, values() for the signed ones), the bias of the
// levels and the lines a block needs per row tile.
//   kGroup: lines whose int16 pair sums may be added before widening (0: the
//   signed formats, widened line by line).
struct Q4 {
  using Block = block_q4_0;
  static constexpr int kBias = 8, kGroup = 8, kLines = 8;
  static __m256i row(const Block& b) { return nibbles(b.qs); }
};
struct Q5 {
  using Block = block_q5_0;
  static constexpr int kBias = 16, kGroup = 4, kLines = 8;
  static __m256i row(const Block& b) { return levels_q5(b.qs, b.qh); }
};
struct Q8 {
  using Block = block_q8_0;
  static constexpr int kBias = 0, kGroup = 0, kLines = 16;  // |x| lines, then x lines
  static __m256i row(const Block& b) { return load256(b.qs); }
};
struct IQ4NL {
  using Block = block_iq4_nl;
  static constexpr int kBias = 0, kGroup = 0, kLines = 16;
  static __m256i row(const Block& b) { return values_iq4(b.qs); }
};

// One block of an 8-row tile: line j, lane r = bytes 4j..4j+3 of row r
// (signed formats: lines 8..15 the same of the signed values, 0..7 of |x|).
template <int kLines>
struct alignas(32) RowBlock {
  uint8_t line[kLines][32];
  float d[kRows8];
};

// The format for gemm_lanes (kernels/gemm_lanes.h) of weight type W.
template <class W>
struct Lanes8 {
  using Rows = RowBlock<W::kLines>;
  using Toks = TokBlock;
  static constexpr int kRows = kRows8;
  static constexpr int64_t kBlock = QK8_0;
  static constexpr int kMaxTok = 4;

  // Rows [0, R) of a tile; rows R..7 are zero with scale 0 (their lanes add
  // nothing and are never stored). Per block the 8 rows' 32 bytes are
  // transposed in registers into the lines (24 shuffles per 8 rows).
  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) {
    const typename W::Block* x[kRows8];
    for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws);
    for (int64_t b = 0; b < nb; ++b) {
      Rows& o = out[b];
      __m256i u[kRows8], col[kRows8];
      for (int r = 0; r < kRows8; ++r) {
        u[r] = r < R ? W::row(x[r][b]) : _mm256_setzero_si256();
        o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
      }
      transpose8x8(u, col);
      for (int j = 0; j < 8; ++j) {
        if constexpr (W::kGroup == 0) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[j]), _mm256_sign_epi8(col[j], col[j]));
          _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[8 + j]), col[j]);
        } else {
          _mm256_store_si256(reinterpret_cast<__m256i*>(o.line[j]), col[j]);
        }
      }
    }
  }

  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    edgellm::pack_tokens(nb, a, as, n_tok, W::kBias, out);
  }

  // 8 rows (R of them stored) x C tokens.
  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    TileState8<block_q8_0, C> st(a, as);
    auto& acc = st.acc;
    const auto& act = st.act;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < nb; ++b) {
      const Rows& rb = rows[b];
      __m256i dot[C];
      for (int c = 0; c < C; ++c) dot[c] = _mm256_set1_epi32(tb[c * nb + b].corr);
      if constexpr (W::kGroup > 0) {
        for (int j0 = 0; j0 < 8; j0 += W::kGroup) {
          __m256i s16[C];
          for (int j = j0; j < j0 + W::kGroup; ++j) {
            const __m256i wl = _mm256_load_si256(reinterpret_cast<const __m256i*>(rb.line[j]));
            for (int c = 0; c < C; ++c) {
              const __m256i p = _mm256_maddubs_epi16(wl, bcast4(act[c][b].qs + 4 * j));
              s16[c] = j == j0 ? p : _mm256_add_epi16(s16[c], p);
              in_register(s16[c]);
            }
          }
          for (int c = 0; c < C; ++c) dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(s16[c], ones));
        }
      } else {
        for (int j = 0; j < 8; ++j) {
          const __m256i wa = _mm256_load_si256(reinterpret_cast<const __m256i*>(rb.line[j]));
          const __m256i wx = _mm256_load_si256(reinterpret_cast<const __m256i*>(rb.line[8 + j]));
          for (int c = 0; c < C; ++c) {
            const __m256i sy = _mm256_sign_epi8(bcast4(act[c][b].qs + 4 * j), wx);
            dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(_mm256_maddubs_epi16(wa, sy), ones));
            in_register(dot[c]);
          }
        }
      }
      const __m256 dw = _mm256_load_ps(rb.d);
      for (int c = 0; c < C; ++c)
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[c]), _mm256_mul_ps(dw, _mm256_set1_ps(tb[c * nb + b].d)), acc[c]);
    }
    st.store(R, y, ldy);
  }
};

}  // namespace

void register_gemm_avx2(KernelSet& k) {
  set_gemm_lanes<Lanes8<Q4>>(k, GgmlType::Q4_0);
  set_gemm_lanes<Lanes8<Q5>>(k, GgmlType::Q5_0);
  set_gemm_lanes<Lanes8<Q8>>(k, GgmlType::Q8_0);
  set_gemm_lanes<Lanes8<IQ4NL>>(k, GgmlType::IQ4_NL);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
