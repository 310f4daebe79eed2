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
//   - the tile's K and V rows are converted from f16 once for all R rows
//     (and the rows 4 tiles ahead prefetched);
//   - scores S^T[j][r] = sum_d qt[d][r] * k[j][d]: a vector of rows per key,
//     up to 8 keys at a time (as the register file allows), so each qt load
//     feeds up to 8 FMAs (hd * R * W MACs);
//   - the causal mask, the running max m, e^(s - m) (vexp) and the running
//     sum l are vectors over rows too: no horizontal reductions at all;
//   - out[r] = c[r] * out[r] + sum_j p[j][r] * v[j], 4 vectors of two rows at
//     a time, each value load feeding 2 FMAs (dv * R * W MACs).
// For qwen2.5-0.5b (7 query heads per KV head, head size 64) and a 512-token
// prompt that is ~3 G multiply-adds; the per-(head, key) scalar dot, axpy and
// expf it replaces ran at ~3 MACs per instruction, this at ~10-20.
//
// Keys in lanes (decode, f16 K): with few rows (R <= 8 and R + log2 W < the
// padded rows, keys_in_lanes_pays) the scores are S[r] over W keys instead:
// the tile's key rows transposed in registers, R FMAs per element of d, and
// the softmax one vexp per row. Decode at depth 4096 on qwen2.5-0.5b's shape
// (7 rows, head 64, one thread, AVX-512, Zen 5): 169 -> 154 us per (layer,
// KV head) with the cache in DRAM, 16.3 -> 12.8 us for 512 positions in L2;
// llama3's 4 rows of 128: 378 -> 303 us. In a full tile of an f16 cache the
// keys and values are then widened in registers straight from the cache rows
// (no f32 copy written and read back), the values accumulated for all rows
// at once (each widened value feeds R FMAs), and a row's rescale skipped while
// its running max stays: 154-164 -> 104-106 us (~10 GB/s per thread of the
// 1 MiB of K and V per call), llama3's shape 299 -> 222 us.
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
#ifndef EDGELLM_ISA_REGION
#error "kernels/attention_tile.h holds SIMD code: include it after kernels/<isa>/isa_begin.h"
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/float_tile.h"
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
// At most this many query rows take the keys-in-lanes form (keys_in_lanes_pays).
constexpr int kAttnKeyLaneRows = 8;
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

// Keys per pass over d for RV row vectors: as many as keep the NK x RV
// accumulators, the query vectors and a broadcast within the register file
// (16 vector registers at W = 8 (AVX2), 32 at W = 16 (AVX-512) and W = 4
// (NEON)), at most the tile's W keys. A dynamic RV loop let GCC keep the
// accumulators on the stack (AVX2: a store-forwarding chain per FMA, ~5x
// slower decode attention).
template <int W, int RV>
constexpr int score_keys_per_pass() {
  constexpr int budget = (W == 8 ? 16 : 32) - RV - 2;
  int nk = W < 8 ? W : 8;  // each key's row is one more pointer register
  while (nk > 1 && nk * RV > budget) nk /= 2;
  return nk;
}

// Scores of the tile's W keys (kr, row j at kr + j * hd) against the RV row
// vectors of qt (qt[d * Rp + r], scaled), masked: a row's key outside
// [lo, lim) is -inf. S^T goes to pt[j * Rp + r]. Per d: RV query loads and
// NK broadcasts feed NK x RV FMAs.
// HD > 0: the head size as a compile-time constant (64 and 128, the common
// ones), so that key a's element d is a constant displacement from one
// pointer; with a run-time hd GCC spills the NK row pointers and reloads one
// per FMA (a quarter of decode attention's time at depth 4096).
template <int W, int RV, int HD = 0>
inline void score_tile(const float* qt, int Rp, const float* kr, int64_t hd_rt, int64_t s0,
                       const typename Lanes<W>::F* lim, const typename Lanes<W>::F* lo, float* pt) {
  using F = typename Lanes<W>::F;
  const int64_t hd = HD > 0 ? HD : hd_rt;
  constexpr int NK = score_keys_per_pass<W, RV>();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < W; j += NK) {
    F s[NK][RV];
    for (int a = 0; a < NK; ++a)
      for (int v = 0; v < RV; ++v) s[a][v] = splat<W>(0);
    const float* kj = kr + j * hd;
    for (int64_t d = 0; d < hd; ++d) {
      F q[RV];
      for (int v = 0; v < RV; ++v) q[v] = loadv<W>(qt + d * Rp + v * W);
      for (int a = 0; a < NK; ++a) {
        const float k = kj[a * hd + d];
        for (int v = 0; v < RV; ++v) s[a][v] += q[v] * k;
      }
    }
    for (int a = 0; a < NK; ++a) {
      const F pos = splat<W>(float(s0 + j + a));
      for (int v = 0; v < RV; ++v) {
        const auto seen = (pos < lim[v]) & (pos >= lo[v]);
        storev<W>(pt + (j + a) * Rp + v * W, seen ? s[a][v] : splat<W>(neg_inf));
      }
    }
  }
}

