// Prefill GEMM for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0 activations, AVX-512 VNNI
// (KernelSet::gemm; the AVX-512 target region, only called when
// cpu_features().can_run_avx512()). Reference twin: the scalar set's gemm
// (one scalar vec_dot per row and token); tests/test_kernels_gemm.cpp.
//
// Layout: weight rows in the 16 int32 lanes ("rows in lanes"), not elements.
// A row tile of 32 rows is packed once per call (reused by every token): for
// each 32-element block, 8 zmm lines where line j holds, in lane r, bytes
// 4j..4j+3 of row r's block as unsigned levels u = w + kBias (q4_0: the
// nibbles, bias 8; q5_0: 5-bit levels, bias 16; q8_0: x ^ 0x80, bias 128;
// iq4_nl: its grid values ^ 0x80, bias 128, looked up once per row tile),
// plus the 16 rows' fp16 scales as floats, for each 16-row half. Per block,
// half and token:
//   - int32 accumulator := -kBias * sum(y) (per token and block, precomputed),
//   - 8 x vpdpbusd(acc, line j, broadcast of the token's 4 bytes 4j..4j+3):
//     16 rows x 32 elements = 512 exact int8 MACs,
//   - cvt to float, x (d_w of 16 rows * d_a), one FMA into the token's float
//     accumulator of 16 rows.
// 8 + 3 vector ops (+1 broadcast) per 512 MACs, where the "elements in lanes"
// layout a vec_dot uses needs dpbusd + cvt + mul + fma per 64 MACs (one
// block pair of one row and token): ~3.7x fewer vector ops, and no
// horizontal sums (a token's 16 results are one zmm store).
// Micro-tile: 32 rows (two 16-row halves, tile_halves) x up to 6 tokens: 12
// int32 + 12 float accumulators, two weight lines and a broadcast in
// registers. Each broadcast feeds both halves, so per block the loads are
// 16 lines + 6 x 8 broadcasts for 96 vpdpbusd (the 16-row x 8-token tile
// needed 8 + 64 for 64 and was bound by the load ports: ~335 against ~380
// GMAC/s per thread, Zen 5, 4.25 GHz; see BENCHMARKS.md). What bounds it now
// is the two pipes vpdpbusd shares with the FMAs: 96 + 12 per block and 6
// tokens, ~54 cycles for 6144 MACs, ~480 GMAC/s at 4.25 GHz. Per block of
// the tile: 16 weight lines (1152 B with scales, from L1/L2, reused by 6
// tokens) and 6 x 34 B of activations. A tile of <= 16 rows (the end of a
// range) runs the 16-row form, up to 6 tokens too.
//
// Arithmetic: the int32 dot of each block is exact and identical to vec_dot's;
// the float steps are d_w * d_a * dot summed over the blocks in order, one FMA
// chain per (row, token). vec_dot sums the same products in another order
// (lanes over elements, then a tree), so a GEMM result may differ from the
// decode one by float rounding (within the tolerance of every kernel,
// ~1e-6 of sum|w x|); KernelSet::gemm_reordered is set for these types.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read, and holds the helpers shared with the vec_dot kernels.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/gemm_lanes_avx512.h"

namespace edgellm {

namespace {


// A block's 32 weights as unsigned levels u = w + kBias, element order.
struct Q4 {
  using Block = block_q4_0;
  static constexpr int kBias = 8;
  static __m256i levels(const Block& b) { return nibbles(b.qs); }
};
struct Q5 {
  using Block = block_q5_0;
  static constexpr int kBias = 16;
  static __m256i levels(const Block& b) { return levels_q5(b); }
};
struct Q8 {
  using Block = block_q8_0;
  static constexpr int kBias = 128;
  static __m256i levels(const Block& b) { return _mm256_xor_si256(load256(b.qs), _mm256_set1_epi8(char(0x80))); }
};
struct IQ4NL {
  using Block = block_iq4_nl;
  static constexpr int kBias = 128;
  static __m256i levels(const Block& b) { return levels_iq4(b.qs); }
};

// One block of a 16-row tile: line j, lane r = bytes 4j..4j+3 of row r.
struct alignas(64) RowBlock {
  uint8_t line[8][64];
  float d[kLaneRows];
};

// Rows [0, R) of a tile; rows R..15 are zero (scale 0, so they add nothing;
// their lanes are never stored). Per block, the 16 rows' 32 levels (8 dwords
// each) are transposed in registers into the 8 lines: two 8 x 8 dword
// transposes and a join per line, ~56 shuffles per 16 rows. (One gather per
// line instead made packing 30% of a 16-token prefill on a 7B model.)
// Block b goes to out[b * stride] (stride 2: one half of a RowPair).
template <class W>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, RowBlock* out, size_t stride) {
  const typename W::Block* x[kLaneRows];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws);
  for (int64_t b = 0; b < nb; ++b) {
    RowBlock& o = out[size_t(b) * stride];
    __m256i u[kLaneRows];
    for (int r = 0; r < kLaneRows; ++r) {
      u[r] = r < R ? W::levels(x[r][b]) : _mm256_setzero_si256();
      o.d[r] = r < R ? half(x[r][b].d) : 0.0f;
    }
    rows_to_lines(u, o.line);
  }
}

