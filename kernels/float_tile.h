// Float-weight kernels (f32, f16, bf16 weights x f32 activations): the
// decode dot (KernelSet::vec_dot) and the prefill GEMM, each written once
// over GCC vector types of W floats and compiled per ISA:
// kernels/avx2/float_avx2.cpp (W = 8), kernels/avx512/float_avx512.cpp
// (W = 16), kernels/neon/float_neon.cpp (W = 4), with that ISA's f16 / bf16
// widening loaders. Internal linkage: each ISA's copy stays its own.
// Reference twins: ref::vec_dot_{f32,f16,bf16} for the dot, the scalar set's
// gemm (one vec_dot per row and token) for the GEMM; tests/test_kernels.cpp,
// tests/test_kernels_gemm.cpp.
//
// Dot (decode, one weight row): per element 2 B of w (f16 / bf16) or 4 B (f32)
// + 4 B of a, 2 FLOPs; the activation stays in L1 across a matrix's rows, so
// the weight bytes bound it (a 1B f16 model: 2.5 GB per token, ~25 tok/s at
// 60 GB/s). 4 independent W-lane FMA chains: a weight and an activation load
// per FMA hold the loop at ~1 FMA per cycle, and 4 chains cover the FMA's
// 4-cycle latency at that rate. The reference sums in double; the float
// partial sums are flushed into double every kChunk = 32 W elements, so each
// float lane sums at most 8 products however long the row is.
//
// Two GEMMs. FloatGemmTokens (below; prefill blocks of >= W tokens) puts
// tokens in lanes. FloatGemm (fewer tokens: decode of short float rows, edge
// blocks) puts elements in lanes:
// GEMM micro-tile kR rows x kC tokens: per W elements, kR weight vectors (f16 and
// bf16 widened in registers by the ISA's converter, straight from the row:
// half the bytes of f32 from L1/L2, and no widened copy to write) and kC
// activation vectors feed kR * kC FMAs into kR * kC accumulators (4 x 4: 8
// loads per 16 FMAs, against 2 loads per FMA for vec_dot row by row, which is
// load-bound at ~1 FMA per cycle); one horizontal sum per (row, token) at the
// end; elements past the last whole vector in a scalar tail. Rows outer (a
// tile's rows stay in L1/L2 for the token tiles), tokens inner.
//
// The GEMM's float sums run in another order than vec_dot's (KernelSet::gemm_reordered).
#pragma once
#ifndef EDGELLM_ISA_REGION
#error "kernels/float_tile.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/dispatch.h"
#include "kernels/tile_table.h"

namespace edgellm {
namespace {

template <int W>
struct FloatLanes {
  typedef float V __attribute__((vector_size(W * sizeof(float))));
};
template <int W>
struct DoubleLanes {
  typedef double V __attribute__((vector_size(W * sizeof(double))));
};

// Lane l of the result of one transpose stage (below) for the row with
// bit H clear (lo) or set (hi): indices < W pick from x, >= W from y.
template <int W, int H, bool kHi>
constexpr int transpose_lane(int l) {
  if constexpr (kHi) return (l & H) ? l + W : l + H;
  else return (l & H) ? l - H + W : l;
}
template <int W, int H, bool kHi, int... L>
inline typename FloatLanes<W>::V transpose_pick(typename FloatLanes<W>::V x, typename FloatLanes<W>::V y,
                                           std::integer_sequence<int, L...>) {
  return __builtin_shufflevector(x, y, transpose_lane<W, H, kHi>(L)...);
}

// a[i][l] <- a[l][i] for a W x W block in registers: log2 W stages, each
// swapping the off-diagonal H x H blocks of every 2H x 2H block with two
// constant two-input shuffles per row pair (W = 16: 64 vpermt2ps).
// Decode attention transposes key tiles with it, FloatGemmTokens token rows.
template <int W, int H = W / 2>
inline void transpose_lanes(typename FloatLanes<W>::V* a) {
  if constexpr (H >= 1) {
    using Seq = std::make_integer_sequence<int, W>;
    for (int i = 0; i < W; ++i) {
      if (i & H) continue;
      const typename FloatLanes<W>::V x = a[i], y = a[i + H];
      a[i] = transpose_pick<W, H, false>(x, y, Seq{});
      a[i + H] = transpose_pick<W, H, true>(x, y, Seq{});
    }
    transpose_lanes<W, H / 2>(a);
  }
}

// A vector's W lanes folded by op (associative) by halving (W = 16: 8 with
// 8, 4 with 4, ...): log2 W vector ops instead of W - 1 dependent scalar
// ones. The GEMM tile ends with one sum per (row, token); decode attention
// takes a max and a sum per query row and tile of keys.
// The halves come out by register shuffles (vextractf64x4, ...): halves
// copied out through memory made a 64-byte store feed 32-byte loads, which
// the store buffer does not forward.
template <int W, class Op, int... L>
inline typename FloatLanes<W / 2>::V fold_halves(typename FloatLanes<W>::V v, Op op, std::integer_sequence<int, L...>) {
  return op(__builtin_shufflevector(v, v, L...), __builtin_shufflevector(v, v, (L + W / 2)...));
}
template <int W, class Op>
inline float lane_fold(typename FloatLanes<W>::V v, Op op) {
  if constexpr (W == 1) {
    return v[0];
  } else {
    return lane_fold<W / 2>(fold_halves<W>(v, op, std::make_integer_sequence<int, W / 2>{}), op);
  }
}
template <int W>
inline float lane_sum(typename FloatLanes<W>::V v) {
  return lane_fold<W>(v, [](auto a, auto b) { return a + b; });
}
template <int W>
inline float lane_max(typename FloatLanes<W>::V v) {
  return lane_fold<W>(v, [](auto a, auto b) { return a > b ? a : b; });
}

// An ISA vector (__m256, __m512, float32x4_t) as the tile's vector type.
template <class V, class Native>
inline V as_v(Native x) {
  static_assert(sizeof(V) == sizeof(Native));
  V v;
  std::memcpy(&v, &x, sizeof v);
  return v;
}

// A weight format for the tile: Elem, load(p) -> W floats, one(p) -> 1 float.
// The ISA files supply the f16 / bf16 ones; f32 is the same everywhere.
template <int W>
struct LoadF32 {
  using Elem = float;
  using V = typename FloatLanes<W>::V;
  static V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static float one(const float* p) { return *p; }
};

template <int W>
struct FloatDot {
  using V = typename FloatLanes<W>::V;
  using D = typename DoubleLanes<W>::V;
  static constexpr int64_t kStep = 4 * W;    // one pass of the 4 chains
  static constexpr int64_t kChunk = 32 * W;  // elements per flush into double

