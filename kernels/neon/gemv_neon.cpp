// Decode matrix x vector for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0
// activations, NEON (KernelSet::gemv; SDOT with FEAT_DotProd, the widening
// ARMv8.0 dot without; reference twin: vec_dot per row, the scalar set's
// gemm; tests/test_kernels_gemm.cpp compares them, under qemu in CI).
//
// Decode reads each weight byte once, so the bound is the memory bus
// (qwen2.5-0.5b Q4_0: 346 MB per token; a phone's LPDDR5 at ~50 GB/s: ~145
// tok/s) unless the cores cannot unpack and multiply as fast as the bytes
// arrive, which on a phone's 2-4 big cores at 4 128-bit SIMD ops per cycle is
// close. The same design as kernels/avx512/gemv_avx512.cpp and
// kernels/avx2/gemv_avx2.cpp: what depends on the activation only is
// prepared once per call and shared by every row:
//  - d_a of every block (read 4 at a time): a row gathers its 4 weight scales (4 lane
//    loads), converts them with one FCVTL and multiplies once; each block's
//    FMA then takes its scale by lane (FMLA by element), with no scalar
//    conversions;
//  - for the unsigned-level formats (q4_0 levels 0..15, q5_0 levels 0..31:
//    valid signed bytes, so SDOT takes them as they are), the correction
//    -bias * sum(y) per int32 lane, which starts the SDOT accumulator (free)
//    instead of subtracting the bias from every weight byte.
// Instructions per q4_0 block, counted in the g++ 12 -O3 disassembly of the
// SDOT loops (aarch64-linux-gnu-objdump -d): vec_dot per row 19.5 (39 per
// pair: 2 SUB of the bias, 2 SDOT, 2 scalar FCVT + FMUL per scale, a zeroed
// accumulator; ~46 before simd_neon.h's half() used FCVT instead of
// base/fp16.h's bit manipulation, 15 instructions per scale); this GEMV
// 14.75 (59 per 4 blocks: 26 SIMD/FP ops — 8 SDOT, 4 AND, 4 USHR, 4 SCVTF,
// 4 FMLA by element, FCVTL + FMUL of the scales — 21 loads, 12 address and
// loop). For comparison on x86: the AVX-512 GEMV 10.5 (42 per 4 blocks, two
// blocks per vpdpbusd), the AVX2 GEMV 15.5 (62 per 4).
// Expected (not measured: no arm64 hardware here): a 4-wide Cortex-A78 with
// two 128-bit SIMD pipes spends ~15 cycles per 4 blocks (dispatch-bound; 13
// on the SIMD pipes), 72 B of q4_0: ~12 GB/s per core at 2.5 GHz, so 4-5
// such cores fill a phone's ~50 GB/s LPDDR5; a Cortex-X (wider, 4 SIMD
// pipes) about twice that per core.
// No i8mm path: SMMLA multiplies 2 weight rows by 2 activation rows, and a
// decode step has one activation row (half its work would be wasted).
#include <arm_neon.h>

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

// The x86 GEMVs prefetch 8 KB ahead (kGemvPrefetchBytes, measured on Zen 5);
// NEON keeps the 2304 B it was given from the earlier x86 measurements, since
// the distance cannot be measured on an ARM core here.
constexpr int kPrefetchBytes = 2304;

// Per format: a weight block's 32 bytes for the int8 dot (elements 0..15 in
// lo, 16..31 in hi) and the bias they carry (0 for the signed formats).
struct Q4 {  // levels 0..15, value = level - 8
  using Block = block_q4_0;
  static constexpr int8_t kBias = 8;
  static void bytes(const Block& x, int8x16_t, int8x16_t& lo, int8x16_t& hi) {
    uint8x16_t l, h;
    nibbles(x.qs, l, h);
    lo = vreinterpretq_s8_u8(l);
    hi = vreinterpretq_s8_u8(h);
  }
};
struct Q5 {  // levels 0..31 (nibble | fifth bit << 4), value = level - 16
  using Block = block_q5_0;
  static constexpr int8_t kBias = 16;
  static void bytes(const Block& x, int8x16_t, int8x16_t& lo, int8x16_t& hi) { levels_q5(x, lo, hi); }
};
struct Q8 {  // signed bytes
  using Block = block_q8_0;
  static constexpr int8_t kBias = 0;
  static void bytes(const Block& x, int8x16_t, int8x16_t& lo, int8x16_t& hi) {
    lo = vld1q_s8(x.qs);
    hi = vld1q_s8(x.qs + 16);
  }
};
struct IQ4NL {  // the nibbles' signed grid values, one TBL each
  using Block = block_iq4_nl;
  static constexpr int8_t kBias = 0;
  static void bytes(const Block& x, int8x16_t grid, int8x16_t& lo, int8x16_t& hi) {
    uint8x16_t l, h;
    nibbles(x.qs, l, h);
    lo = vqtbl1q_s8(grid, l);
    hi = vqtbl1q_s8(grid, h);
  }
};

