// Grouped-query attention and SwiGLU at 16 lanes (AVX-512F):
// kernels/attention_tile.h in the AVX-512 target region.
// Quantized keys: VNNI vpdpbusd int8 dots (kernels/avx2/attention_kv_x86.h,
// 256-bit forms: AVX512VL).
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings.
#include <immintrin.h>

#include "kernels/dispatch.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"
#include "kernels/attention_tile.h"
#include "kernels/avx2/attention_kv_x86.h"

namespace edgellm {

namespace {

struct Avx512Kv : X86Kv<true> {
  static __m512 half_vec(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static void half_to_float(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, half_vec(src + i));
    for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
  }
  // f16 value rows at 16 lanes too (X86Kv's widening is AVX2's 8).
  static void row_to_f32(GgmlType t, const uint8_t* src, float* dst, int64_t n) {
    if (t == GgmlType::F16) half_to_float(reinterpret_cast<const uint16_t*>(src), dst, n);
    else X86Kv<true>::row_to_f32(t, src, dst, n);
  }
};

void attend_group(const AttendGroup& g) { attend_group_lanes<16, Avx512Kv>(g); }

}  // namespace

void register_attention_avx512(KernelSet& k) {
  k.attend_group = attend_group;
  k.swiglu = swiglu_lanes<16>;
  k.geglu = geglu_lanes<16>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