  template <class L>
  static float dot(int64_t n, const void* w, const void* a) {
    const auto* wr = static_cast<const typename L::Elem*>(w);
    const auto* ar = static_cast<const float*>(a);
    D total = D{};
    int64_t i = 0;
    while (n - i >= kStep) {
      const int64_t end = i + std::min(kChunk, (n - i) / kStep * kStep);
      V s0 = V{}, s1 = V{}, s2 = V{}, s3 = V{};
      for (; i < end; i += kStep) {
        s0 += L::load(wr + i) * LoadF32<W>::load(ar + i);
        s1 += L::load(wr + i + W) * LoadF32<W>::load(ar + i + W);
        s2 += L::load(wr + i + 2 * W) * LoadF32<W>::load(ar + i + 2 * W);
        s3 += L::load(wr + i + 3 * W) * LoadF32<W>::load(ar + i + 3 * W);
      }
      total += __builtin_convertvector((s0 + s1) + (s2 + s3), D);
    }
    V s = V{};
    for (; i + W <= n; i += W) s += L::load(wr + i) * LoadF32<W>::load(ar + i);
    total += __builtin_convertvector(s, D);
    double sum = 0;
    for (int l = 0; l < W; ++l) sum += total[l];
    for (; i < n; ++i) sum += double(L::one(wr + i)) * double(ar[i]);  // < W left
    return float(sum);
  }
};

template <int W, int kR, int kC>
struct FloatGemm {
  using V = typename FloatLanes<W>::V;

  static float hsum(V v) { return lane_sum<W>(v); }

  template <class L>
  struct Tiles {
    using Elem = typename L::Elem;
    template <int R, int C>
    struct Tile {
      static void run(int64_t n, const Elem* const* w, const float* a, size_t as_floats, float* y, size_t ldy) {
        V acc[R][C];
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) acc[r][c] = V{};
        int64_t i = 0;
        for (; i + W <= n; i += W) {
          V wv[R];
          for (int r = 0; r < R; ++r) wv[r] = L::load(w[r] + i);
          for (int c = 0; c < C; ++c) {
            const V av = LoadF32<W>::load(a + size_t(c) * as_floats + size_t(i));
            for (int r = 0; r < R; ++r) acc[r][c] += wv[r] * av;
          }
        }
        for (int c = 0; c < C; ++c)
          for (int r = 0; r < R; ++r) {
            float s = hsum(acc[r][c]);
            for (int64_t j = i; j < n; ++j) s += L::one(w[r] + j) * a[size_t(c) * as_floats + size_t(j)];
            y[size_t(c) * ldy + size_t(r)] = s;
          }
      }
    };
    using Table = TileTable<Tile, kR, kC>;
  };

