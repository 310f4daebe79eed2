// The f16 scales of four consecutive blocks as one float vector (F16C),
// shared by kernels/avx2/gemv_avx2.cpp and kernels/avx512/gemv_avx512.cpp
// (whose GEMVs scale four blocks' integer sums at once). Internal linkage:
// each includer gets its own copy compiled with its own flags.
#pragma once
#include <immintrin.h>

namespace edgellm {
namespace {

// d of blocks x[0..3] as floats.
template <class Block>
inline __m128 scales4(const Block* x) {
  __m128i h = _mm_cvtsi32_si128(x[0].d);
  h = _mm_insert_epi16(h, x[1].d, 1);
  h = _mm_insert_epi16(h, x[2].d, 2);
  h = _mm_insert_epi16(h, x[3].d, 3);
  return _mm_cvtph_ps(h);
}

}  // namespace
}  // namespace edgellm
