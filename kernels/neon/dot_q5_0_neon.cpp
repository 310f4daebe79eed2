// NEON vec_dot for the 5-bit legacy types: q5_0 weights x q8_0 activations
// and q5_1 weights x q8_1 activations (the NEON target region; SDOT
// variant where the CPU has FEAT_DotProd, else the ARMv8.0
// widening one). Scalar twins: ref::vec_dot_q5_0_q8_0 and
// ref::vec_dot_q5_1_q8_1 in tensor/quant_legacy.cpp.
//
// Why: llama.cpp's Q4_K_M files store every tensor whose rows are not a
// multiple of 256 (all of qwen2.5-0.5b's 896-wide ones) as q5_0, so on such
// models q5_0 is most of the weight bytes; its IQ4_NL / IQ4_XS files store
// attn_v as q5_1, which otherwise runs on the scalar reference.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot q5_0 x q8_0 : 22/32 B of w + 34/32 B of a;  2 int8 MAC ops
//                         (+ ~8 ops per 32 to spread the fifth bits to bytes)
//   vec_dot q5_1 x q8_1 : 24/32 B of w + 36/32 B of a;  2 int8 MAC ops
//                         (+ the same unpack; + 1 scalar FMA per 32 for m * s)
#include <arm_neon.h>

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/neon/simd_neon.h"

namespace edgellm {

namespace {

template <class D>
float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<D>(static_cast<const block_q5_0*>(w), static_cast<const block_q8_0*>(a), n / QK5_0,
                       [](const block_q5_0& b, int8x16_t& lo, int8x16_t& hi) { values_q5_0(b, lo, hi); });
}

template <class D>
float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_blocks<D>(static_cast<const block_q5_1*>(w), static_cast<const block_q8_1*>(a), n / QK5_1,
                       [](const block_q5_1& b, int8x16_t& lo, int8x16_t& hi) { values_q5_1(b, lo, hi); });
}

}  // namespace

void register_q5_neon(KernelSet& k) {
  const bool dotprod = cpu_features().dotprod;
  k.vec_dot[int(GgmlType::Q5_0)] = dotprod ? vec_dot_q5_0<DotProd> : vec_dot_q5_0<Widen>;
  k.vec_dot[int(GgmlType::Q5_1)] = dotprod ? vec_dot_q5_1<DotProd> : vec_dot_q5_1<Widen>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