// Tiles of cache rows read ahead of the one being scored.
constexpr int64_t kAttnPrefetchTiles = 4;

// Every 64-byte line of [p, p + n).
inline void prefetch_bytes(const uint8_t* p, size_t n) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
  for (uintptr_t a = first; a < reinterpret_cast<uintptr_t>(p) + n; a += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(a));
}

// Rows a[i * dvp ..] (i < NR) of the accumulator: a = c[i] * a + sum_j
// p[j * pj + i * pi] * value j over the tile's n values, U vectors of each
// row at once (NR x U accumulators: each value load feeds NR FMAs). val(j, k)
// gives value j's elements k .. k + W - 1 as floats. P^T (rows in lanes):
// pj = Rp, pi = 1; P (keys in lanes): pj = 1, pi = W.
template <int W, int NR, int U = 4, class ValAt>
inline void accumulate_rows(float* a, int64_t dvp, const float* c, const float* p, int pj, int pi, ValAt val,
                            int64_t n) {
  using F = typename Lanes<W>::F;
  int64_t k = 0;
  for (; k + U * W <= dvp; k += U * W) {
    F x[NR][U];
    for (int i = 0; i < NR; ++i)
      for (int u = 0; u < U; ++u) x[i][u] = loadv<W>(a + i * dvp + k + u * W) * c[i];
    for (int64_t j = 0; j < n; ++j) {
      F vv[U];
      for (int u = 0; u < U; ++u) vv[u] = val(j, k + u * W);
      for (int i = 0; i < NR; ++i) {
        const float w = p[j * pj + i * pi];
        for (int u = 0; u < U; ++u) x[i][u] += vv[u] * w;
      }
    }
    for (int i = 0; i < NR; ++i)
      for (int u = 0; u < U; ++u) storev<W>(a + i * dvp + k + u * W, x[i][u]);
  }
  for (; k < dvp; k += W) {
    F x[NR];
    for (int i = 0; i < NR; ++i) x[i] = loadv<W>(a + i * dvp + k) * c[i];
    for (int64_t j = 0; j < n; ++j) {
      const F vj = val(j, k);
      for (int i = 0; i < NR; ++i) x[i] += vj * p[j * pj + i * pi];
    }
    for (int i = 0; i < NR; ++i) storev<W>(a + i * dvp + k, x[i]);
  }
}

// Value vectors per pass of accumulate_rows over NR rows: as many (4, 2 or
// 1) as keep the NR x U accumulators and the U values within the register
// file (16 vector registers at W = 8, 32 at W = 16 and W = 4), one spare.
template <int W, int NR>
constexpr int value_vectors_per_pass() {
  constexpr int regs = W == 8 ? 16 : 32;
  int u = 4;
  while (u > 1 && NR * u + u + 1 > regs) u /= 2;
  return u;
}

// Row vectors of a tile: kAttnMaxRows rows in vectors of W.
template <int W>
constexpr int kAttnMaxVec = (kAttnMaxRows + W - 1) / W;

