// Prefill GEMM for float weights (f32, f16, bf16) x f32 activations, written
// once over GCC vector types of W floats and compiled per ISA:
// kernels/avx2/gemm_float_avx2.cpp (W = 8), kernels/avx512/gemm_float_avx512.cpp
// (W = 16), kernels/neon/gemm_float_neon.cpp (W = 4). Internal linkage: each
// ISA's copy stays its own. Reference twin: the scalar set's gemm (one vec_dot
// per row and token); tests/test_kernels_gemm.cpp.
//
// A tile of kR weight rows is widened to f32 once per call (f16 and bf16 by
// the ISA's converter; f32 rows are used in place) into a per-thread buffer
// that then stays in L2 while every token tile reads it. Micro-tile kR x kC:
// per W elements, kR weight vectors and kC activation vectors feed kR * kC
// FMAs into kR * kC accumulators (4 x 4: 8 loads per 16 FMAs, against 2 loads
// per FMA for vec_dot row by row, which is load-bound at ~1 FMA per cycle);
// one horizontal sum per (row, token) at the end; elements past the last
// whole vector in a scalar tail.
//
// The float sums run in another order than vec_dot's (KernelSet::gemm_reordered).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/tile_table.h"

namespace edgellm {
namespace {

// Widens n elements of one weight row to f32.
using WidenRowFn = void (*)(const void* src, float* dst, int64_t n);

template <int W>
struct FloatLanes {
  typedef float V __attribute__((vector_size(W * sizeof(float))));
};

template <int W, int kR, int kC>
struct FloatGemm {
  using V = typename FloatLanes<W>::V;

  static V loadv(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static float hsum(V v) {
    float s = 0;
    for (int l = 0; l < W; ++l) s += v[l];
    return s;
  }

  template <int R, int C>
  struct Tile {
    static void run(int64_t n, const float* const* w, const float* a, size_t as_floats, float* y, size_t ldy) {
      V acc[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = V{};
      int64_t i = 0;
      for (; i + W <= n; i += W) {
        V wv[R];
        for (int r = 0; r < R; ++r) wv[r] = loadv(w[r] + i);
        for (int c = 0; c < C; ++c) {
          const V av = loadv(a + size_t(c) * as_floats + size_t(i));
          for (int r = 0; r < R; ++r) acc[r][c] += wv[r] * av;
        }
      }
      for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r) {
          float s = hsum(acc[r][c]);
          for (int64_t j = i; j < n; ++j) s += w[r][j] * a[size_t(c) * as_floats + size_t(j)];
          y[size_t(c) * ldy + size_t(r)] = s;
        }
    }
  };
  using Tiles = TileTable<Tile, kR, kC>;

  // widen == nullptr: the rows are f32 already.
  static void gemm(WidenRowFn widen, int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as,
                   int64_t n_tok, float* y, size_t ldy) {
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* af = static_cast<const float*>(a);
    const size_t as_floats = as / sizeof(float);
    // Grown once per thread to the widest row seen (prefill only, never decode).
    thread_local std::vector<float> buf;
    if (widen && buf.size() < size_t(kR * n)) buf.resize(size_t(kR * n));
    for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
      const int R = int(std::min<int64_t>(kR, n_rows - r0));
      const float* rows[kR];
      for (int r = 0; r < R; ++r) {
        const uint8_t* src = wb + size_t(r0 + r) * ws;
        if (widen) {
          widen(src, buf.data() + size_t(r * n), n);
          rows[r] = buf.data() + size_t(r * n);
        } else {
          rows[r] = reinterpret_cast<const float*>(src);
        }
      }
      float* yr = y + size_t(r0);
      int64_t t0 = 0;
      for (const auto full = Tiles::get(R, kC); t0 + kC <= n_tok; t0 += kC)
        full(n, rows, af + size_t(t0) * as_floats, as_floats, yr + size_t(t0) * ldy, ldy);
      if (t0 < n_tok) Tiles::get(R, int(n_tok - t0))(n, rows, af + size_t(t0) * as_floats, as_floats, yr + size_t(t0) * ldy, ldy);
    }
  }
};

// Registers G's GEMM for f32, f16 and bf16 weights, with the ISA's widening
// converters for the two 16-bit types.
template <class G, WidenRowFn kWidenF16, WidenRowFn kWidenBF16>
void register_float_gemms(KernelSet& k) {
  k.gemm[int(GgmlType::F32)] = [](int64_t n, const void* w, size_t ws, int64_t nr, const void* a, size_t as,
                                  int64_t nt, float* y, size_t ldy) { G::gemm(nullptr, n, w, ws, nr, a, as, nt, y, ldy); };
  k.gemm[int(GgmlType::F16)] = [](int64_t n, const void* w, size_t ws, int64_t nr, const void* a, size_t as,
                                  int64_t nt, float* y, size_t ldy) { G::gemm(kWidenF16, n, w, ws, nr, a, as, nt, y, ldy); };
  k.gemm[int(GgmlType::BF16)] = [](int64_t n, const void* w, size_t ws, int64_t nr, const void* a, size_t as,
                                   int64_t nt, float* y, size_t ldy) { G::gemm(kWidenBF16, n, w, ws, nr, a, as, nt, y, ldy); };
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) k.gemm_reordered[int(t)] = true;
}

}  // namespace
}  // namespace edgellm
