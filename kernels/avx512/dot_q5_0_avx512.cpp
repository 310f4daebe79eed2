// AVX-512 (BW, VL, VNNI) vec_dot for the 5-bit legacy types: q5_0 weights x
// q8_0 activations and q5_1 weights x q8_1 activations (the AVX-512
// target region). Scalar twins:
// ref::vec_dot_q5_0_q8_0 and ref::vec_dot_q5_1_q8_1 in tensor/quant_legacy.cpp.
//
// Why: llama.cpp's Q4_K_M files store every tensor whose rows are not a
// multiple of 256 (all of qwen2.5-0.5b's 896-wide ones) as q5_0, so on such
// models q5_0 is most of the weight bytes; its IQ4_NL / IQ4_XS files store
// attn_v as q5_1, which otherwise runs on the scalar reference.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot q5_0 x q8_0 : 22/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q5_1 x q8_1 : 24/32 B of w + 36/32 B of a;  1 int8 MAC op
//                         (+ 1/4 xmm op per 32 for m * s)
// The fifth bits need no unpacking: the 32-bit qh word is used directly as an
// AVX-512BW byte mask that adds 16 to the nibbles it selects (levels_q5).
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"

namespace edgellm {

namespace {

float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_pairs(static_cast<const block_q5_0*>(w), static_cast<const block_q8_0*>(a), n / QK5_0,
                   [](const block_q5_0& b0, const block_q5_0& b1, __m512i y) {
                     return dot_offset_s8(join(levels_q5(b0), levels_q5(b1)), y, 16);
                   });
}

// q5_1: the levels q (0..31) are the unsigned operand vpdpbusd wants as they
// are, so d_w d_a (q . a) is one vpdpbusd with no offset correction (q5_0
// needs a second one for its - 16); dot_pairs adds m_w * s_a.
float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_pairs(static_cast<const block_q5_1*>(w), static_cast<const block_q8_1*>(a), n / QK5_1,
                   [](const block_q5_1& b0, const block_q5_1& b1, __m512i y) {
                     return _mm512_dpbusd_epi32(_mm512_setzero_si512(), join(levels_q5(b0), levels_q5(b1)), y);
                   });
}

}  // namespace

void register_q5_avx512(KernelSet& k) {
  k.vec_dot[int(GgmlType::Q5_0)] = vec_dot_q5_0;
  k.vec_dot[int(GgmlType::Q5_1)] = vec_dot_q5_1;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