// score_tile for a run-time rv in 1 .. kAttnMaxVec<W>.
template <int W, int RV = 1>
inline void score_tile_rv(int rv, const float* qt, int Rp, const float* kr, int64_t hd, int64_t s0,
                          const typename Lanes<W>::F* lim, const typename Lanes<W>::F* lo, float* pt) {
  if constexpr (RV < kAttnMaxVec<W>) {
    if (rv > RV) return score_tile_rv<W, RV + 1>(rv, qt, Rp, kr, hd, s0, lim, lo, pt);
  }
  if (hd == 64) score_tile<W, RV, 64>(qt, Rp, kr, hd, s0, lim, lo, pt);
  else if (hd == 128) score_tile<W, RV, 128>(qt, Rp, kr, hd, s0, lim, lo, pt);
  else score_tile<W, RV>(qt, Rp, kr, hd, s0, lim, lo, pt);
}

// Keys in lanes, for calls with few query rows (decode: the nq heads of one
// KV head, 7 for qwen2.5-0.5b): rows in lanes spend W lanes of FMA per key
// and d whatever R is (16 x 64 x 16 per tile of 16 keys at W = 16, 7 of 16
// lanes useful), keys in lanes R x hd FMAs of W useful lanes plus the
// tile's transpose (hd / W blocks of W log2 W shuffles): 448 + 256 against
// 1024 FMAs at R = 7, and one vexp per row instead of one per key.
// Whether that form is the cheaper one for R rows at W lanes.
template <int W>
constexpr bool keys_in_lanes_pays(int R) {
  int log2w = 0;
  while ((1 << log2w) < W) ++log2w;
  return R <= kAttnKeyLaneRows && R + log2w < (R + W - 1) / W * W;
}

// Scores of the tile's W keys against NR query rows (qk[d * kAttnKeyLaneRows
// + r], scaled): s[r] lane j. key(j, d0) gives key j's elements d0 .. d0 + W - 1
// as floats (hd a multiple of W): widened straight from the cache's f16 row
// in a full tile, read from the widened copy in the last one.
template <int W, int NR, class KeyAt>
inline void score_keys_in_lanes(const float* qk, KeyAt key, int64_t hd, typename Lanes<W>::F* s) {
  using F = typename Lanes<W>::F;
  for (int r = 0; r < NR; ++r) s[r] = splat<W>(0);
  for (int64_t d0 = 0; d0 < hd; d0 += W) {
    F kt[W];
    for (int j = 0; j < W; ++j) kt[j] = key(j, d0);
    transpose_lanes<W>(kt);  // kt[e] lane j: key j's element d0 + e
    const float* q = qk + d0 * kAttnKeyLaneRows;
    for (int e = 0; e < W; ++e)
      for (int r = 0; r < NR; ++r) s[r] += kt[e] * q[e * kAttnKeyLaneRows + r];
  }
}

// Row readers for score_keys_in_lanes and accumulate_rows: (j, e) -> row
// j's elements e .. e + W - 1 as floats, from f32 rows a stride of floats
// apart (the widened copies kr, vr) or widened in registers from f16 cache
// rows a stride of bytes apart.
template <int W>
inline auto f32_rows(const float* base, int64_t stride) {
  return [=](int64_t j, int64_t e) { return loadv<W>(base + j * stride + e); };
}
template <int W, class Isa>
inline auto f16_rows(const uint8_t* base, size_t stride) {
  return [=](int64_t j, int64_t e) {
    return as_v<typename Lanes<W>::F>(Isa::half_vec(reinterpret_cast<const uint16_t*>(base + size_t(j) * stride) + e));
  };
}