  template <class L>
  // No scratch (gemm_scratch stays null): the tile reads the weight rows
  // and f32 activations where they are.
  static void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                   float* y, size_t ldy, void*) {
    using T = typename Tiles<L>::Table;
    using Elem = typename L::Elem;
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* af = static_cast<const float*>(a);
    const size_t as_floats = as / sizeof(float);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
      const int R = int(std::min<int64_t>(kR, n_rows - r0));
      const Elem* rows[kR];
      for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const Elem*>(wb + size_t(r0 + r) * ws);
      float* yr = y + size_t(r0);
      int64_t t0 = 0;
      for (const auto full = T::get(R, kC); t0 + kC <= n_tok; t0 += kC)
        full(n, rows, af + size_t(t0) * as_floats, as_floats, yr + size_t(t0) * ldy, ldy);
      if (t0 < n_tok) T::get(R, int(n_tok - t0))(n, rows, af + size_t(t0) * as_floats, as_floats, yr + size_t(t0) * ldy, ldy);
    }
  }
};

// Prefill GEMM with tokens in lanes: for W tokens at a time the activations
// are transposed once per call into k-major vectors (act[v][k] = element k
// of tokens vW .. vW + W - 1), and a tile's kR weight rows are widened once
// to f32 (f16 / bf16 exactly) into a contiguous copy. Per k the micro-tile
// loads kTV activation vectors, broadcasts kR weights and does kR * kTV FMAs
// into kR * kTV accumulators: nothing is converted in the inner loop, no
// horizontal sums, and one stream of weights (L1) and of activations per
// tile. AVX-512 12 x 2 (24 accumulators, 32 tokens): 2 loads + 12
// broadcasts per 24 FMAs, ~90 % of the FMA pipes' rate on Zen 5 where the
// elements-in-lanes tile reached 70-80 % (6 weight loads, each converted, +
// 4 activation loads per 24 FMAs; see kernels/avx512/float_avx512.cpp).
// The transpose and the widening are paid once per call and row tile.
// Below kMinTok tokens most lanes would idle, so Small (the
// elements-in-lanes tile, no scratch) does those calls: decode of short
// float rows, edge blocks.
//
// Arithmetic: each (row, token) sums its products in k order, one FMA chain
// per chunk of kChunk k, the chunks' sums added in order (no chain longer
// than kChunk, like vec_dot's flushes), then stored; another order than
// vec_dot's (KernelSet::gemm_reordered).
template <int W, int kR, int kTV, class Small>
struct FloatGemmTokens {
  using V = typename FloatLanes<W>::V;
  static constexpr int64_t kChunk = 256;
  static constexpr int64_t kMinTok = W;

  static int64_t vecs(int64_t n_tok) { return (n_tok + W - 1) / W; }
  static size_t act_bytes(int64_t n, int64_t n_tok) {
    return scratch_round64(size_t(vecs(n_tok)) * size_t(n) * W * sizeof(float));
  }
  static size_t wide_bytes(int64_t n) { return scratch_round64(size_t(kR) * size_t(n) * sizeof(float)); }

  // [float act[vecs][n][W]] [float wide[kR][n]] [V part[kR * kTV]]; none
  // below kMinTok tokens (Small's calls).
  static size_t scratch(int64_t n, int64_t, int64_t n_tok) {
    if (n_tok < kMinTok) return 0;
    return act_bytes(n, n_tok) + wide_bytes(n) + scratch_round64(size_t(kR * kTV) * sizeof(V));
  }

  // x in every lane (one vbroadcastss / dup): lane 0 shuffled to all.
  template <size_t... I>
  static V splat(float x, std::index_sequence<I...>) {
    const V v = {x};
    return __builtin_shufflevector(v, v, int(I * 0)...);
  }
  static V splat(float x) { return splat(x, std::make_index_sequence<W>{}); }

