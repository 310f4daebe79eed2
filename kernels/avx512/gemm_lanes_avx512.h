// The driver shared by the AVX-512 "rows in lanes" GEMM kernels
// (gemm_avx512.cpp: q4_0 / q5_0 / q8_0; gemm_kquant_avx512.cpp: q4_K / q6_K).
// A format K supplies its packed row and token types and three functions;
// this loops over 16-row tiles (packed once per call) and micro-tiles of up to
// K::kMaxTok tokens. Internal linkage, like every kernels/avx512 header.
//
//   struct K {
//     using Rows = ...;  using Toks = ...;           // per block, per tile / token
//     static constexpr int64_t kBlock = 32 | 256;    // elements per block
//     static constexpr int kMaxTok = ...;
//     static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out);
//     static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out);
//     template <int C> static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a,
//                                       size_t as, const Toks* toks, float* y, size_t ldy);
//   };
#pragma once
#include "kernels/avx512/simd_avx512.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace edgellm {
namespace {

constexpr int kLaneRows = 16;  // weight rows per tile: one per int32 lane

inline int32_t load32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

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

template <class K, size_t... I>
constexpr auto tile_table(std::index_sequence<I...>) {
  using TileFn = void (*)(int64_t, const typename K::Rows*, int, const uint8_t*, size_t, const typename K::Toks*,
                          float*, size_t);
  return std::array<TileFn, sizeof...(I)>{K::template tile<int(I) + 1>...};
}

template <class K>
void gemm_lanes(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                float* y, size_t ldy) {
  static constexpr auto tiles = tile_table<K>(std::make_index_sequence<K::kMaxTok>{});
  const int64_t nb = n / K::kBlock;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  // Grow once per thread to the largest sizes seen (prefill only, never decode).
  thread_local std::vector<typename K::Rows> rq;
  thread_local std::vector<typename K::Toks> tq;
  if (rq.size() < size_t(nb)) rq.resize(size_t(nb));
  if (tq.size() < size_t(n_tok * nb)) tq.resize(size_t(n_tok * nb));
  K::pack_tokens(nb, ab, as, n_tok, tq.data());
  for (int64_t r0 = 0; r0 < n_rows; r0 += kLaneRows) {
    const int R = int(std::min<int64_t>(kLaneRows, n_rows - r0));
    K::pack_rows(nb, wb + size_t(r0) * ws, ws, R, rq.data());
    for (int64_t t0 = 0; t0 < n_tok; t0 += K::kMaxTok) {
      const int C = int(std::min<int64_t>(K::kMaxTok, n_tok - t0));
      tiles[size_t(C - 1)](nb, rq.data(), R, ab + size_t(t0) * as, as, tq.data() + t0 * nb,
                           y + size_t(t0) * ldy + size_t(r0), ldy);
    }
  }
}

}  // namespace
}  // namespace edgellm
