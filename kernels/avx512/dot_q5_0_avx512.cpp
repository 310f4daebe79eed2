// AVX-512 (BW, VL, VNNI) vec_dot for q5_0 weights x q8_0 activations
// (compiled with the kernels/avx512 flags; registered by register_avx512).
// Scalar twin: ref::vec_dot_q5_0_q8_0 in tensor/quant_legacy.cpp.
//
// Why: llama.cpp's Q4_K_M files store every tensor whose rows are not a
// multiple of 256 (all of qwen2.5-0.5b's 896-wide ones) as q5_0, so on such
// models q5_0 is most of the weight bytes.
//
// Cost per element (w = weight row, a = activation):
//   vec_dot q5_0 x q8_0 : 22/32 B of w + 34/32 B of a;  2 int8 MAC ops
// The fifth bits need no unpacking: the 32-bit qh word is used directly as an
// AVX-512BW byte mask that adds 16 to the nibbles it selects.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read.
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_pairs_q8_0(static_cast<const block_q5_0*>(w), static_cast<const block_q8_0*>(a), n / QK5_0,
                        [](const block_q5_0& b0, const block_q5_0& b1, __m512i y) {
                          return dot_offset_s8(join(levels_q5_0(b0), levels_q5_0(b1)), y, 16);
                        });
}

}  // namespace

void register_q5_0_avx512(KernelSet& k) { k.vec_dot[int(GgmlType::Q5_0)] = vec_dot_q5_0; }

}  // namespace edgellm
