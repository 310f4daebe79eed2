// Grouped-query attention and SwiGLU at 8 lanes (AVX2 + FMA, F16C for the
// cache rows): kernels/attention_tile.h compiled with the kernels/avx2 flags.
#include <immintrin.h>

#include "kernels/attention_tile.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

void attend_group_f16(const AttendGroup& g) { attend_group_lanes<8>(g, half_to_float); }

}  // namespace

void register_attention_avx2(KernelSet& k) {
  k.attend_group_f16 = attend_group_f16;
  k.swiglu = swiglu_lanes<8>;
}

}  // namespace edgellm
