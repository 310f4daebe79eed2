// Grouped-query attention and SwiGLU at 8 lanes (AVX2 + FMA, F16C for the
// cache rows): kernels/attention_tile.h in the AVX2 target region.
// Quantized keys: maddubs int8 dots (kernels/avx2/attention_kv_x86.h).
#include <immintrin.h>

#include "kernels/dispatch.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/attention_tile.h"
#include "kernels/avx2/attention_kv_x86.h"

namespace edgellm {

namespace {

void attend_group(const AttendGroup& g) { attend_group_lanes<8, X86Kv<false>>(g); }

}  // namespace

void register_attention_avx2(KernelSet& k) {
  k.attend_group = attend_group;
  k.swiglu = swiglu_lanes<8>;
  k.geglu = geglu_lanes<8>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
