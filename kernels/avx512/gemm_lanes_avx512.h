// What the AVX-512 "rows in lanes" GEMM kernels (gemm_avx512.cpp: q4_0 /
// q5_0 / q8_0 / iq4_nl; gemm_kquant_avx512.cpp: q4_K / q5_K / q6_K / iq4_xs)
// share: 16 weight rows per tile (one per int32 lane of a zmm), the micro-tile
// state and its masked store; the driver is kernels/gemm_lanes.h. Internal
// linkage, like every kernels/avx512 header.
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/avx512/gemm_lanes_avx512.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include "kernels/avx512/simd_avx512.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_lanes.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace edgellm {
namespace {

constexpr int kLaneRows = 16;  // weight rows per tile: one per int32 lane

// A micro-tile's float accumulators (zeroed) and its C activation rows.
template <class Block, int C>
struct TileState {
  __m512 acc[C];
  const Block* act[C];
  TileState(const uint8_t* a, size_t as) {
    for (int c = 0; c < C; ++c) {
      acc[c] = _mm512_setzero_ps();
      act[c] = reinterpret_cast<const Block*>(a + size_t(c) * as);
    }
  }
};

// Each token's 16 results (R of them real rows) into its row of y.
template <int C>
inline void store_rows(const __m512 (&acc)[C], int R, float* y, size_t ldy) {
  const __mmask16 m = __mmask16((1u << R) - 1);
  for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + size_t(c) * ldy, m, acc[c]);
}

}  // namespace
}  // namespace edgellm
