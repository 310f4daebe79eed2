// What every kernels/neon prefill GEMM (KernelSet::gemm) shares: the driver
// that walks a matrix in register-blocked micro-tiles, the store of a tile's
// results, and the signed bytes of a q4_0 / q8_0 block. Internal linkage:
// this header is included in target regions with different extensions (the
// *_i8mm_neon.cpp files add +i8mm), and no copy may be merged across them.
//
// A kernel K describes its micro-tile and its packed weight layout:
//   K::kR, K::kC   rows x tokens of the micro-tile;
//   K::kBlock      elements per weight block (32, or 256 for the K-quants);
//   K::Packed      one block of kR rows in the tile's layout;
//   K::pack(nb, w, ws, R, Packed* out)   rows 0..R-1 of a tile, nb blocks
//                  (out[i]: block i; rows R..kR-1 of an edge tile: zeros);
//   K::Tile<R, C>::run(nb, packed, a, as, y, ldy)   R x C results, y[c * ldy + r].
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/neon/gemm_tiles_neon.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/neon/gemm_neon.h"
#include "kernels/neon/simd_neon.h"
#include "kernels/tile_table.h"
#include "tensor/blocks.h"

namespace edgellm {
namespace {

// f(std::integral_constant<int, i>{}) for i = 0 .. N-1: the lane arguments of
// the by-element intrinsics (vmlaq_laneq_s32, ...) must be constants. Pass
// them as decltype(i)::value: GCC folds the integral_constant's conversion
// only when optimizing, and a Debug (-O0) build must compile too.
template <int N, class F>
inline void static_for(F&& f) {
  [&]<int... i>(std::integer_sequence<int, i...>) { (f(std::integral_constant<int, i>{}), ...); }(
      std::make_integer_sequence<int, N>{});
}

// Scratch (GemmScratchFn) of gemm_tiled<K>: one kR-row tile's packed blocks,
//   K::Packed[nb]      with nb = n / K::kBlock, whatever n_rows and n_tok,
// rounded up to 64 B. Per block: q4_0 / q5_0 / q8_0 144 B (SDOT, widening),
// 160 B (SMMLA); per 256-element super-block of the K-quants 1440 B (SDOT,
// widening), 1696 B (SMMLA); e.g. a 4864-wide q4_0 row: 152 * 144 = 21.4 KB.
template <class K>
size_t gemm_tiled_scratch(int64_t n, int64_t, int64_t) {
  return scratch_round64(size_t(n / K::kBlock) * sizeof(typename K::Packed));
}

// Rows outer: a kR-row tile is packed once (the per-block unpacking is paid
// once per call, not once per token) and stays in L1/L2 while every token
// tile reads it; tokens inner: the activation rows stream from L2 (matmul
// hands over blocks of tokens that fit). Edge tiles (rows % kR, tokens % kC)
// are the same template at smaller R x C. The packed tile lives in the
// caller's scratch (gemm_tiled_scratch<K> bytes).
template <class K>
void gemm_tiled(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                float* y, size_t ldy, void* scratch) {
  using Tiles = TileTable<K::template Tile, K::kR, K::kC>;
  const int64_t nb = n / K::kBlock;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  auto* packed = static_cast<typename K::Packed*>(scratch);
  for (int64_t r0 = 0; r0 < n_rows; r0 += K::kR) {
    const int R = int(std::min<int64_t>(K::kR, n_rows - r0));
    K::pack(nb, wb + size_t(r0) * ws, ws, R, packed);
    float* yr = y + size_t(r0);
    int64_t t0 = 0;
    for (const auto full = Tiles::get(R, K::kC); t0 + K::kC <= n_tok; t0 += K::kC)
      full(nb, packed, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
    if (t0 < n_tok) Tiles::get(R, int(n_tok - t0))(nb, packed, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
  }
}

// The kernel set's pair of entries for gemm_tiled<K>.
template <class K>
constexpr NeonGemm tiled_gemm() {
  return NeonGemm{gemm_tiled<K>, gemm_tiled_scratch<K>};
}

// Token c's results, rows in lanes (acc[c] lane r: row r), to y[c * ldy + r]
// for r < R only: never a cell outside the R x C rectangle.
template <int R, int C>
inline void store_tile(const float32x4_t* acc, float* y, size_t ldy) {
  static_assert(R >= 1 && R <= 4);
  for (int c = 0; c < C; ++c) {
    float* yc = y + size_t(c) * ldy;
    if constexpr (R == 4) {
      vst1q_f32(yc, acc[c]);
    } else {
      static_for<R>([&](auto r) { yc[r] = vgetq_lane_f32(acc[c], decltype(r)::value); });
    }
  }
}

// Two 16-byte rows x, y as the 2x8 operands of SMMLA (row-major, 8 bytes per
// row): lo = x[0..7] y[0..7], hi = x[8..15] y[8..15]. For weight rows when
// packing and for token pairs on the fly (2 ZIPs per 2 x 16 loaded bytes).
inline void interleave8(int8x16_t x, int8x16_t y, int8x16_t& lo, int8x16_t& hi) {
  lo = vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(x), vreinterpretq_s64_s8(y)));
  hi = vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(x), vreinterpretq_s64_s8(y)));
}

// The 32 signed values of a q4_0 / q5_0 / q8_0 / iq4_nl block: elements 0..15 in lo, 16..31 in hi.
struct Q4 {
  using Block = block_q4_0;
  static void values(const Block& x, int8x16_t& lo, int8x16_t& hi) {  // nibble - 8
    const uint8x16_t b = vld1q_u8(x.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(0x0F))), eight);
    hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(b, 4)), eight);
  }
};
struct Q5 {  // q - 16, as vec_dot_q5_0 builds them (simd_neon.h)
  using Block = block_q5_0;
  static void values(const Block& x, int8x16_t& lo, int8x16_t& hi) { values_q5_0(x, lo, hi); }
};
struct Q8 {
  using Block = block_q8_0;
  static void values(const Block& x, int8x16_t& lo, int8x16_t& hi) {
    lo = vld1q_s8(x.qs);
    hi = vld1q_s8(x.qs + 16);
  }
};
// iq4_nl: q4_0's nibble layout, each nibble its grid value by one TBL (as
// vec_dot_iq4_nl builds them, dot_iq4_neon.cpp); then the q8_0 tile.
struct IQ4NL {
  using Block = block_iq4_nl;
  static void values(const Block& x, int8x16_t& lo, int8x16_t& hi) {
    const int8x16_t grid = vld1q_s8(kvalues_iq4nl);
    const uint8x16_t b = vld1q_u8(x.qs);
    lo = vqtbl1q_s8(grid, vandq_u8(b, vdupq_n_u8(0x0F)));
    hi = vqtbl1q_s8(grid, vshrq_n_u8(b, 4));
  }
};

}  // namespace
}  // namespace edgellm
