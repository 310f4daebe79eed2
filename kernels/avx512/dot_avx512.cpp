// AVX-512 (F, BW, VL, DQ, VNNI) + FMA + F16C row kernels (the
// AVX-512 target region; only called when
// cpu_features().can_run_avx512()). Each has a scalar twin in tensor/
// (tests/test_kernels.cpp compares them on every host that can run this set).
//
// Cost per element, stated as DESIGN.md asks (w = weight row, a = activation):
//   vec_dot q8_0 x q8_0 : 34/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   vec_dot q4_0 x q8_0 : 18/32 B of w + 34/32 B of a;  2 int8 MAC ops
//   quantize q8_0       : 4 B read + 34/32 B written;    ~4 FLOPs (abs-max, scale, round)
// In decode the activation row stays in L1/L2 across all rows of a matrix, so
// the bytes that bound the speed are the weight bytes (DRAM traffic).
//
// The int8 dots use VNNI's vpdpbusd (u8 x s8, four products summed into each
// int32 lane, no intermediate saturation): a signed weight byte x becomes the
// unsigned x+128 (x ^ 0x80), and 128*sum(y) is taken back off with a second
// vpdpbusd against a constant 128. Exact for every byte value, -128 included.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"

namespace edgellm {

namespace {

float vec_dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_pairs(static_cast<const block_q8_0*>(w), static_cast<const block_q8_0*>(a), n / QK8_0,
                   [](const block_q8_0& b0, const block_q8_0& b1, __m512i y) {
                     return dot_s8s8(join(load256(b0.qs), load256(b1.qs)), y);
                   });
}

float vec_dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_pairs(static_cast<const block_q4_0*>(w), static_cast<const block_q8_0*>(a), n / QK4_0,
                   [](const block_q4_0& b0, const block_q4_0& b1, __m512i y) {
                     return dot_offset_s8(join(nibbles(b0.qs), nibbles(b1.qs)), y, 8);
                   });
}

// std::roundf (half away from zero) for |v| < 2^23, bit-identical: truncate,
// then step one away from zero where the (exact) dropped fraction is >= 0.5.
inline __m512 round_half_away(__m512 v) {
  const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f),
                                          _CMP_GE_OQ);
  const __m512 step = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
  return _mm512_mask_add_ps(t, up, t, step);
}

// Same bytes as ref::quantize_q8_0 (see the AVX2 twin): exact abs-max, scalar
// d = amax/127 and id = 1/d, one float multiply per element, roundf-exact
// rounding, d stored with the same f32_to_fp16.
void quantize_q8_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_0*>(dst);
  for (int64_t i = 0; i < n / QK8_0; ++i, src += QK8_0) {
    const __m512 v0 = _mm512_loadu_ps(src), v1 = _mm512_loadu_ps(src + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    const __m512 vid = _mm512_set1_ps(id);
    const __m512i q0 = _mm512_cvtps_epi32(round_half_away(_mm512_mul_ps(v0, vid)));
    const __m512i q1 = _mm512_cvtps_epi32(round_half_away(_mm512_mul_ps(v1, vid)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16), _mm512_cvtepi32_epi8(q1));
  }
}

}  // namespace

void register_dot_avx512(KernelSet& k) {
  k.vec_dot[int(GgmlType::Q4_0)] = vec_dot_q4_0;
  k.vec_dot[int(GgmlType::Q8_0)] = vec_dot_q8_0;
  k.quantize_act[int(GgmlType::Q8_0)] = quantize_q8_0;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
