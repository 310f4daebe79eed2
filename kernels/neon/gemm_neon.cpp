// Prefill GEMM for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0 activations, AArch64 NEON
// (KernelSet::gemm; the NEON target region enables dotprod, and the SDOT
// variant is only picked where the CPU has FEAT_DotProd, else the
// widening ARMv8.0 one, exactly as for vec_dot in dot_neon.cpp; where it has
// FEAT_I8MM the SMMLA tile of gemm_i8mm_neon.cpp instead). Reference twin:
// the scalar set's gemm; tests/test_kernels_gemm.cpp, and every path the host
// can run in tests/test_kernels_neon.cpp. Also here: the path choice for all
// kernels/neon GEMMs (kernels/neon/gemm_neon.h).
//
// Micro-tile: kR = 4 weight rows x kC = 4 tokens over the whole row (K), one
// 32-element block (two q registers of int8) per step. 16 float32x4
// accumulators + the token's two activation registers + 4 scale products
// leave room in the 32 vector registers for the weight registers.
//   - each weight row: its block, prepared once per 4-row tile by pack
//     (not once per token tile): 32 signed bytes (q4_0: the nibbles minus 8,
//     q5_0: with the fifth bits, minus 16,
//     split into elements 0..15 and 16..31; q8_0: as is) and its scale as a
//     float, the 4 rows' scales side by side in one float32x4;
//   - each token: its q8_0 block (2 x 16 B) and d_a, times the 4 row scales
//     (one vmulq: the 4 products d_w * d_a of the column);
//   - each (row, token) pair: two SDOTs (or 2 x SMULL + SADALP widening pairs
//     without dotprod) into 4 int32 lanes, int -> float, one FMA by the lane
//     holding d_w * d_a.
// Per step 4*32 B of weights + 16 B of scales + 4*34 B of activations = 280 B
// from L1/L2 for 16*32 = 512 int8 MACs (0.55 B/MAC, against 1.6-2.1 B/MAC for
// a per-row vec_dot, which also unpacks q4_0 for every token); 4 vector ops
// per pair (2 SDOT, cvt, FMA) against ~1 load per pair: ALU-bound.
//
// Every (row, token) result is bit-identical to the set's vec_dot (tested):
// same int32 lanes, same d_w * d_a, same FMAs in the same order: vec_dot runs
// two chains (even blocks, odd blocks) and sums them with vaddvq_f32; the tile
// runs the even blocks as a first pass (accumulators parked in L1), the odd
// ones as a second, and sums each pair the same way. So batching never
// changes a logit.
#include "kernels/neon/gemm_neon.h"

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/gemm_tiles_neon.h"
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

constexpr int kTileR = 4, kTileC = 4;  // rows x tokens

// One block of a 4-row tile (one layout, and so one scratch size, for
// q4_0, q5_0 and q8_0).
struct alignas(16) QPacked {
  int8_t q[kTileR][32];  // row r's 32 signed values
  float d[kTileR];       // row r's scale (0 for rows past R: never read into a result)
};

template <class W, class D>
struct QGemm {
  static constexpr int kR = kTileR, kC = kTileC, kBlock = QK8_0;
  using Packed = QPacked;

  static void pack(int64_t nb, const uint8_t* w, size_t ws, int R, Packed* out) {
    for (int64_t i = 0; i < nb; ++i)
      for (int r = 0; r < kR; ++r) {
        if (r < R) {
          const auto& x = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws)[i];
          int8x16_t lo, hi;
          W::values(x, lo, hi);
          vst1q_s8(out[i].q[r], lo);
          vst1q_s8(out[i].q[r] + 16, hi);
          out[i].d[r] = half(x.d);
        } else {
          out[i].d[r] = 0.0f;
        }
      }
  }

  template <int R, int C>
  struct Tile {
    static void run(int64_t nb, const Packed* w, const uint8_t* a, size_t as, float* y, size_t ldy) {
      const block_q8_0* ya[C];
      for (int c = 0; c < C; ++c) ya[c] = reinterpret_cast<const block_q8_0*>(a + size_t(c) * as);
      float32x4_t acc[R][C];
      auto step = [&](int64_t i) {
        const Packed& p = w[i];
        const float32x4_t dw = vld1q_f32(p.d);
        for (int c = 0; c < C; ++c) {
          const block_q8_0& yb = ya[c][i];
          const int8x16_t ylo = vld1q_s8(yb.qs), yhi = vld1q_s8(yb.qs + 16);
          const float32x4_t prod = vmulq_n_f32(dw, half(yb.d));  // lane r: d_w(r) * d_a
          static_for<R>([&](auto r) {
            const int32x4_t s = D::dot(D::dot(vdupq_n_s32(0), vld1q_s8(p.q[r]), ylo), vld1q_s8(p.q[r] + 16), yhi);
            acc[r][c] = vfmaq_laneq_f32(acc[r][c], vcvtq_f32_s32(s), prod, decltype(r)::value);
          });
        }
      };
      // vec_dot's schedule: block i goes to chain i % 2, result = vaddvq(chain0 +
      // chain1). Chain 0 (even blocks) is one pass, parked in L1; chain 1 another.
      float32x4_t chain0[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = vdupq_n_f32(0);
      for (int64_t i = 0; i < nb; i += 2) step(i);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
          chain0[r][c] = acc[r][c];
          acc[r][c] = vdupq_n_f32(0);
        }
      for (int64_t i = 1; i < nb; i += 2) step(i);
      for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r) y[size_t(c) * ldy + size_t(r)] = vaddvq_f32(vaddq_f32(chain0[r][c], acc[r][c]));
    }
  };
};

}  // namespace

