// Grouped-query attention (KernelSet::attend_group), SwiGLU and GeGLU written once
// over GCC vector types of W floats, compiled per ISA:
// kernels/avx2/attention_avx2.cpp (W = 8), kernels/avx512/attention_avx512.cpp
// (W = 16) and kernels/neon/attention_neon.cpp (W = 4). Everything here has internal linkage, so each ISA's copy stays its
// own. Reference twins: attend_group_reference() (kernels/attention.cpp) and
// swiglu_inplace() and geglu_inplace() (kernels/nn_ops.cpp);
// tests/test_attention_kernels.cpp.
//
// Query rows in lanes. One call covers R = n_tok x nq query rows (a block of
// tokens times the query heads of one KV head, R <= 32). Q is transposed once
// per call, scaled, to qt[d][r]; then per tile of W cached positions:
//   - the tile's K and V rows are converted from f16 once for all R rows;
//   - scores S^T[j][r] = sum_d qt[d][r] * k[j][d]: a vector of rows per key,
//     4 keys at a time, so each qt load feeds 4 FMAs (hd * R * W MACs);
//   - the causal mask, the running max m, e^(s - m) (vexp) and the running
//     sum l are vectors over rows too: no horizontal reductions at all;
//   - out[r] = c[r] * out[r] + sum_j p[j][r] * v[j], 4 vectors of a row at a
//     time, each broadcast p feeding 4 FMAs (dv * R * W MACs).
// For qwen2.5-0.5b (7 query heads per KV head, head size 64) and a 512-token
// prompt that is ~3 G multiply-adds; the per-(head, key) scalar dot, axpy and
// expf it replaces ran at ~3 MACs per instruction, this at ~10-20.
//
// Quantized caches (q8_0: 34 bytes per 32 elements, 1.06 B/element; q4_0: 18
// per 32, 0.56 B/element; f16: 2 B/element), read in place:
//   - a q8_0 / q4_0 K: the R query rows are quantized to q8_0 once per call
//     (qq, on the stack) and the tile's scores are int8 block dots of the key
//     rows against them (Isa::kq_scores: maddubs / VNNI dpbusd / SMULL or
//     SDOT), 4 keys x 1-2 rows per register tile, each key block loaded and
//     unpacked once per row pair;
//   - a q8_0 / q4_0 V: the tile's W rows are widened to f32 (vr, in L1) block
//     by block, once for all R rows, like the f16 rows.
// Isa supplies: half_to_float(src, dst, n), row_to_f32(type, src, dst, n)
//   (f16 / q8_0 / q4_0 row to f32, dequantize_row's arithmetic) and
//   kq_scores(k_type, k, k_stride, nk, qq, nb, nr, scale, out, ldo):
//   out[j * ldo + r] = scale * vec_dot(k + j * k_stride, qq + r * nb) for
//   j < nk keys, r < nr rows (nb blocks per row).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

namespace edgellm {
namespace {

template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(W * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(W * sizeof(float))));
};

