// Scalar reference quantize / dequantize / dot for the non-linear 4-bit types
// iq4_nl (blocks of 32, one fp16 scale) and iq4_xs (super-blocks of 256: one
// fp16 scale and eight 6-bit sub-block scales). Both store per weight a nibble
// that indexes kvalues_iq4nl (tensor/blocks.h), a grid denser near zero than
// q4_0's, which is why iq4_nl beats q4_0 at the same 4.5 bits per weight.
//
// The quantizer is ggml's importance-matrix-free search (quantize_iq4_nl /
// quantize_iq4_xs, ntry = 7): per 32 weights, start from the scale that maps
// the signed max onto the grid's -127 end, then try 15 nearby scales, each
// time snapping every weight to its nearest grid level and solving the
// x^2-weighted least-squares scale for that assignment in closed form; keep
// the best. iq4_xs then rounds the eight sub-block scales to 6 bits against
// one super-block scale and re-snaps the weights to the stored grid. Float
// operations are kept in ggml's order so files match llama-quantize's bytes
// (tests/test_quant.cpp, QuantGolden.BytesMatchLlamaCpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "tensor/blocks.h"

namespace edgellm::ref {

namespace {

constexpr float GROUP_MAX_EPS = 1e-15f;  // below this a block of 32 is "all zero"
constexpr int kTries = 7;                // scales tried each side of the max-abs one

// Index of the grid level nearest to x (the lower one on a tie, as ggml's
// best_index_int8): bisection over the ascending table.
int nearest_level(float x) {
  const int8_t* v = kvalues_iq4nl;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < v[mid]) hi = mid; else lo = mid;
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// Best scale for 32 weights x on the grid, minimising sum x_j^2 (x_j - d q_j)^2
// (the weighting favours the large weights, which dominate a dot product).
// Writes the chosen levels into L and returns d; 0 for an all-zero block.
float fit_block(const float* x, uint8_t* L) {
  float w[32];
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    w[j] = x[j] * x[j];
    if (std::fabs(x[j]) > amax) { amax = std::fabs(x[j]); max = x[j]; }
  }
  if (amax < GROUP_MAX_EPS) return 0;
  // For a given assignment q the optimal d is sum(w q x) / sum(w q^2), and
  // the error it leaves falls as sum(w q x)^2 / sum(w q^2) grows: the search
  // compares that ratio (cross-multiplied: no division per candidate).
  auto assign = [&](float id, float* sumqx, float* sumq2, uint8_t* out) {
    *sumqx = *sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const int l = nearest_level(id * x[j]);
      if (out) out[j] = uint8_t(l);
      const float q = kvalues_iq4nl[l];
      *sumqx += w[j] * q * x[j];
      *sumq2 += w[j] * q * q;
    }
  };
  float sumqx, sumq2;
  assign(1 / (-max / kvalues_iq4nl[0]), &sumqx, &sumq2, L);
  float d = sumqx / sumq2, best = d * sumqx;
  for (int t = -kTries; t <= kTries; ++t) {
    assign((float(t) + kvalues_iq4nl[0]) / max, &sumqx, &sumq2, nullptr);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  // Only the scale is kept: the caller re-snaps against the stored scale.
  return d;
}

// Nibbles of 32 levels, q4_0's order: byte j = element j | element j+16 << 4.
void pack_nibbles(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = uint8_t(L[j] | L[16 + j] << 4);
}

void snap(const float* x, float id, uint8_t* L) {
  for (int j = 0; j < 32; ++j) L[j] = uint8_t(nearest_level(id * x[j]));
}

// sum_j kvalues[nibble j] * a_j over one 32-element block packed as in iq4_nl.
int dot_block(const uint8_t* qs, const int8_t* a) {
  int s = 0;  // |s| <= 32 * 127 * 127
  for (int j = 0; j < 16; ++j) s += kvalues_iq4nl[qs[j] & 0xF] * a[j] + kvalues_iq4nl[qs[j] >> 4] * a[j + 16];
  return s;
}

}  // namespace

// ---- iq4_nl ------------------------------------------------------------------

void quantize_iq4_nl(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_iq4_nl*>(dst);
  for (int64_t i = 0; i < n / 32; ++i, x += 32) {
    uint8_t L[32];
    const float d = fit_block(x, L);
    y[i].d = f32_to_fp16(d);
    // ggml re-snaps against the float scale here, not the fp16 one it stores.
    snap(x, d != 0 ? 1 / d : 0.f, L);
    pack_nibbles(L, y[i].qs);
  }
}

void dequantize_iq4_nl(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_iq4_nl*>(src);
  for (int64_t i = 0; i < n / 32; ++i, y += 32) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * float(kvalues_iq4nl[x[i].qs[j] & 0xF]);
      y[j + 16] = d * float(kvalues_iq4nl[x[i].qs[j] >> 4]);
    }
  }
}

float vec_dot_iq4_nl_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_iq4_nl*>(w);
  const auto* y = static_cast<const block_q8_0*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / 32; ++i)
    sum += float(dot_block(x[i].qs, y[i].qs)) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
  return sum;
}

// ---- iq4_xs ------------------------------------------------------------------

void quantize_iq4_xs(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_iq4_xs*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    uint8_t L[32];
    float scales[8];
    float max_scale = 0, amax_scale = 0;  // the sub-block scale of largest magnitude, signed
    for (int j = 0; j < 8; ++j) {
      scales[j] = fit_block(x + 32 * j, L);
      if (std::fabs(scales[j]) > amax_scale) { amax_scale = std::fabs(scales[j]); max_scale = scales[j]; }
    }
    // Sub-block scales as d * (ls - 32), ls - 32 in -32..31: the largest one
    // maps to -32, the end with the extra level (as q4_0 does with its -8).
    const float d = -max_scale / 32;
    const float id = d != 0 ? 1 / d : 0.f;
    y[i].d = f32_to_fp16(d);
    y[i].scales_h = 0;
    for (int j = 0; j < 8; ++j) {
      const int l = std::max(-32, std::min(31, nearest_int(id * scales[j])));
      const float dl = d * float(l);
      snap(x + 32 * j, dl != 0 ? 1 / dl : 0.f, L);
      pack_nibbles(L, y[i].qs + 16 * j);
      const int ls = l + 32;
      if (j % 2 == 0) y[i].scales_l[j / 2] = uint8_t(ls & 0xF);
      else y[i].scales_l[j / 2] |= uint8_t((ls & 0xF) << 4);
      y[i].scales_h = uint16_t(y[i].scales_h | (ls >> 4) << (2 * j));
    }
  }
}

void dequantize_iq4_xs(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_iq4_xs*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < 8; ++j, y += 32) {
      const float dl = d * float(iq4xs_scale(x[i], j) - 32);
      const uint8_t* qs = x[i].qs + 16 * j;
      for (int l = 0; l < 16; ++l) {
        y[l] = dl * float(kvalues_iq4nl[qs[l] & 0xF]);
        y[l + 16] = dl * float(kvalues_iq4nl[qs[l] >> 4]);
      }
    }
  }
}

// The whole super-block in integers (|isum| <= 8 * 32 * 32*127*127 < 2^31),
// then one float scale: exact up to the final multiply, so the SIMD twins can
// match it to the last bits.
float vec_dot_iq4_xs_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_iq4_xs*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int isum = 0;
    for (int j = 0; j < 8; ++j) isum += (iq4xs_scale(x[i], j) - 32) * dot_block(x[i].qs + 16 * j, y[i].qs + 32 * j);
    sum += fp16_to_f32(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

}  // namespace edgellm::ref
