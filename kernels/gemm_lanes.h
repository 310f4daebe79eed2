// The driver of the "rows in lanes" GEMM kernels: weight rows in the int32
// lanes of a vector, a tile of K::kRows rows packed once per call and reused
// by every token (kernels/avx2/gemm_avx2.cpp: 8 rows per ymm;
// kernels/avx512/gemm_avx512.cpp and gemm_kquant_avx512.cpp: 16 per zmm).
// A format K supplies its packed row and token types and three functions;
// this loops over row tiles and micro-tiles of up to K::kMaxTok tokens.
// No intrinsics here: each ISA file includes it and gets its own copy
// (internal linkage).
//
//   struct K {
//     using Rows = ...;  using Toks = ...;           // per block, per tile / token
//     static constexpr int kRows = 8 | 16;           // weight rows per tile
//     static constexpr int64_t kBlock = 32 | 256;    // elements per block
//     static constexpr int kMaxTok = ...;
//     static void pack_rows(int64_t nb, const uint8_t* w, size_t ws, int R, Rows* out);
//     static void pack_tokens(int64_t nb, const uint8_t* a, size_t as, int64_t n_tok, Toks* out);
//     template <int C> static void tile(int64_t nb, const Rows* rows, int R, const uint8_t* a,
//                                       size_t as, const Toks* toks, float* y, size_t ldy);
//   };
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/gemm_lanes.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/dispatch.h"

namespace edgellm {
namespace {

template <class K, size_t... I>
constexpr auto tile_table(std::index_sequence<I...>) {
  using TileFn = void (*)(int64_t, const typename K::Rows*, int, const uint8_t*, size_t, const typename K::Toks*,
                          float*, size_t);
  return std::array<TileFn, sizeof...(I)>{K::template tile<int(I) + 1>...};
}

// Scratch (GemmScratchFn): one K::kRows-row tile's packed blocks and every token's
// per-block values, packed once per call:
//   [K::Rows rq[nb]] [K::Toks tq[n_tok * nb]]      each rounded up to 64 B
// with nb = n / K::kBlock, whatever n_rows. AVX-512 q4_0 / q5_0 / q8_0: 1152 B
// per block (32 rows) + 8 B per token and block (a 4864-wide row: 175 KB +
// 1.2 KB per token; matmul's token blocks keep n_tok * row bytes of
// activations under 4 MB, so n_tok * nb * 8 under ~1 MB); q4_K / q5_K: 5248 B
// per super-block + 36 B per token and super-block; q6_K 5696 B + 36 B.
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
  // While a row tile computes, the next tile's rows (one contiguous range)
  // are fetched into L2, an equal slice per micro-tile: pack_rows reads
  // kRows rows at once, and from memory that was latency-bound (perf of a
  // qwen2.5-0.5b Q4_0 pp512: 12 % of the samples in pack_rows, nearly all on
  // its weight loads). The micro-tiles are compute-bound (~100 vector ops
  // per block and 8 tokens), so the fetch is hidden behind them.
  const int64_t n_calls = (n_tok + K::kMaxTok - 1) / K::kMaxTok;
  for (int64_t r0 = 0; r0 < n_rows; r0 += K::kRows) {
    const int R = int(std::min<int64_t>(K::kRows, n_rows - r0));
    K::pack_rows(nb, wb + size_t(r0) * ws, ws, R, rq);
    const int64_t next_rows = std::clamp<int64_t>(n_rows - r0 - K::kRows, 0, K::kRows);
    const uint8_t* next = wb + size_t(r0 + K::kRows) * ws;
    const size_t next_bytes = size_t(next_rows) * ws;
    const size_t slice = (next_bytes / size_t(n_calls) + 63) / 64 * 64;
    size_t fetched = 0;
    for (int64_t t0 = 0; t0 < n_tok; t0 += K::kMaxTok) {
      for (const size_t end = std::min(next_bytes, fetched + slice); fetched < end; fetched += 64)
        __builtin_prefetch(next + fetched, 0, 2);
      const int C = int(std::min<int64_t>(K::kMaxTok, n_tok - t0));
      tiles[size_t(C - 1)](nb, rq, R, ab + size_t(t0) * as, as, tq + t0 * nb, y + size_t(t0) * ldy + size_t(r0), ldy);
    }
  }
}

// Format K as set k's GEMM for weight type t. Every "rows in lanes" format
// sums the float terms in another order than vec_dot: gemm_reordered.
template <class K>
void set_gemm_lanes(KernelSet& k, GgmlType t) {
  k.gemm[int(t)] = gemm_lanes<K>;
  k.gemm_scratch[int(t)] = gemm_lanes_scratch<K>;
  k.gemm_reordered[int(t)] = true;
}

}  // namespace
}  // namespace edgellm
