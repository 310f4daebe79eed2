// Float-weight kernels at 8 lanes (AVX2 + FMA, F16C for f16 rows): the dot and
// the prefill GEMMs of kernels/float_tile.h in the AVX2 region.
// FloatGemmTokens 6 rows x 2 token vectors (16 tokens): 12 accumulators + 2
// activations + a broadcast in the 16 registers (f16 2048 x 2048 x 512
// alone, one thread: 112 -> 130 GFLOP/s; l1b-f16 pp512 with EDGELLM_ISA=avx2
// 106 -> 117 t/s, Zen 5). FloatGemm (below 8 tokens) 4 rows x 2 tokens: 8
// accumulators + 4 weight vectors + 1 activation.
#include <immintrin.h>

#include <cstring>

#include "base/fp16.h"
#include "kernels/dispatch.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"
#include "kernels/float_tile.h"

namespace edgellm {

namespace {

using V = FloatLanes<8>::V;

struct LoadF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) { return as_v<V>(_mm256_cvtph_ps(load128(p))); }
  static float one(const uint16_t* p) { return half(*p); }
};
// bf16 is the upper half of an f32: zero-extend and shift, exact.
struct LoadBF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) {
    return as_v<V>(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p)), 16)));
  }
  static float one(const uint16_t* p) { return bf16_to_f32(*p); }
};

}  // namespace

void register_float_avx2(KernelSet& k) {
  register_float_kernels<FloatGemmTokens<8, 6, 2, FloatGemm<8, 4, 2>>, LoadF16, LoadBF16>(k);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
