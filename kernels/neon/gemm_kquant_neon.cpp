// Prefill GEMM for the K-quants (q2_K, q3_K, q4_K, q5_K, q6_K) and iq4_xs x q8_K
// activations, AArch64 NEON, SDOT and widening ARMv8.0 paths (the NEON
// target region; the path is picked from cpu_features() as for vec_dot in
// dot_neon.cpp, and where the CPU has FEAT_I8MM the SMMLA tile of gemm_kquant_i8mm_neon.cpp runs
// instead). Reference twin: the scalar set's gemm; tests/test_kernels_gemm.cpp
// and, for every path the host can run, tests/test_kernels_neon.cpp.
//
// One tile for all five formats: a 4-row tile's super-blocks are rewritten
// as plain integers by tensor/kquant_unpack (x = d*sc*q - dmin*mn, q 0..63,
// one scale and min per 16 elements; gemm_kquant_neon.h) once per call, then
// every token tile reads that form from L1/L2. q fits int8, so the signed x
// signed SDOT (or SMULL/SADALP) multiplies it by the activations directly.
//
// Micro-tile kR = 4 rows x kC = 4 tokens, per group of 16 * G elements
// (G = 2 for q4_K/q5_K, whose 32-element sub-blocks share a scale, else 1):
//   - each token: G activation registers (16 B each);
//   - each row: G weight registers; its scale is lane r of the group's
//     int32x4 of the 4 rows' scales;
//   - each (row, token) pair: G SDOTs into 4 int32 lanes, one MLA by the
//     scale's lane into the pair's int32x4 of the super-block (16 of them).
// Per group 4*16G B of weights + 16 B of scales + 4*16G B of activations
// (144 B for G = 1) for 4*4*16G int8 MACs (256): 0.56 B/MAC from L1/L2,
// against ~1.7 B/MAC for the per-row vec_dot, which also unpacks the weights
// for every token. Vector ops: 16 SDOT + 16 MLA per 256 MACs (G = 1), 32 SDOT
// + 16 MLA per 512 (G = 2); the widening path spends 4 ops per 16-byte dot.
// Per super-block and token the float step adds 16 / G MLALs for the min
// term, a 3-op reduction of the 4 rows' lanes and 6 float ops (~20% more).
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/neon/gemm_neon.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/gemm_kquant_neon.h"
#include "kernels/neon/gemm_tiles_neon.h"
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

// One super-block of a 4-row tile (one layout, and so one scratch size,
// for every format and path).
struct alignas(16) KPacked {
  int8_t q[kKR][256];   // row r: q in element order
  int32_t sc[16][kKR];  // group g: the rows' scales, the lanes of vmlaq_laneq_s32 (first 16 / G used)
  KScales s;
};

template <GgmlType T, class D>
struct KGemm {
  static constexpr int kR = kKR, kC = kKC, kBlock = QK_K, G = kGroup<T>;
  using Packed = KPacked;

  static void pack(int64_t nb, const uint8_t* w, size_t ws, int R, Packed* out) {
    pack_k_rows<T>(nb, w, ws, R, out, [](Packed& o, int r, const KBlockInt& u) {
      std::memcpy(o.q[r], u.q, 256);
      for (int g = 0; g < 16 / G; ++g) o.sc[g][r] = u.sc[G * g];
    });
  }

  template <int R, int C>
  struct Tile {
    static void run(int64_t nb, const Packed* w, const uint8_t* a, size_t as, float* y, size_t ldy) {
      const block_q8_K* act[C];
      for (int c = 0; c < C; ++c) act[c] = reinterpret_cast<const block_q8_K*>(a + size_t(c) * as);
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0);
      for (int64_t i = 0; i < nb; ++i) {
        const Packed& p = w[i];
        int32x4_t isum[R][C];
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) isum[r][c] = vdupq_n_s32(0);
        for (int g = 0; g < 16 / G; ++g) {
          const int32x4_t sc = vld1q_s32(p.sc[g]);
          int8x16_t av[C][G];
          for (int c = 0; c < C; ++c)
            for (int h = 0; h < G; ++h) av[c][h] = vld1q_s8(act[c][i].qs + 16 * (G * g + h));
          static_for<R>([&](auto r) {
            int8x16_t q[G];
            for (int h = 0; h < G; ++h) q[h] = vld1q_s8(p.q[r] + 16 * (G * g + h));
            for (int c = 0; c < C; ++c) {
              int32x4_t t = vdupq_n_s32(0);
              for (int h = 0; h < G; ++h) t = D::dot(t, q[h], av[c][h]);
              isum[r][c] = vmlaq_laneq_s32(isum[r][c], t, sc, decltype(r)::value);
            }
          });
        }
        // Each pair's 4 lanes summed, token c's rows side by side in lanes.
        int32x4_t rows[C];
        for (int c = 0; c < C; ++c) {
          int32x4_t v[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
          for (int r = 0; r < R; ++r) v[r] = isum[r][c];
          rows[c] = vpaddq_s32(vpaddq_s32(v[0], v[1]), vpaddq_s32(v[2], v[3]));
        }
        finish_super_block<G, C, kOffsetMins<T>>(acc, rows, p.s, act, i);
      }
      store_tile<R, C>(acc, y, ldy);
    }
  };
};

template <class D>
NeonGemm kgemm(GgmlType t) {
  switch (t) {
    case GgmlType::Q2_K: return tiled_gemm<KGemm<GgmlType::Q2_K, D>>();
    case GgmlType::Q3_K: return tiled_gemm<KGemm<GgmlType::Q3_K, D>>();
    case GgmlType::Q4_K: return tiled_gemm<KGemm<GgmlType::Q4_K, D>>();
    case GgmlType::Q5_K: return tiled_gemm<KGemm<GgmlType::Q5_K, D>>();
    case GgmlType::Q6_K: return tiled_gemm<KGemm<GgmlType::Q6_K, D>>();
    case GgmlType::IQ4_XS: return tiled_gemm<KGemm<GgmlType::IQ4_XS, D>>();
    default: return {};
  }
}

}  // namespace

NeonGemm gemm_kquant_neon(GgmlType t, NeonInt8 p) {
  switch (p) {
    case NeonInt8::Widen: return kgemm<Widen>(t);
    case NeonInt8::Sdot: return kgemm<DotProd>(t);
    default: return {};
  }
}

// Every path sums floats per super-block (and the set's vec_dot is the scalar
// one for q2_K/q3_K): gemm_reordered for all six.
void register_gemm_kquant_neon(KernelSet& k) {
  const NeonInt8 p = neon_int8_best();
  for (GgmlType t : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS}) {
    const NeonGemm g = neon_gemm(t, p);
    k.gemm[int(t)] = g.fn;
    k.gemm_scratch[int(t)] = g.scratch;
    k.gemm_reordered[int(t)] = true;
  }
}

}  // namespace edgellm

#include "kernels/isa_end.h"
