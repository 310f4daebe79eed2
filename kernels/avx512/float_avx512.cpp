// Float-weight kernels at 16 lanes (AVX-512F): the dot and the prefill GEMMs
// of kernels/float_tile.h in the AVX-512 region.
// FloatGemmTokens 12 rows x 2 token vectors (32 tokens): 24 accumulators, 2
// activation loads + 12 broadcasts per 24 FMAs, no conversion in the loop:
// f16 2048 x 2048 x 512 tokens alone, one thread, 196 -> 245-251 GFLOP/s
// (~90 % of the two FMA pipes at 4.25 GHz); l1b-f16 pp512 on a 2-core Zen 5
// 188-191 -> 203-218 t/s (BENCHMARKS.md, 2026-12-07).
// FloatGemm (below 16 tokens) 6 rows x 4 tokens: 24 accumulators + 6 weight
// vectors + 1 activation of the 32 registers (10 loads per 24 FMAs, 4 of
// them activations, which come from L2: 4 x 6 read 6; l1b-f16 pp512 on a
// 2-core Zen 5, alternating: 128-146 t/s against 114-125 for 4 x 6 with the
// old scalar horizontal sums).
#include <immintrin.h>

#include <cstring>

#include "base/fp16.h"
#include "kernels/dispatch.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"
#include "kernels/float_tile.h"

namespace edgellm {

namespace {

using V = FloatLanes<16>::V;

struct LoadF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) { return as_v<V>(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))); }
  static float one(const uint16_t* p) { return _cvtsh_ss(*p); }
};
// bf16 is the upper half of an f32: zero-extend and shift, exact.
struct LoadBF16 {
  using Elem = uint16_t;
  static V load(const uint16_t* p) {
    return as_v<V>(_mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16)));
  }
  static float one(const uint16_t* p) { return bf16_to_f32(*p); }
};

}  // namespace

void register_float_avx512(KernelSet& k) {
  register_float_kernels<FloatGemmTokens<16, 12, 2, FloatGemm<16, 6, 4>>, LoadF16, LoadBF16>(k);
}

}  // namespace edgellm

#include "kernels/isa_end.h"
