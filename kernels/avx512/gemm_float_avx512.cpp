// Float-weight prefill GEMM at 16 lanes (AVX-512F): kernels/gemm_float_tile.h
// compiled with the kernels/avx512 flags. 4 rows x 4 tokens: 16 accumulators
// + 4 weight vectors + 1 activation of the 32 registers.
#include <immintrin.h>

#include <cstring>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_float_tile.h"

namespace edgellm {

namespace {

// The maskz forms (all lanes) only to keep GCC 12 from warning about the
// undefined pass-through operand of the plain intrinsics.
void widen_f16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(s[i]);
}

// bf16 is the upper half of an f32: zero-extend and shift, exact.
void widen_bf16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_si512(dst + i, _mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))), 16));
  for (; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
}

}  // namespace

void register_gemm_float_avx512(KernelSet& k) { register_float_gemms<FloatGemm<16, 4, 4>, widen_f16, widen_bf16>(k); }

}  // namespace edgellm
