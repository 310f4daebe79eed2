// Prefill GEMM for the K-quants (q2_K..q6_K) x q8_K activations with i8mm
// (SMMLA), AArch64. Compiled with +i8mm (CMakeLists.txt gives only the
// *_i8mm_neon.cpp files that flag) and picked by register_gemm_kquant_neon
// only where hwcaps report i8mm. Reference twin: the scalar set's gemm;
// tests/test_kernels_gemm.cpp and tests/test_kernels_neon.cpp.
//
// The integer form, the groups of 16 * G elements that share a scale, the
// min term and the float step are gemm_kquant_neon.h's, as for the SDOT tile
// (gemm_kquant_neon.cpp); here the exact integer sums come from SMMLA, a
// 2x8 by 8x2 int8 matrix product (two rows x two tokens, 32 MACs, 1 op).
// Micro-tile kR = 4 rows x kC = 4 tokens = 2 row pairs x 2 token pairs; per
// group:
//   - each row pair: 2G registers packed once per call, chunk k = elements
//     8k..8k+7 of both rows side by side, and the int32x4 [sc0, sc0, sc1, sc1];
//   - each token pair: 2 x G x 16 B loaded, interleaved 8 bytes at a time by
//     2G ZIPs into the same chunks;
//   - each (row pair, token pair): 2G SMMLAs into one int32x4 [r0t0, r0t1,
//     r1t0, r1t1], one MLA by the pair's scales into the super-block's sum.
// Per group 4*16G B of weights + 2*16 B of scales + 4*16G B of activations
// (160 B for G = 1) for 256G int8 MACs: 0.63 B/MAC from L1/L2. Vector ops:
// 8 SMMLA + 4 MLA + 4 ZIP per 256 MACs (G = 1), 16 + 4 + 8 per 512 (G = 2),
// against 32 / 48 for the SDOT tile. Per super-block, 2 UZPs per token pair
// put each token's rows in lanes for the shared float step, whose min term
// (16 / G MLALs per token) now weighs more: ~30% on top of the SMMLA work.
//
// Edge tiles: an odd R packs a zero row as its pair's partner, an odd C
// reads its last token twice; those lanes are computed and never stored.
#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/neon/gemm_neon.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_i8mm_begin.h"  // i8mm code from here to kernels/isa_end.h
#include "kernels/neon/gemm_kquant_neon.h"
#include "kernels/neon/gemm_tiles_neon.h"

namespace edgellm {

namespace {

// One super-block of a 4-row tile (one layout for every format).
struct alignas(16) KPackedMmla {
  int8_t q[kKR / 2][32][16];   // pair p, chunk k: rows 2p and 2p+1, elements 8k..8k+7 each
  int32_t sc[kKR / 2][16][4];  // pair p, group g: sc_2p, sc_2p, sc_2p+1, sc_2p+1 (first 16 / G used)
  KScales s;
};

template <GgmlType T>
struct KMmla {
  static constexpr int kR = kKR, kC = kKC, kBlock = QK_K, G = kGroup<T>;
  using Packed = KPackedMmla;

  static void pack(int64_t nb, const uint8_t* w, size_t ws, int R, Packed* out) {
    pack_k_rows<T>(nb, w, ws, R, out, [](Packed& o, int r, const KBlockInt& u) {
      const int p = r / 2, h = r % 2;
      for (int k = 0; k < 32; ++k) std::memcpy(o.q[p][k] + 8 * h, u.q + 8 * k, 8);
      for (int g = 0; g < 16 / G; ++g) o.sc[p][g][2 * h] = o.sc[p][g][2 * h + 1] = u.sc[G * g];
    });
  }

  template <int R, int C>
  struct Tile {
    static constexpr int P = (R + 1) / 2, TP = (C + 1) / 2;  // row pairs, token pairs

    static void run(int64_t nb, const Packed* w, const uint8_t* a, size_t as, float* y, size_t ldy) {
      const block_q8_K* act[2 * TP];
      for (int c = 0; c < 2 * TP; ++c)  // an odd C's last pair: token C-1 twice
        act[c] = reinterpret_cast<const block_q8_K*>(a + size_t(std::min(c, C - 1)) * as);
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0);
      for (int64_t i = 0; i < nb; ++i) {
        const Packed& pk = w[i];
        int32x4_t isum[P][TP];
        for (int p = 0; p < P; ++p)
          for (int tp = 0; tp < TP; ++tp) isum[p][tp] = vdupq_n_s32(0);
        for (int g = 0; g < 16 / G; ++g) {
          int8x16_t az[TP][2 * G];
          for (int tp = 0; tp < TP; ++tp)
            for (int h = 0; h < G; ++h) {
              const size_t e = size_t(16 * (G * g + h));
              interleave8(vld1q_s8(act[2 * tp][i].qs + e), vld1q_s8(act[2 * tp + 1][i].qs + e), az[tp][2 * h],
                          az[tp][2 * h + 1]);
            }
          for (int p = 0; p < P; ++p) {
            const int32x4_t sc = vld1q_s32(pk.sc[p][g]);
            for (int tp = 0; tp < TP; ++tp) {
              int32x4_t t = vdupq_n_s32(0);
              for (int k = 0; k < 2 * G; ++k) t = vmmlaq_s32(t, vld1q_s8(pk.q[p][2 * G * g + k]), az[tp][k]);
              isum[p][tp] = vmlaq_s32(isum[p][tp], t, sc);
            }
          }
        }
        // [r0t0, r0t1, r1t0, r1t1] of pairs 0 and 1 -> each token's 4 rows in lanes.
        int32x4_t rows[2 * TP];
        for (int tp = 0; tp < TP; ++tp) {
          const int32x4_t lo = isum[0][tp], hi = P > 1 ? isum[P - 1][tp] : vdupq_n_s32(0);
          rows[2 * tp] = vuzp1q_s32(lo, hi);
          rows[2 * tp + 1] = vuzp2q_s32(lo, hi);
        }
        finish_super_block<G, C, kOffsetMins<T>>(acc, rows, pk.s, act, i);
      }
      store_tile<R, C>(acc, y, ldy);
    }
  };
};

}  // namespace

NeonGemm gemm_kquant_i8mm_neon(GgmlType t, NeonInt8 p) {
  if (p != NeonInt8::Smmla) return {};
  switch (t) {
    case GgmlType::Q2_K: return tiled_gemm<KMmla<GgmlType::Q2_K>>();
    case GgmlType::Q3_K: return tiled_gemm<KMmla<GgmlType::Q3_K>>();
    case GgmlType::Q4_K: return tiled_gemm<KMmla<GgmlType::Q4_K>>();
    case GgmlType::Q5_K: return tiled_gemm<KMmla<GgmlType::Q5_K>>();
    case GgmlType::Q6_K: return tiled_gemm<KMmla<GgmlType::Q6_K>>();
    case GgmlType::IQ4_XS: return tiled_gemm<KMmla<GgmlType::IQ4_XS>>();
    default: return {};
  }
}

}  // namespace edgellm

#include "kernels/isa_end.h"