NeonGemm gemm_q_neon(GgmlType t, NeonInt8 p) {
  if (p == NeonInt8::Smmla) return {};
  const bool sdot = p == NeonInt8::Sdot;
  switch (t) {
    case GgmlType::Q4_0: return sdot ? tiled_gemm<QGemm<Q4, DotProd>>() : tiled_gemm<QGemm<Q4, Widen>>();
    case GgmlType::Q5_0: return sdot ? tiled_gemm<QGemm<Q5, DotProd>>() : tiled_gemm<QGemm<Q5, Widen>>();
    case GgmlType::Q8_0: return sdot ? tiled_gemm<QGemm<Q8, DotProd>>() : tiled_gemm<QGemm<Q8, Widen>>();
    case GgmlType::IQ4_NL: return sdot ? tiled_gemm<QGemm<IQ4NL, DotProd>>() : tiled_gemm<QGemm<IQ4NL, Widen>>();
    default: return {};
  }
}

const char* neon_int8_name(NeonInt8 p) {
  switch (p) {
    case NeonInt8::Widen: return "widen";
    case NeonInt8::Sdot: return "sdot";
    case NeonInt8::Smmla: return "smmla";
  }
  return "?";
}

bool neon_can_run(NeonInt8 p) {
  switch (p) {
    case NeonInt8::Widen: return true;  // Advanced SIMD: every AArch64 CPU
    case NeonInt8::Sdot: return cpu_features().dotprod;
    case NeonInt8::Smmla: return cpu_features().i8mm;
  }
  return false;
}

NeonInt8 neon_int8_best() {
  for (NeonInt8 p : {NeonInt8::Smmla, NeonInt8::Sdot})
    if (neon_can_run(p)) return p;
  return NeonInt8::Widen;
}

NeonGemm neon_gemm(GgmlType t, NeonInt8 p) {
  for (auto get : {gemm_q_neon, gemm_q_i8mm_neon, gemm_kquant_neon, gemm_kquant_i8mm_neon})
    if (const NeonGemm g = get(t, p)) return g;
  return {};
}

int neon_gemm_variants(GgmlType t, NeonGemm* out, const char** names, int max) {
  int n = 0;
  for (NeonInt8 p : {NeonInt8::Widen, NeonInt8::Sdot, NeonInt8::Smmla}) {
    const NeonGemm f = neon_can_run(p) ? neon_gemm(t, p) : NeonGemm{};
    if (f && n < max) names[n] = neon_int8_name(p), out[n++] = f;
  }
  return n;
}

// Sdot / Widen: bit-identical to the set's vec_dot, which makes the same
// choice (see above). Smmla sums each block's 32 products in one int32 lane,
// vec_dot in four: fewer float steps, so results differ in the last bits.
void register_gemm_neon(KernelSet& k) {
  const NeonInt8 p = neon_int8_best();
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::IQ4_NL}) {
    const NeonGemm g = neon_gemm(t, p);
    k.gemm[int(t)] = g.fn;
    k.gemm_scratch[int(t)] = g.scratch;
    k.gemm_reordered[int(t)] = p == NeonInt8::Smmla;
  }
}

}  // namespace edgellm

#include "kernels/isa_end.h"
