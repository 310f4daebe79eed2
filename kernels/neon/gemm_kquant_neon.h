// What the two K-quant GEMM tiles of kernels/neon share (gemm_kquant_neon.cpp:
// SDOT / widening; gemm_kquant_i8mm_neon.cpp: SMMLA): the unpacking of a
// 4-row tile into tensor/kquant_unpack's integer form, and the per-super-block
// float step. Internal linkage, as gemm_tiles_neon.h (included by files with
// and without +i8mm).
//
// Per super-block i, row r and token c (KBlockInt: x = d*sc_j*q - dmin*mn_j):
//   isum = sum_j sc_j * sum_{e in j} q_e * a_e     exact int32 (|.| <= 256*63*128*128 < 2^31)
//   msum = sum_j mn_j * bsums_j                    exact int32 (|.| <= 16*4096*2048)
//   acc += float(isum) * (d * d_a) - float(msum) * (dmin * d_a)
// Only the order of those float operations differs from the scalar vec_dot
// (KernelSet::gemm_reordered).
//
// Sub-blocks of 32 (q4_K, q5_K) have one scale and min for two 16-element
// groups: kGroup = 2 sums both groups' products before the one multiply by
// the scale, and pairs bsums before the min term (half the scale and min
// work of the 16-element formats).
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/neon/gemm_kquant_neon.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/neon/gemm_tiles_neon.h"
#include "tensor/blocks.h"
#include "tensor/kquant_unpack.h"
#include "tensor/types.h"

namespace edgellm {
namespace {

constexpr int kKR = 4, kKC = 4;  // both K tiles: 4 rows x 4 tokens

// 16-element sub-blocks per scale: 2 where the format's sub-blocks are 32 long.
template <GgmlType T>
constexpr int kGroup = (T == GgmlType::Q4_K || T == GgmlType::Q5_K || T == GgmlType::IQ4_XS) ? 2 : 1;

// iq4_xs in the tiles' integer form: q its signed grid values (-127..113;
// the tiles multiply q signed x signed, so no offset is needed), the scale
// ls - 32 of each 32-element sub-block on both of its 16-element groups, no
// mins.
inline void unpack_iq4_xs(const block_iq4_xs& b, KBlockInt* o) {
  for (int j = 0; j < 8; ++j) {
    for (int l = 0; l < 16; ++l) {
      o->q[32 * j + l] = uint8_t(kvalues_iq4nl[b.qs[16 * j + l] & 0xF]);
      o->q[32 * j + 16 + l] = uint8_t(kvalues_iq4nl[b.qs[16 * j + l] >> 4]);
    }
    o->sc[2 * j] = o->sc[2 * j + 1] = int16_t(iq4xs_scale(b, j) - 32);
    o->mn[2 * j] = o->mn[2 * j + 1] = 0;
  }
  o->d = fp16_to_f32(b.d);
  o->dmin = 0;
}

// The part of a packed super-block both tiles lay out alike: rows in lanes.
struct alignas(16) KScales {
  int16_t mn[16][kKR];  // group g (of 16 * G elements): the rows' mins (first 16 / G used)
  float d[kKR], dmin[kKR];
};

// Unpacks super-blocks 0..nb-1 of rows 0..R-1 (rows R..kKR-1 of an edge
// tile: all zero) and hands each (row, super-block) to place(out[i], r, u),
// which lays out q and the scales for its tile; mins and d here.
template <GgmlType T, class Packed, class Place>
void pack_k_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Packed* out, Place place) {
  constexpr int G = kGroup<T>;
  const size_t bsz = traits(T).type_size;
  KBlockInt u;
  for (int64_t i = 0; i < nb; ++i)
    for (int r = 0; r < kKR; ++r) {
      if (r < R && T == GgmlType::IQ4_XS)
        unpack_iq4_xs(reinterpret_cast<const block_iq4_xs*>(w + size_t(r) * ws)[i], &u);
      else if (r < R)
        unpack_k_block(T, w + size_t(r) * ws + size_t(i) * bsz, &u);
      else
        u = KBlockInt{};  // every member zero
      KScales& s = out[i].s;
      for (int g = 0; g < 16 / G; ++g) s.mn[g][r] = u.mn[G * g];
      s.d[r] = u.d;
      s.dmin[r] = u.dmin;
      place(out[i], r, u);
    }
}

// msum for the 4 rows (lanes) and one token: one by-element MLAL per group
// (16 int16 MACs per 4 rows), from the token's bsums (pairs of them for G = 2).
template <int G>
inline int32x4_t min_sums(const KScales& s, const int16_t* bsums) {
  const int16x8_t lo = vld1q_s16(bsums), hi = vld1q_s16(bsums + 8);
  const int16x8_t b[2] = {G == 1 ? lo : vpaddq_s16(lo, hi), hi};  // G = 2: |pair| <= 4096
  int32x4_t m = vdupq_n_s32(0);
  static_for<16 / G>([&](auto g) { m = vmlal_laneq_s16(m, vld1_s16(s.mn[g]), b[g / 8], decltype(g)::value % 8); });
  return m;
}

// The float step of super-block i: isum[c] holds token c's exact integer sums
// with rows in lanes (rows past the tile's R: anything, never stored).
// q3_K and q6_K (kSameScale): the "mins" are the formats' offsets (4, 32)
// under the same scale d, so isum - msum is taken in int32 (exact: it is the
// signed sum itself) before one conversion; two float terms of ~1e3 whose
// difference is ~10 lost up to 1e-4 of it (caught on qemu's widening path).
template <int G, int C, bool kSameScale = false>
inline void finish_super_block(float32x4_t* acc, const int32x4_t* isum, const KScales& s, const block_q8_K* const* act,
                               int64_t i) {
  const float32x4_t d = vld1q_f32(s.d), dmin = vld1q_f32(s.dmin);
  for (int c = 0; c < C; ++c) {
    const block_q8_K& b = act[c][i];
    const int32x4_t msum = min_sums<G>(s, b.bsums);
    if constexpr (kSameScale) {
      acc[c] = vfmaq_f32(acc[c], vcvtq_f32_s32(vsubq_s32(isum[c], msum)), vmulq_n_f32(d, b.d));
    } else {
      acc[c] = vfmaq_f32(acc[c], vcvtq_f32_s32(isum[c]), vmulq_n_f32(d, b.d));
      acc[c] = vfmsq_f32(acc[c], vcvtq_f32_s32(msum), vmulq_n_f32(dmin, b.d));
    }
  }
}

// The formats whose mins are an offset under the same scale (d == dmin).
template <GgmlType T>
constexpr bool kOffsetMins = T == GgmlType::Q3_K || T == GgmlType::Q6_K;

}  // namespace
}  // namespace edgellm
