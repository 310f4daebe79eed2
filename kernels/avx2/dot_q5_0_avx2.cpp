// AVX2 vec_dot for the 5-bit legacy types: q5_0 weights x q8_0 activations
// and q5_1 weights x q8_1 activations (the AVX2 target
// region). Scalar twins: ref::vec_dot_q5_0_q8_0 and
// ref::vec_dot_q5_1_q8_1 in tensor/quant_legacy.cpp.
//
// Why: llama.cpp's Q4_K_M files store every tensor whose rows are not a
// multiple of 256 (all of qwen2.5-0.5b's 896-wide ones) as q5_0, so on such
// models q5_0 is most of the weight bytes; its IQ4_NL / IQ4_XS files store
// attn_v as q5_1, which otherwise runs on the scalar reference.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot q5_0 x q8_0 : 22/32 B of w + 34/32 B of a;  2 int8 MAC ops
//                         (+ ~5 ops per 32 to spread the 32 fifth bits to bytes)
//   vec_dot q5_1 x q8_1 : 24/32 B of w + 36/32 B of a;  2 int8 MAC ops
//                         (+ the same unpack; + 1 scalar FMA per 32 for m * s)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {

// The 32 values q-16 of a q5_0 block as signed bytes in element order: a
// nibble n with its fifth bit set is n; without it, n - 16, which as a byte is
// n | 0xF0 (n <= 15).
inline __m256i values_q5_0(const block_q5_0& b) {
  return _mm256_or_si256(nibbles(b.qs), _mm256_andnot_si256(bits_to_bytes(b.qh), _mm256_set1_epi8(char(0xF0))));
}

float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_blocks_q8_0(static_cast<const block_q5_0*>(w), static_cast<const block_q8_0*>(a), n / QK5_0,
                         [](const block_q5_0& b) { return values_q5_0(b); });
}

// q5_1: the levels q (0..31) are already unsigned, the operand maddubs wants,
// so d_w d_a (q . a) needs no sign moves; dot_blocks adds m_w * s_a.
float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_blocks(static_cast<const block_q5_1*>(w), static_cast<const block_q8_1*>(a), n / QK5_1,
                    [](const block_q5_1& b, const block_q8_1& y) {
                      return dot_u5_i8(levels_q5(b.qs, b.qh), load256(y.qs));
                    });
}

}  // namespace

void register_q5_avx2(KernelSet& k) {
  k.vec_dot[int(GgmlType::Q5_0)] = vec_dot_q5_0;
  k.vec_dot[int(GgmlType::Q5_1)] = vec_dot_q5_1;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
