// Prefill GEMM for q4_0, q5_0 and q8_0 weights x q8_0 activations with i8mm
// (SMMLA), AArch64. Compiled with +i8mm (CMakeLists.txt gives only the
// *_i8mm_neon.cpp files that flag) and picked by register_gemm_neon only where
// hwcaps report i8mm. Reference twin: the scalar set's gemm;
// tests/test_kernels_gemm.cpp and tests/test_kernels_neon.cpp.
//
// SMMLA multiplies a 2x8 int8 matrix (two weight rows, 8 elements each) by an
// 8x2 one (two tokens) into a 2x2 int32 tile: 32 MACs, 1 op, where SDOT does
// 16 MACs of one (row, token) pair. Micro-tile kR = 4 rows x kC = 4 tokens =
// 2 row pairs x 2 token pairs, one 32-element block per step:
//   - each row pair: its block, packed once per 4-row tile: 4 registers, chunk
//     k = elements 8k..8k+7 of both rows side by side, and [d0, d0, d1, d1];
//   - each token pair: 4 x 16 B loaded, interleaved 8 bytes at a time by 4
//     ZIPs into the same chunks, and [da0, da1, da0, da1];
//   - each (row pair, token pair): 4 SMMLAs into one int32x4 [r0t0, r0t1,
//     r1t0, r1t1] (the whole block's dot in each lane), int -> float, one FMA
//     by the lanes' d_w * d_a.
// Per step 4*32 B of weights + 32 B of scales + 4*34 B of activations = 296 B
// from L1/L2 for 512 int8 MACs (0.58 B/MAC); 16 SMMLA + 8 ZIP + 4 * (cvt, FMA,
// mul) = 36 vector ops per 512 MACs, against 64 for the SDOT tile.
//
// Each block's 32 products land in one int32 lane (SDOT's vec_dot keeps 4
// lanes per block in float): the float sums differ from vec_dot in the last
// bits, so the set says gemm_reordered for q4_0 / q8_0 on this path.
//
// Edge tiles: an odd R packs a zero row as its pair's partner, an odd C
// reads its last token twice; those lanes are computed and never stored.
#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/neon/gemm_neon.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_i8mm_begin.h"  // i8mm code from here to kernels/isa_end.h
#include "kernels/neon/gemm_tiles_neon.h"
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

constexpr int kTileR = 4, kTileC = 4;  // rows x tokens

// One block of a 4-row tile (one layout for q4_0 and q8_0).
struct alignas(16) QPackedMmla {
  int8_t q[kTileR / 2][4][16];  // pair p, chunk k: rows 2p and 2p+1, elements 8k..8k+7 each
  float d[kTileR / 2][4];       // pair p: d_2p, d_2p, d_2p+1, d_2p+1 (the lanes of SMMLA's 2x2 tile)
};

template <class W>
struct QMmla {
  static constexpr int kR = kTileR, kC = kTileC, kBlock = QK8_0;
  using Packed = QPackedMmla;

  static void pack(int64_t nb, const uint8_t* w, size_t ws, int R, Packed* out) {
    for (int64_t i = 0; i < nb; ++i)
      for (int p = 0; p < kR / 2; ++p) {
        int8x16_t lo[2], hi[2];
        float d[2];
        for (int h = 0; h < 2; ++h) {
          const int r = 2 * p + h;
          if (r < R) {
            const auto& x = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws)[i];
            W::values(x, lo[h], hi[h]);
            d[h] = half(x.d);
          } else {
            lo[h] = hi[h] = vdupq_n_s8(0);
            d[h] = 0.0f;
          }
        }
        int8x16_t c[4];
        interleave8(lo[0], lo[1], c[0], c[1]);
        interleave8(hi[0], hi[1], c[2], c[3]);
        for (int k = 0; k < 4; ++k) vst1q_s8(out[i].q[p][k], c[k]);
        const float32x4_t dd = {d[0], d[0], d[1], d[1]};
        vst1q_f32(out[i].d[p], dd);
      }
  }

  template <int R, int C>
  struct Tile {
    static constexpr int P = (R + 1) / 2, TP = (C + 1) / 2;  // row pairs, token pairs

    static void run(int64_t nb, const Packed* w, const uint8_t* a, size_t as, float* y, size_t ldy) {
      const block_q8_0* act[2 * TP];
      for (int c = 0; c < 2 * TP; ++c)  // an odd C's last pair: token C-1 twice
        act[c] = reinterpret_cast<const block_q8_0*>(a + size_t(std::min(c, C - 1)) * as);
      float32x4_t acc[P][TP];
      for (int p = 0; p < P; ++p)
        for (int tp = 0; tp < TP; ++tp) acc[p][tp] = vdupq_n_f32(0);
      for (int64_t i = 0; i < nb; ++i) {
        const Packed& pk = w[i];
        for (int tp = 0; tp < TP; ++tp) {
          const block_q8_0 &x = act[2 * tp][i], &z = act[2 * tp + 1][i];
          int8x16_t az[4];
          interleave8(vld1q_s8(x.qs), vld1q_s8(z.qs), az[0], az[1]);
          interleave8(vld1q_s8(x.qs + 16), vld1q_s8(z.qs + 16), az[2], az[3]);
          const float dx = half(x.d), dz = half(z.d);
          const float32x4_t da = {dx, dz, dx, dz};
          for (int p = 0; p < P; ++p) {
            int32x4_t t = vdupq_n_s32(0);
            for (int k = 0; k < 4; ++k) t = vmmlaq_s32(t, vld1q_s8(pk.q[p][k]), az[k]);
            acc[p][tp] = vfmaq_f32(acc[p][tp], vcvtq_f32_s32(t), vmulq_f32(vld1q_f32(pk.d[p]), da));
          }
        }
      }
      // [r0t0, r0t1, r1t0, r1t1] of pairs 0 and 1 -> each token's 4 rows in lanes.
      float32x4_t out[2 * TP];
      for (int tp = 0; tp < TP; ++tp) {
        const float32x4_t lo = acc[0][tp], hi = P > 1 ? acc[P - 1][tp] : vdupq_n_f32(0);
        out[2 * tp] = vuzp1q_f32(lo, hi);
        out[2 * tp + 1] = vuzp2q_f32(lo, hi);
      }
      store_tile<R, C>(out, y, ldy);
    }
  };
};

}  // namespace

NeonGemm gemm_q_i8mm_neon(GgmlType t, NeonInt8 p) {
  if (p != NeonInt8::Smmla) return {};
  switch (t) {
    case GgmlType::Q4_0: return tiled_gemm<QMmla<Q4>>();
    case GgmlType::Q5_0: return tiled_gemm<QMmla<Q5>>();
    case GgmlType::Q8_0: return tiled_gemm<QMmla<Q8>>();
    case GgmlType::IQ4_NL: return tiled_gemm<QMmla<IQ4NL>>();
    default: return {};
  }
}

}  // namespace edgellm

#include "kernels/isa_end.h"