// Query rows [r0, r0 + R) of g, row r = token r / nq, head r % nq. KL > 0:
// keys in lanes for exactly R = KL rows (f16 K, head_dim a multiple of W):
// scores S[r] lane j, the online softmax per row (m, l scalars) and P[r][j]
// in pt; otherwise rows in lanes as described at the top.
template <int W, class Isa, int KL = 0>
void attend_rows(const AttendGroup& g, int r0, int R) {
  using F = typename Lanes<W>::F;
  constexpr int kMaxVec = kAttnMaxVec<W>;
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
  float mk[kAttnKeyLaneRows], lk[kAttnKeyLaneRows];  // KL: running max and sum per row
  // Row r's cache rows: position p at row p, or p % ring in a ring cache.
  auto k_at = [&](int64_t p) { return g.k + size_t(g.ring > 0 ? p % g.ring : p) * g.k_stride; };
  auto v_at = [&](int64_t p) { return g.v + size_t(g.ring > 0 ? p % g.ring : p) * g.v_stride; };

  auto q_row = [&](int r) {
    const int rr = r0 + r;
    return g.q + size_t(rr / g.nq) * g.q_tok_stride + size_t(rr % g.nq) * g.q_stride;
  };
  if constexpr (KL > 0) {
    float* qk = qt;  // qk[d * kAttnKeyLaneRows + r]
    for (int r = 0; r < kAttnKeyLaneRows; ++r) {
      const float* q = r < R ? q_row(r) : nullptr;
      for (int64_t d = 0; d < hd; ++d) qk[d * kAttnKeyLaneRows + r] = q ? q[d] * g.scale : 0.0f;
      mk[r] = neg_inf;
      lk[r] = 0;
    }
  } else if (kq) {
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
  const size_t k_row_bytes = row_size(g.k_type, hd), v_row_bytes = row_size(g.v_type, dv);
  // The first row's window starts the tiles (aligned down to W: a ring holds
  // a multiple of 32 rows, so no tile wraps around it).
  const int64_t s_begin = g.window > 0 ? std::max<int64_t>(0, g.n_kv + r0 / g.nq - g.window) / W * W : 0;
  for (int64_t s0 = s_begin; s0 < n_end; s0 += W) {
    const int64_t n = std::min<int64_t>(W, n_end - s0);
    // The K and V rows kAttnPrefetchTiles tiles ahead: rows of one head are
    // short runs (128-256 bytes) a cache-row stride apart, which the hardware
    // prefetchers follow late; the conversions below otherwise wait on them.
    for (int64_t j = 0; j < W; ++j) {
      const int64_t p = s0 + kAttnPrefetchTiles * W + j;
      if (p >= n_end) break;
      prefetch_bytes(k_at(p), k_row_bytes);
      prefetch_bytes(v_at(p), v_row_bytes);
    }
    // Keys in lanes reads a full tile's f16 values where they are too;
    // otherwise the tile's values are widened once into vr.
    const bool values_in_place = KL > 0 && n == W && g.v_type == GgmlType::F16 && dv == dvp;
    if (!values_in_place) {
      for (int64_t j = 0; j < W; ++j) {
        if (j < n) Isa::row_to_f32(g.v_type, v_at(s0 + j), vr + j * dvp, dv);
        else std::fill_n(vr + j * dvp, dv, 0.0f);  // past the end: zero values (keys masked below)
      }
    }
    // Keys in lanes reads a full tile's f16 keys where they are (a tile
    // never wraps around a ring); the other forms and a partial last tile
    // widen them once into kr.
    const bool keys_in_place = KL > 0 && n == W;
    if (!kq && !keys_in_place) {
      for (int64_t j = 0; j < W; ++j) {
        if (j < n) Isa::half_to_float(reinterpret_cast<const uint16_t*>(k_at(s0 + j)), kr + j * hd, hd);
        else std::fill_n(kr + j * hd, hd, 0.0f);  // past the end: zero keys (masked below)
      }
    }
    if constexpr (KL > 0) {
      F sk[KL];
      if (keys_in_place) score_keys_in_lanes<W, KL>(qt, f16_rows<W, Isa>(k_at(s0), g.k_stride), hd, sk);
      else score_keys_in_lanes<W, KL>(qt, f32_rows<W>(kr, hd), hd, sk);
      F pos;
      for (int j = 0; j < W; ++j) pos[j] = float(s0 + j);
      for (int r = 0; r < KL; ++r) {
        const auto seen = (pos < lim[r / W][r % W]) & (pos >= lo[r / W][r % W]);
        storev<W>(pt + r * W, seen ? sk[r] : splat<W>(neg_inf));
      }
    } else if (kq) {
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
      // Scores: RV row vectors x NK keys per pass over d, RV a compile-time
      // constant so that the accumulators stay in registers.
      score_tile_rv<W>(RV, qt, Rp, kr, hd, s0, lim, lo, pt);
    }
    // Soft-capping (gemma2): cap * tanh(s / cap) on every visible score, in
    // scalar: W x R tanh per tile, next to W x R x head_dim multiply-adds.
    if (g.softcap > 0)
      for (int64_t i = 0; i < W * (KL > 0 ? KL : Rp); ++i)
        if (pt[i] != neg_inf) pt[i] = g.softcap * tanhf(pt[i] / g.softcap);  // libm, not an inline header function compiled with this ISA
    // Online softmax per row, rows in lanes. A row that has seen nothing yet
    // (its window starts in a later tile) keeps m = -inf: its rescale factor
    // is then 1, not e^(-inf + inf) = NaN (its sums are still 0).
    if constexpr (KL > 0) {
      // Per row: the tile's max and sum by lane folds, one vexp of W keys.
      for (int r = 0; r < KL; ++r) {
        const F x = loadv<W>(pt + r * W);
        const float new_m = std::max(mk[r], lane_max<W>(x));
        // The running max seldom moves after the first tiles: no rescale then.
        const float c = new_m == mk[r] ? 1.0f : vexp<W>(splat<W>(mk[r] - new_m))[0];
        const F p = x == splat<W>(neg_inf) ? splat<W>(0) : vexp<W>(x - new_m);
        storev<W>(pt + r * W, p);
        lk[r] = lk[r] * c + lane_sum<W>(p);
        mk[r] = new_m;
        cs[r] = c;
      }
    }
    for (int v = 0; v < (KL > 0 ? 0 : RV); ++v) {
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
    const auto widened = f32_rows<W>(vr, dvp);
    // out[r] = c[r] * out[r] + sum_j p[j][r] * v[j]. Rows in lanes: two rows
    // x 4 vectors at a time, so each value load feeds two FMAs (one row: 5
    // loads per 4 FMAs, load-bound).
    if constexpr (KL > 0) {
      // All KL rows at once, U vectors of each: a value load feeds KL FMAs.
      constexpr int U = value_vectors_per_pass<W, KL>();
      if (values_in_place) accumulate_rows<W, KL, U>(acc, dvp, cs, pt, 1, W, f16_rows<W, Isa>(v_at(s0), g.v_stride), n);
      else accumulate_rows<W, KL, U>(acc, dvp, cs, pt, 1, W, widened, n);
    } else {
      int r = 0;
      for (; r + 2 <= R; r += 2) accumulate_rows<W, 2>(acc + r * dvp, dvp, cs + r, pt + r, Rp, 1, widened, n);
      if (r < R) accumulate_rows<W, 1>(acc + r * dvp, dvp, cs + r, pt + r, Rp, 1, widened, n);
    }
  }
  for (int r = 0; r < R; ++r) {
    const int rr = r0 + r;
    float* o = g.out + size_t(rr / g.nq) * g.out_tok_stride + size_t(rr % g.nq) * g.out_stride;
    const float inv = 1.0f / (KL > 0 ? lk[r] : l[r / W][r % W]);
    for (int64_t d = 0; d < dv; ++d) o[d] = acc[r * dvp + d] * inv;
  }
}

// attend_rows in keys-in-lanes form for a run-time row count R in KL .. kAttnKeyLaneRows.
template <int W, class Isa, int KL = 1>
void attend_keys_in_lanes(const AttendGroup& g, int R) {
  if constexpr (KL < kAttnKeyLaneRows) {
    if (R > KL) return attend_keys_in_lanes<W, Isa, KL + 1>(g, R);
  }
  attend_rows<W, Isa, KL>(g, 0, KL);
}

template <int W, class Isa>
void attend_group_lanes(const AttendGroup& g) {
  if (g.head_dim > kAttnMaxDim || g.head_dim_v > kAttnMaxDim || !tile_kv_type(g.k_type) || !tile_kv_type(g.v_type) ||
      (g.k_type != GgmlType::F16 && g.head_dim % QK8_0 != 0) || (g.v_type != GgmlType::F16 && g.head_dim_v % QK8_0 != 0)) {
    attend_group_reference(g);
    return;
  }
  const int rows = g.n_tok * g.nq;
  if (g.k_type == GgmlType::F16 && g.head_dim % W == 0 && keys_in_lanes_pays<W>(rows))
    return attend_keys_in_lanes<W, Isa>(g, rows);
  const int tile = attn_rows_per_tile<W>(std::max(g.head_dim, (g.head_dim_v + W - 1) / W * W));
  for (int r0 = 0; r0 < rows; r0 += tile) attend_rows<W, Isa>(g, r0, std::min(tile, rows - r0));
}

}  // namespace
}  // namespace edgellm