  // R widened rows (wide + r * n) x TV token vectors (act + v * n * W) into
  // part[r * TV + v].
  template <int R, int TV>
  struct Tile {
    static void run(int64_t n, const float* wide, const float* act, V* part) {
      for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
        const int64_t k1 = std::min(n, k0 + kChunk);
        V acc[R][TV];
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < TV; ++v) acc[r][v] = V{};
        for (int64_t k = k0; k < k1; ++k) {
          V av[TV];
          for (int v = 0; v < TV; ++v) av[v] = LoadF32<W>::load(act + (size_t(v) * size_t(n) + size_t(k)) * W);
          for (int r = 0; r < R; ++r) {
            const V wb = splat(wide[size_t(r) * size_t(n) + size_t(k)]);
            for (int v = 0; v < TV; ++v) acc[r][v] += wb * av[v];
          }
        }
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < TV; ++v) part[r * TV + v] = k0 == 0 ? acc[r][v] : part[r * TV + v] + acc[r][v];
      }
    }
  };
  using Table = TileTable<Tile, kR, kTV>;

  // Tokens [vW, vW + W) of a into act[v][k][lane]; lanes past n_tok are 0.
  // Whole W x W squares go through registers (~W log2 W shuffles per W * W
  // elements), the rest element by element.
  static void transpose_tokens(int64_t n, const float* a, size_t as_floats, int64_t n_tok, float* act) {
    for (int64_t v = 0; v < vecs(n_tok); ++v) {
      float* out = act + size_t(v) * size_t(n) * W;
      const int64_t t0 = v * W;
      int64_t k0 = 0;
      if (t0 + W <= n_tok) {
        for (; k0 + W <= n; k0 += W) {
          V x[W];
          for (int l = 0; l < W; ++l) x[l] = LoadF32<W>::load(a + size_t(t0 + l) * as_floats + size_t(k0));
          transpose_lanes<W>(x);
          std::memcpy(out + size_t(k0) * W, x, sizeof x);
        }
      }
      for (int l = 0; l < W; ++l) {
        const int64_t t = t0 + l;
        const float* row = a + size_t(t) * as_floats;
        for (int64_t k = k0; k < n; ++k) out[size_t(k) * W + l] = t < n_tok ? row[k] : 0.0f;
      }
    }
  }

  template <class L>
  static void widen_row(int64_t n, const typename L::Elem* w, float* out) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      const V v = L::load(w + i);
      std::memcpy(out + i, &v, sizeof v);
    }
    for (; i < n; ++i) out[i] = L::one(w + i);
  }

  template <class L>
  static void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                   float* y, size_t ldy, void* scratch) {
    if (n_tok < kMinTok) return Small::template gemm<L>(n, w, ws, n_rows, a, as, n_tok, y, ldy, nullptr);
    const int64_t nv = vecs(n_tok);
    auto* act = static_cast<float*>(scratch);
    auto* wide = reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) + act_bytes(n, n_tok));
    auto* part = reinterpret_cast<V*>(reinterpret_cast<uint8_t*>(wide) + wide_bytes(n));
    transpose_tokens(n, static_cast<const float*>(a), as / sizeof(float), n_tok, act);
    const auto* wb = static_cast<const uint8_t*>(w);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
      const int R = int(std::min<int64_t>(kR, n_rows - r0));
      for (int r = 0; r < R; ++r)
        widen_row<L>(n, reinterpret_cast<const typename L::Elem*>(wb + size_t(r0 + r) * ws), wide + size_t(r) * size_t(n));
      for (int64_t v0 = 0; v0 < nv; v0 += kTV) {
        const int TV = int(std::min<int64_t>(kTV, nv - v0));
        Table::get(R, TV)(n, wide, act + size_t(v0) * size_t(n) * W, part);
        for (int v = 0; v < TV; ++v)
          for (int l = 0; l < W && (v0 + v) * W + l < n_tok; ++l) {
            float* yt = y + size_t((v0 + v) * W + l) * ldy + size_t(r0);
            for (int r = 0; r < R; ++r) yt[r] = part[r * TV + v][l];
          }
      }
    }
  }
};

// Registers the dot for f32, f16 and bf16 weights and G's GEMM for each, with
// the ISA's loaders for the two 16-bit types; G::scratch, where G has one,
// as the GEMM's scratch size.
template <class G, class = void>
struct HasScratch : std::false_type {};
template <class G>
struct HasScratch<G, std::void_t<decltype(&G::scratch)>> : std::true_type {};
// Registers the dot and G's GEMM for f32, f16 and bf16 weights, with the
// ISA's loaders for the two 16-bit types.
template <class G, class LoadF16, class LoadBF16>
void register_float_kernels(KernelSet& k) {
  constexpr int W = int(sizeof(typename G::V) / sizeof(float));
  k.vec_dot[int(GgmlType::F32)] = FloatDot<W>::template dot<LoadF32<W>>;
  k.vec_dot[int(GgmlType::F16)] = FloatDot<W>::template dot<LoadF16>;
  k.vec_dot[int(GgmlType::BF16)] = FloatDot<W>::template dot<LoadBF16>;
  k.gemm[int(GgmlType::F32)] = G::template gemm<LoadF32<W>>;
  k.gemm[int(GgmlType::F16)] = G::template gemm<LoadF16>;
  k.gemm[int(GgmlType::BF16)] = G::template gemm<LoadBF16>;
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    k.gemm_reordered[int(t)] = true;
    if constexpr (HasScratch<G>::value) k.gemm_scratch[int(t)] = G::scratch;
  }
}

}  // namespace
}  // namespace edgellm
