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
#include "kernels/dispatch.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

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

// Scratch (GemmScratchFn): one 16-row tile's packed blocks and every token's
// per-block values, packed once per call:
//   [K::Rows rq[nb]] [K::Toks tq[n_tok * nb]]      each rounded up to 64 B
// with nb = n / K::kBlock, whatever n_rows. q4_0 / q5_0 / q8_0: 576 B per
// block + 8 B per token and block (a 4864-wide row: 87.6 KB + 1.2 KB per
// token; matmul's token blocks keep n_tok * row bytes of activations under
// 512 KB, so n_tok * nb * 8 under ~125 KB); q4_K / q5_K: 5248 B per
// super-block + 36 B per token and super-block; q6_K 5696 B + 36 B.
template <class K>
size_t gemm_lanes_scratch(int64_t n, int64_t, int64_t n_tok) {
  const size_t nb = size_t(n / K::kBlock);
  return scratch_round64(nb * sizeof(typename K::Rows)) + scratch_round64(size_t(n_tok) * nb * sizeof(typename K::Toks));
}

template <class K>
void gemm_lanes(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                float* y, size_t ldy, void* scratch) {
  static constexpr auto tiles = tile_table<K>(std::make_index_sequence<K::kMaxTok>{});
  const int64_t nb = n / K::kBlock;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  // The caller's area: gemm_lanes_scratch<K>(n, n_rows, n_tok) bytes.
  auto* rq = static_cast<typename K::Rows*>(scratch);
  auto* tq = reinterpret_cast<typename K::Toks*>(static_cast<uint8_t*>(scratch) +
                                                 scratch_round64(size_t(nb) * sizeof(typename K::Rows)));
  K::pack_tokens(nb, ab, as, n_tok, tq);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kLaneRows) {
    const int R = int(std::min<int64_t>(kLaneRows, n_rows - r0));
    K::pack_rows(nb, wb + size_t(r0) * ws, ws, R, rq);
    for (int64_t t0 = 0; t0 < n_tok; t0 += K::kMaxTok) {
      const int C = int(std::min<int64_t>(K::kMaxTok, n_tok - t0));
      tiles[size_t(C - 1)](nb, rq, R, ab + size_t(t0) * as, as, tq + t0 * nb, y + size_t(t0) * ldy + size_t(r0), ldy);
    }
  }
}

}  // namespace
}  // namespace edgellm
