// Prefill GEMM for q4_0 and q8_0 weights x q8_0 activations, AArch64 NEON
// (KernelSet::gemm; this folder is compiled with -march=armv8.2-a+dotprod+fp16,
// and the SDOT variant is only picked when hwcaps report dotprod, else the
// widening ARMv8.0 one, exactly as for vec_dot in dot_neon.cpp). Reference
// twin: the scalar set's gemm; tests/test_kernels_gemm.cpp.
//
// Micro-tile: kR = 4 weight rows x kC = 4 tokens over the whole row (K), one
// 32-element block (two q registers of int8) per step. 16 float32x4
// accumulators + the token's two activation registers + 4 scale products
// leave room in the 32 vector registers for the weight registers.
//   - each weight row: its block, prepared once per 4-row tile by pack_rows
//     (not once per token tile): 32 signed bytes (q4_0: the nibbles minus 8,
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
//
// Edge tiles (rows % 4, tokens % 4) are the same template at smaller R x C.
#include <arm_neon.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif

namespace edgellm {

namespace {

constexpr int kR = 4, kC = 4;

inline float half(uint16_t h) { return fp16_to_f32(h); }  // as dot_neon.cpp

struct DotProd {
  static int32x4_t dot(int32x4_t acc, int8x16_t x, int8x16_t y) { return vdotq_s32(acc, x, y); }
};
struct Widen {
  static int32x4_t dot(int32x4_t acc, int8x16_t x, int8x16_t y) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
    return vpadalq_s16(acc, vmull_high_s8(x, y));
  }
};

struct alignas(16) Line {
  int8_t b[16];
};

// One block as two lines of signed bytes: elements 0..15 and 16..31.
struct Q4 {
  using Block = block_q4_0;
  static void pack(const Block& x, Line* l) {
    const uint8x16_t b = vld1q_u8(x.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    vst1q_s8(l[0].b, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(0x0F))), eight));
    vst1q_s8(l[1].b, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(b, 4)), eight));
  }
};
struct Q8 {
  using Block = block_q8_0;
  static void pack(const Block& x, Line* l) {
    vst1q_s8(l[0].b, vld1q_s8(x.qs));
    vst1q_s8(l[1].b, vld1q_s8(x.qs + 16));
  }
};

// Block i of row r: lines q[(i*kR + r)*2 + {0, 1}], scale d[i*kR + r] (rows
// past R of an edge tile: scale 0, never read into a result).
template <class W>
void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Line* q, float* d) {
  for (int64_t i = 0; i < nb; ++i)
    for (int r = 0; r < kR; ++r) {
      if (r < R) {
        const auto& x = reinterpret_cast<const typename W::Block*>(w + size_t(r) * ws)[i];
        W::pack(x, q + (i * kR + r) * 2);
        d[i * kR + r] = half(x.d);
      } else {
        d[i * kR + r] = 0.0f;
      }
    }
}

using TileFn = void (*)(int64_t nb, const Line* wq, const float* wd, const uint8_t* a, size_t as, float* y,
                        size_t ldy);

template <class D, int R, int C>
void tile(int64_t nb, const Line* wq, const float* wd, const uint8_t* a, size_t as, float* y, size_t ldy) {
  const block_q8_0* ya[C];
  for (int c = 0; c < C; ++c) ya[c] = reinterpret_cast<const block_q8_0*>(a + size_t(c) * as);
  float32x4_t acc[R][C];
  auto step = [&](int64_t i) {
    const Line* q = wq + i * kR * 2;
    const float32x4_t dw = vld1q_f32(wd + i * kR);
    for (int c = 0; c < C; ++c) {
      const block_q8_0& yb = ya[c][i];
      const int8x16_t ylo = vld1q_s8(yb.qs), yhi = vld1q_s8(yb.qs + 16);
      const float32x4_t prod = vmulq_n_f32(dw, half(yb.d));  // lane r: d_w(r) * d_a
      // The lane index of vfmaq_laneq_f32 must be a constant: unroll over r.
      [&]<int... r>(std::integer_sequence<int, r...>) {
        ((acc[r][c] = vfmaq_laneq_f32(
              acc[r][c],
              vcvtq_f32_s32(D::dot(D::dot(vdupq_n_s32(0), vld1q_s8(q[2 * r].b), ylo), vld1q_s8(q[2 * r + 1].b), yhi)),
              prod, r)),
         ...);
      }(std::make_integer_sequence<int, R>{});
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

template <class D, int R>
TileFn pick_c(int c) {
  static_assert(kC == 4);
  switch (c) {
    case 1: return tile<D, R, 1>;
    case 2: return tile<D, R, 2>;
    case 3: return tile<D, R, 3>;
    default: return tile<D, R, 4>;
  }
}
template <class D>
TileFn pick(int r, int c) {
  static_assert(kR == 4);
  switch (r) {
    case 1: return pick_c<D, 1>(c);
    case 2: return pick_c<D, 2>(c);
    case 3: return pick_c<D, 3>(c);
    default: return pick_c<D, 4>(c);
  }
}

// Rows outer (a 4-row tile packed once, then kept in L1), tokens inner (the
// activation rows stream from L2: matmul hands over blocks that fit).
template <class W, class D>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
          float* y, size_t ldy) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  // Grow once per thread to the widest row seen (prefill only, never decode).
  thread_local std::vector<Line> rq;
  thread_local std::vector<float> rd;
  if (rq.size() < size_t(nb * kR * 2)) rq.resize(size_t(nb * kR * 2)), rd.resize(size_t(nb * kR));
  for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
    const int rr = int(std::min<int64_t>(kR, n_rows - r0));
    pack_rows<W>(nb, wb + size_t(r0) * ws, ws, rr, rq.data(), rd.data());
    const TileFn full = pick<D>(rr, kC);
    float* yr = y + size_t(r0);
    int64_t t0 = 0;
    for (; t0 + kC <= n_tok; t0 += kC) full(nb, rq.data(), rd.data(), ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
    if (t0 < n_tok)
      pick<D>(rr, int(n_tok - t0))(nb, rq.data(), rd.data(), ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
  }
}

}  // namespace

void register_gemm_neon(KernelSet& k) {
  const bool dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;  // as register_neon
  k.gemm[int(GgmlType::Q4_0)] = dotprod ? gemm<Q4, DotProd> : gemm<Q4, Widen>;
  k.gemm[int(GgmlType::Q8_0)] = dotprod ? gemm<Q8, DotProd> : gemm<Q8, Widen>;
}

}  // namespace edgellm
