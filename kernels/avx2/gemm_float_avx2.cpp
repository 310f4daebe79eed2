// Float-weight prefill GEMM at 8 lanes (AVX2 + FMA, F16C for f16 rows):
// kernels/gemm_float_tile.h compiled with the kernels/avx2 flags. 4 rows x 2
// tokens: 8 accumulators + 4 weight vectors + 1 activation in 16 registers.
#include <immintrin.h>

#include "kernels/avx2/simd_avx2.h"
#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_float_tile.h"

namespace edgellm {

namespace {

void widen_f16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(load128(s + i)));
  for (; i < n; ++i) dst[i] = half(s[i]);
}

// bf16 is the upper half of an f32: zero-extend and shift, exact.
void widen_bf16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(s + i)), 16));
  for (; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
}

}  // namespace

void register_gemm_float_avx2(KernelSet& k) { register_float_gemms<FloatGemm<8, 4, 2>, widen_f16, widen_bf16>(k); }

}  // namespace edgellm
