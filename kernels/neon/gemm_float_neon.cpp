// Float-weight prefill GEMM at 4 lanes (Advanced SIMD, every AArch64 CPU):
// kernels/gemm_float_tile.h compiled with the kernels/neon flags. 4 rows x 4
// tokens: 16 accumulators + 4 weight vectors + 1 activation of the 32
// registers.
#include <arm_neon.h>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_float_tile.h"

namespace edgellm {

namespace {

// FCVTL: exact for every half, base ARMv8.
void widen_f16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(s + i))));
  for (; i < n; ++i) dst[i] = fp16_to_f32(s[i]);
}

// bf16 is the upper half of an f32: a widening shift by 16, exact.
void widen_bf16(const void* src, float* dst, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(s + i), 16)));
  for (; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
}

}  // namespace

void register_gemm_float_neon(KernelSet& k) { register_float_gemms<FloatGemm<4, 4, 4>, widen_f16, widen_bf16>(k); }

}  // namespace edgellm
