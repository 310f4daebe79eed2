// Grouped-query attention and SwiGLU at 4 lanes (Advanced SIMD, every AArch64
// CPU): kernels/attention_tile.h compiled with the kernels/neon flags.
#include <arm_neon.h>

#include "base/fp16.h"
#include "kernels/attention_tile.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

// FCVTL: exact for every half, base ARMv8.
void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  for (; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

void attend_group_f16(const AttendGroup& g) { attend_group_lanes<4>(g, half_to_float); }

}  // namespace

void register_attention_neon(KernelSet& k) {
  k.attend_group_f16 = attend_group_f16;
  k.swiglu = swiglu_lanes<4>;
}

}  // namespace edgellm
