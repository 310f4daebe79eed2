// Float-weight kernels at 4 lanes (Advanced SIMD, every AArch64 CPU): the dot
// and the prefill GEMM of kernels/float_tile.h in the NEON region. GEMM tile
// 4 rows x 4 tokens: 16 accumulators + 4 weight vectors + 1 activation of the
// 32 registers.
#include <arm_neon.h>

#include <cstring>

#include "base/fp16.h"
#include "kernels/dispatch.h"

#include "kernels/neon/isa_begin.h"  // NEON code from here to kernels/isa_end.h
#include "kernels/float_tile.h"

namespace edgellm {

namespace {

using V = FloatLanes<4>::V;

// FCVTL: exact for every half, base ARMv8.
struct LoadF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) { return as_v<V>(vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)))); }
  static float one(const uint16_t* p) { return fp16_to_f32(*p); }
};
// bf16 is the upper half of an f32: a widening shift by 16, exact.
struct LoadBF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) { return as_v<V>(vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16))); }
  static float one(const uint16_t* p) { return bf16_to_f32(*p); }
};

}  // namespace

void register_float_neon(KernelSet& k) { register_float_kernels<FloatGemm<4, 4, 4>, LoadF16, LoadBF16>(k); }

}  // namespace edgellm

#include "kernels/isa_end.h"