template <int W>
inline typename Lanes<W>::F splat(float x) {
  return typename Lanes<W>::F{} + x;
}
template <int W>
inline typename Lanes<W>::F loadv(const float* p) {
  typename Lanes<W>::F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
inline void storev(float* p, typename Lanes<W>::F v) {
  std::memcpy(p, &v, sizeof v);
}

// e^x per lane, relative error ~2e-7 (Cephes expf: x = n ln2 + r, |r| <= ln2/2,
// a degree-6 polynomial for e^r, 2^n through the exponent bits). Inputs are
// clamped to [-87.3, 88.7] so that the result stays a finite normal float.
template <int W>
inline typename Lanes<W>::F vexp(typename Lanes<W>::F x) {
  using F = typename Lanes<W>::F;
  using I = typename Lanes<W>::I;
  const F lo = splat<W>(-87.3f), hi = splat<W>(88.7f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // Round x / ln2 to the nearest integer: adding 1.5 * 2^23 leaves no fraction bits.
  F n = x * 1.44269504088896341f + 12582912.0f;
  n = n - 12582912.0f;
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  F p = splat<W>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const I e = (__builtin_convertvector(n, I) + 127) << 23;
  F two_n;
  std::memcpy(&two_n, &e, sizeof two_n);
  return p * two_n;
}

template <int W>
void swiglu_lanes(float* gate, const float* up, int64_t n) {
  using F = typename Lanes<W>::F;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F g = loadv<W>(gate + i);
    storev<W>(gate + i, g / (vexp<W>(-g) + 1.0f) * loadv<W>(up + i));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// GeGLU with GELU's tanh form, 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x +
// 0.044715 x^3), computed as x / (1 + e^(-2u)) (the same number: 1 + tanh(u)
// = 2 / (1 + e^(-2u))): one vexp and one division per element like swiglu,
// and no cancellation in 1 + tanh(u) where tanh nears -1 (x < -3). vexp's
// clamp keeps e^(-2u) finite, so large |x| give x or -0, never NaN.
template <int W>
void geglu_lanes(float* gate, const float* up, int64_t n) {
  using F = typename Lanes<W>::F;
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F x = loadv<W>(gate + i);
    const F u = x * (1.0f + 0.044715f * x * x) * kSqrt2OverPi;
    storev<W>(gate + i, x / (vexp<W>(-2.0f * u) + 1.0f) * loadv<W>(up + i));
  }
  for (; i < n; ++i) {
    const float x = gate[i];
    gate[i] = x / (1.0f + expf(-2.0f * kSqrt2OverPi * x * (1.0f + 0.044715f * x * x))) * up[i];  // libm expf
  }
}

constexpr int64_t kAttnMaxDim = 512;  // larger heads take the reference path
constexpr int kAttnMaxRows = 32;
// The per-tile query and accumulator buffers hold this many floats: 32 rows
// of heads up to 256 wide, fewer rows of wider ones (16 of Gemma 4's 512:
// its global layers would otherwise take the scalar reference, 4x slower
// decode at depth 2048). ~140 KB of stack per call at 16 lanes.
constexpr int64_t kAttnTileFloats = 256 * kAttnMaxRows;

// Query rows per tile for heads of `dim` (the wider of K and the padded V):
// whole vectors of W rows, as many as the buffers hold, at most 32.
template <int W>
constexpr int attn_rows_per_tile(int64_t dim) {
  return int(std::min<int64_t>(kAttnMaxRows, kAttnTileFloats / dim / W * W));
}

inline bool tile_kv_type(GgmlType t) { return t == GgmlType::F16 || t == GgmlType::Q8_0 || t == GgmlType::Q4_0; }

// Query rows [r0, r0 + R) of g, row r = token r / nq, head r % nq.
template <int W, class Isa>
void attend_rows(const AttendGroup& g, int r0, int R) {
  using F = typename Lanes<W>::F;
  constexpr int kMaxVec = (kAttnMaxRows + W - 1) / W;
  const int RV = (R + W - 1) / W, Rp = RV * W;
  const int64_t hd = g.head_dim, dv = g.head_dim_v, dvp = (dv + W - 1) / W * W;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const bool kq = g.k_type != GgmlType::F16;  // block-type K: int8 scores
  const int64_t nbk = hd / QK8_0;             // q8_0 blocks per query row (block-type K)
  // Rp * hd and Rp * dvp fit kAttnTileFloats (attn_rows_per_tile).
  alignas(64) float qt[kAttnTileFloats];  // qt[d * Rp + r] (f16 K)
  alignas(64) block_q8_0 qq[kAttnTileFloats / QK8_0];  // row r at qq + r * nbk (block K)
  alignas(64) float acc[kAttnTileFloats];  // row r at acc + r * dvp
  alignas(64) float kr[W * kAttnMaxDim];  // key j at kr + j * hd
  alignas(64) float vr[W * kAttnMaxDim];  // value j at vr + j * dvp (zero padded)
  alignas(64) float pt[W * kAttnMaxRows];  // S^T, then P^T: pt[j * Rp + r]
  alignas(64) float cs[kAttnMaxRows];      // this tile's rescale factor per row
  F m[kMaxVec], l[kMaxVec], lim[kMaxVec], lo[kMaxVec];
  // Row r's cache rows: position p at row p, or p % ring in a ring cache.
  auto k_at = [&](int64_t p) { return g.k + size_t(g.ring > 0 ? p % g.ring : p) * g.k_stride; };
  auto v_at = [&](int64_t p) { return g.v + size_t(g.ring > 0 ? p % g.ring : p) * g.v_stride; };

  auto q_row = [&](int r) {
    const int rr = r0 + r;
    return g.q + size_t(rr / g.nq) * g.q_tok_stride + size_t(rr % g.nq) * g.q_stride;
  };
  if (kq) {
    for (int r = 0; r < R; ++r) {
      if (g.quantize_q8) g.quantize_q8(q_row(r), qq + r * nbk, hd);
      else quantize_row(GgmlType::Q8_0, q_row(r), qq + r * nbk, hd);
    }
  } else {
    for (int r = 0; r < Rp; ++r) {
      if (r < R) {
        const float* q = q_row(r);
        for (int64_t d = 0; d < hd; ++d) qt[d * Rp + r] = q[d] * g.scale;
      } else {
        for (int64_t d = 0; d < hd; ++d) qt[d * Rp + r] = 0;  // padding rows: scores 0, never stored
      }
    }
  }
  std::fill_n(acc, size_t(Rp) * size_t(dvp), 0.0f);
  for (int v = 0; v < RV; ++v) {
    m[v] = splat<W>(neg_inf);
    l[v] = splat<W>(0);
    // Row r may see positions < n_kv + its token index (causal) and, in a
    // sliding window, >= that minus the window.
    for (int i = 0; i < W; ++i) {
      const int r = v * W + i;
      lim[v][i] = float(g.n_kv + (r < R ? (r0 + r) / g.nq : 0));
      lo[v][i] = g.window > 0 ? lim[v][i] - float(g.window) : -1.0f;
    }
  }
  for (int64_t j = 0; j < W; ++j) std::fill_n(vr + j * dvp + dv, dvp - dv, 0.0f);

  const int64_t n_end = g.n_kv + (r0 + R - 1) / g.nq;  // positions the last row sees
  // The first row's window starts the tiles (aligned down to W: a ring holds
  // a multiple of 32 rows, so no tile wraps around it).
  const int64_t s_begin = g.window > 0 ? std::max<int64_t>(0, g.n_kv + r0 / g.nq - g.window) / W * W : 0;
  for (int64_t s0 = s_begin; s0 < n_end; s0 += W) {
    const int64_t n = std::min<int64_t>(W, n_end - s0);
    for (int64_t j = 0; j < W; ++j) {
      if (j < n) Isa::row_to_f32(g.v_type, v_at(s0 + j), vr + j * dvp, dv);
      else std::fill_n(vr + j * dvp, dv, 0.0f);  // past the end: zero values (keys masked below)
    }
    if (kq) {
      // Scores straight from the quantized key rows, then the mask: rows
      // r < r_lo (tokens too early to see position s0 + j) and, in a window,
      // r >= r_hi (tokens whose window has passed it) -inf; padding rows 0
      // (never stored).
      Isa::kq_scores(g.k_type, k_at(s0), g.k_stride, int(n), qq, nbk, R, g.scale, pt, size_t(Rp));
      for (int64_t j = 0; j < W; ++j) {
        float* s = pt + j * Rp;
        int r_lo = R, r_hi = R;
        if (j < n) {
          const int64_t first_tok = std::max<int64_t>(0, s0 + j - g.n_kv + 1);
          r_lo = int(std::min<int64_t>(R, std::max<int64_t>(0, first_tok * g.nq - r0)));
          if (g.window > 0) r_hi = int(std::min<int64_t>(R, std::max<int64_t>(0, (s0 + j - g.n_kv + g.window + 1) * g.nq - r0)));
        }
        for (int r = 0; r < r_lo; ++r) s[r] = neg_inf;
        for (int r = std::max(r_lo, r_hi); r < R; ++r) s[r] = neg_inf;
        for (int r = R; r < Rp; ++r) s[r] = 0;
      }
    } else {
      for (int64_t j = 0; j < W; ++j) {
        if (j < n) Isa::half_to_float(reinterpret_cast<const uint16_t*>(k_at(s0 + j)), kr + j * hd, hd);
        else std::fill_n(kr + j * hd, hd, 0.0f);  // past the end: zero keys (masked below)
      }
      // Scores, 4 keys x RV row vectors per pass over d.
      for (int j = 0; j < W; j += 4) {
        F s[4][kMaxVec];
        for (int a = 0; a < 4; ++a)
          for (int v = 0; v < RV; ++v) s[a][v] = splat<W>(0);
        for (int64_t d = 0; d < hd; ++d) {
          const float k0 = kr[(j + 0) * hd + d], k1 = kr[(j + 1) * hd + d], k2 = kr[(j + 2) * hd + d],
                      k3 = kr[(j + 3) * hd + d];
          for (int v = 0; v < RV; ++v) {
            const F q = loadv<W>(qt + d * Rp + v * W);
            s[0][v] += q * k0;
            s[1][v] += q * k1;
            s[2][v] += q * k2;
            s[3][v] += q * k3;
          }
        }
        for (int a = 0; a < 4; ++a) {
          const float pos = float(s0 + j + a);
          for (int v = 0; v < RV; ++v) {
            const auto seen = (splat<W>(pos) < lim[v]) & (splat<W>(pos) >= lo[v]);
            storev<W>(pt + (j + a) * Rp + v * W, seen ? s[a][v] : splat<W>(neg_inf));
          }
        }
      }
    }
    // Soft-capping (gemma2): cap * tanh(s / cap) on every visible score, in
    // scalar: W x R tanh per tile, next to W x R x head_dim multiply-adds.
    if (g.softcap > 0)
      for (int64_t i = 0; i < W * Rp; ++i)
        if (pt[i] != neg_inf) pt[i] = g.softcap * tanhf(pt[i] / g.softcap);  // libm, not an inline header function compiled with this ISA
    // Online softmax per row, rows in lanes. A row that has seen nothing yet
    // (its window starts in a later tile) keeps m = -inf: its rescale factor
    // is then 1, not e^(-inf + inf) = NaN (its sums are still 0).
    for (int v = 0; v < RV; ++v) {
      F tmax = loadv<W>(pt + v * W);
      for (int j = 1; j < W; ++j) {
        const F x = loadv<W>(pt + j * Rp + v * W);
        tmax = x > tmax ? x : tmax;
      }
      const F new_m = tmax > m[v] ? tmax : m[v];
      const F c = new_m == splat<W>(neg_inf) ? splat<W>(1) : vexp<W>(m[v] - new_m);
      F sum = splat<W>(0);
      for (int j = 0; j < W; ++j) {
        const F x = loadv<W>(pt + j * Rp + v * W);
        const F p = x == splat<W>(neg_inf) ? splat<W>(0) : vexp<W>(x - new_m);
        storev<W>(pt + j * Rp + v * W, p);
        sum += p;
      }
      l[v] = l[v] * c + sum;
      m[v] = new_m;
      storev<W>(cs + v * W, c);
    }
    // out[r] = c[r] * out[r] + sum_j p[j][r] * v[j], up to 4 vectors of the row at once.
    for (int r = 0; r < R; ++r) {
      float* a = acc + r * dvp;
      const float c = cs[r];
      int64_t k = 0;
      for (; k + 4 * W <= dvp; k += 4 * W) {
        F a0 = loadv<W>(a + k) * c, a1 = loadv<W>(a + k + W) * c, a2 = loadv<W>(a + k + 2 * W) * c,
          a3 = loadv<W>(a + k + 3 * W) * c;
        for (int64_t j = 0; j < n; ++j) {
          const float p = pt[j * Rp + r];
          const float* vj = vr + j * dvp + k;
          a0 += loadv<W>(vj) * p;
          a1 += loadv<W>(vj + W) * p;
          a2 += loadv<W>(vj + 2 * W) * p;
          a3 += loadv<W>(vj + 3 * W) * p;
        }
        storev<W>(a + k, a0);
        storev<W>(a + k + W, a1);
        storev<W>(a + k + 2 * W, a2);
        storev<W>(a + k + 3 * W, a3);
      }
      for (; k < dvp; k += W) {
        F a0 = loadv<W>(a + k) * c;
        for (int64_t j = 0; j < n; ++j) a0 += loadv<W>(vr + j * dvp + k) * pt[j * Rp + r];
        storev<W>(a + k, a0);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int rr = r0 + r;
    float* o = g.out + size_t(rr / g.nq) * g.out_tok_stride + size_t(rr % g.nq) * g.out_stride;
    const float inv = 1.0f / l[r / W][r % W];
    for (int64_t d = 0; d < dv; ++d) o[d] = acc[r * dvp + d] * inv;
  }
}

template <int W, class Isa>
void attend_group_lanes(const AttendGroup& g) {
  if (g.head_dim > kAttnMaxDim || g.head_dim_v > kAttnMaxDim || !tile_kv_type(g.k_type) || !tile_kv_type(g.v_type) ||
      (g.k_type != GgmlType::F16 && g.head_dim % QK8_0 != 0) || (g.v_type != GgmlType::F16 && g.head_dim_v % QK8_0 != 0)) {
    attend_group_reference(g);
    return;
  }
  const int rows = g.n_tok * g.nq;
  const int tile = attn_rows_per_tile<W>(std::max(g.head_dim, (g.head_dim_v + W - 1) / W * W));
  for (int r0 = 0; r0 < rows; r0 += tile) attend_rows<W, Isa>(g, r0, std::min(tile, rows - r0));
}

}  // namespace
}  // namespace edgellm