// d of blocks x[0..3] as floats: 4 lane loads and one conversion.
template <class Block>
inline float32x4_t scales4(const Block* x) {
  uint16x4_t h = vdup_n_u16(0);
  h = vld1_lane_u16(&x[0].d, h, 0);
  h = vld1_lane_u16(&x[1].d, h, 1);
  h = vld1_lane_u16(&x[2].d, h, 2);
  h = vld1_lane_u16(&x[3].d, h, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

// One row against the activation and its prepared parts, blocks in memory
// order; even blocks into acc0, odd into acc1, as vec_dot sums them (so the
// result is bit-identical to it, and to the exact GEMMs).
template <class D, class F>
inline float row_dot(int64_t nb, const typename F::Block* x, const block_q8_0* y, const int32x4_t* corr,
                     const float* da, int8x16_t grid) {
  float32x4_t acc0 = vdupq_n_f32(0), acc1 = vdupq_n_f32(0);
  auto ints = [&](int64_t i) {
    int8x16_t lo, hi;
    F::bytes(x[i], grid, lo, hi);
    const int32x4_t c = F::kBias ? corr[i] : vdupq_n_s32(0);
    return vcvtq_f32_s32(D::dot(D::dot(c, lo, vld1q_s8(y[i].qs)), hi, vld1q_s8(y[i].qs + 16)));
  };
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kPrefetchBytes);
    const float32x4_t s4 = vmulq_f32(scales4(x + i), vld1q_f32(da + i));
    acc0 = vfmaq_laneq_f32(acc0, ints(i), s4, 0);
    acc1 = vfmaq_laneq_f32(acc1, ints(i + 1), s4, 1);
    acc0 = vfmaq_laneq_f32(acc0, ints(i + 2), s4, 2);
    acc1 = vfmaq_laneq_f32(acc1, ints(i + 3), s4, 3);
  }
  for (; i < nb; ++i) {  // (no reference to an accumulator: it would live on the stack)
    const float32x4_t v = ints(i);
    const float s = half(x[i].d) * half(y[i].d);
    if (i % 2)
      acc1 = vfmaq_n_f32(acc1, v, s);
    else
      acc0 = vfmaq_n_f32(acc0, v, s);
  }
  return vaddvq_f32(vaddq_f32(acc0, acc1));
}

// Scratch (GemmScratchFn): the prepared parts of one token's activation
// (reused by the next token):
//   [int32x4_t corr[nb]] (q4_0 / q5_0) [float d_a[nb]]   each rounded up to 64 B
// with nb = n / 32: 20 B per block, e.g. 896 wide: 448 + 112 B, 4864 wide:
// 2432 + 608 B (L1-resident).
size_t gemv_scratch(int64_t n, int64_t, int64_t) {
  const size_t nb = size_t(n / QK8_0);
  return scratch_round64(nb * sizeof(int32x4_t)) + scratch_round64(nb * sizeof(float));
}

template <class D, class F>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  // The caller's area: gemv_scratch(n, n_rows, n_tok) bytes, 64-byte aligned.
  auto* corr = static_cast<int32x4_t*>(scratch);
  auto* da = reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) + scratch_round64(size_t(nb) * sizeof(int32x4_t)));
  const int8x16_t grid = vld1q_s8(kvalues_iq4nl);
  const int8x16_t bias = vdupq_n_s8(F::kBias);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    for (int64_t i = 0; i < nb; ++i) {
      da[i] = half(act[i].d);
      if constexpr (F::kBias != 0)
        corr[i] = vnegq_s32(D::dot(D::dot(vdupq_n_s32(0), bias, vld1q_s8(act[i].qs)), bias, vld1q_s8(act[i].qs + 16)));
    }
    float* yt = y + size_t(t) * ldy;
    for (int64_t r = 0; r < n_rows; ++r)
      yt[r] = row_dot<D, F>(nb, reinterpret_cast<const typename F::Block*>(wb + size_t(r) * ws), act, corr, da, grid);
  }
}

template <class D>
constexpr GemvQ8_0Family family = {gemv<D, Q4>, gemv<D, Q5>, gemv<D, Q8>, gemv<D, IQ4NL>, gemv_scratch};

}  // namespace

void register_gemv_neon(KernelSet& k) { set_gemvs(k, cpu_features().dotprod ? family<DotProd> : family<Widen>); }

}  // namespace edgellm

#include "kernels/isa_end.h"