// Two 16-row tiles' blocks side by side (rows 0..15, rows 16..31 of a 32-row tile).
struct alignas(64) RowPair {
  RowBlock half[2];
};

template <class W>
void pack_row_pairs(int64_t nb, const uint8_t* w, size_t ws, int R, RowPair* out) {
  pack_rows<W>(nb, w, ws, std::min(R, kLaneRows), &out->half[0], 2);
  if (R > kLaneRows) pack_rows<W>(nb, w + size_t(kLaneRows) * ws, ws, R - kLaneRows, &out->half[1], 2);
}

// H 16-row halves (16H rows, R of them stored) x C tokens: each broadcast
// of a token's 4 bytes feeds H vpdpbusd, so per block and C tokens the loads
// are 8H weight lines + 8C broadcasts for 8HC vpdpbusd. H = 2: 16 + 8C for
// 16C, where the 16-row tile's 8 + 8C for 8C left the load ports limiting;
// now the two vpdpbusd / FMA pipes do. C <= 6: 12 int32 + 12 float
// accumulators. H = 1 runs a tile of at most 16 rows (the last of a range),
// whose half[1] is left unpacked.
template <int H, int C>
void tile_halves(int64_t nb, const RowPair* rows, int R, const uint8_t* a, size_t as, const TokBlock* tb, float* y,
                 size_t ldy) {
  const TileState<block_q8_0, C> st(a, as);  // its activation rows; acc per half below
  const auto& act = st.act;
  __m512 acc[H][C];
  for (int h = 0; h < H; ++h)
    for (int c = 0; c < C; ++c) acc[h][c] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const RowPair& rb = rows[b];
    __m512i dot[H][C];
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h) dot[h][c] = _mm512_set1_epi32(tb[c * nb + b].corr);
    for (int j = 0; j < 8; ++j) {
      __m512i wl[H];
      for (int h = 0; h < H; ++h) wl[h] = _mm512_load_si512(rb.half[h].line[j]);
      for (int c = 0; c < C; ++c) {
        const __m512i x = _mm512_set1_epi32(load32(act[c][b].qs + 4 * j));
        for (int h = 0; h < H; ++h) dot[h][c] = _mm512_dpbusd_epi32(dot[h][c], wl[h], x);
      }
    }
    for (int c = 0; c < C; ++c) {
      const __m512 da = _mm512_set1_ps(tb[c * nb + b].d);
      for (int h = 0; h < H; ++h)
        acc[h][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[h][c]), _mm512_mul_ps(_mm512_load_ps(rb.half[h].d), da),
                                    acc[h][c]);
    }
  }
  for (int h = 0; h < H; ++h) store_rows(acc[h], std::min(R - h * kLaneRows, kLaneRows), y + h * kLaneRows, ldy);
}

// The format for gemm_lanes (kernels/gemm_lanes.h): 32-row tiles.
template <class W>
struct Lanes32 {
  using Rows = RowPair;
  using Toks = TokBlock;
  static constexpr int64_t kBlock = QK8_0;
  static constexpr int kRows = 2 * kLaneRows;
  static constexpr int kMaxTok = 6;
  static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out) {
    pack_row_pairs<W>(nb, w, ws, R, out);
  }
  static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out) {
    edgellm::pack_tokens(nb, a, as, n_tok, W::kBias, out);
  }
  template <int C>
  static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a, size_t as, const Toks* tb, float* y,
                   size_t ldy) {
    if (R <= kLaneRows) tile_halves<1, C>(nb, rows, R, a, as, tb, y, ldy);
    else tile_halves<2, C>(nb, rows, R, a, as, tb, y, ldy);
  }
};

}  // namespace

void register_gemm_avx512(KernelSet& k) {
  set_gemm_lanes<Lanes32<Q4>>(k, GgmlType::Q4_0);
  set_gemm_lanes<Lanes32<Q5>>(k, GgmlType::Q5_0);
  set_gemm_lanes<Lanes32<Q8>>(k, GgmlType::Q8_0);
  set_gemm_lanes<Lanes32<IQ4NL>>(k, GgmlType::IQ4_NL);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
