// Scalar reference quantize / dequantize / dot for the K-quants (q2_K..q6_K)
// and their activation format q8_K.
//
// The quantizers are the importance-matrix-free searches of ggml's *_ref
// functions: per sub-block a scale (and min) is fitted by a small search
// (make_qkx2_quants for the affine types, make_qx_quants / make_q3_quants for
// the symmetric ones), then the sub-block scales are themselves quantized to
// 4/6/8 bits against one fp16 super-block scale, and finally every weight is
// re-rounded against the *stored* scales so dequantization sees exactly the
// grid the quantizer intended. Same math as llama-quantize, so files we write
// have the same quality as files it writes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "tensor/blocks.h"

namespace edgellm::ref {

namespace {

constexpr float GROUP_MAX_EPS = 1e-15f;  // below this a sub-block is "all zero"

int clampi(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

// Affine fit x ~ scale*L + min, L in 0..nmax, min <= 0, minimising the
// weighted error (|.| if use_mad, else squared). Starts from the plain
// (max-min)/nmax grid, then tries nstep+1 slightly different grids and, for
// each rounding they induce, solves the weighted least-squares scale and min in
// closed form. Returns the scale; *the_min receives -min (>= 0).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0], sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;  // the stored min is subtracted: keep it a true offset
  if (max == min) {
    std::memset(L, 0, size_t(n));
    *the_min = -min;
    return 0.f;
  }
  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = uint8_t(clampi(nearest_int(iscale * (x[i] - min)), 0, nmax));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clampi(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {  // a positive offset is not representable: refit scale alone
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        std::memcpy(L, Laux, size_t(n));
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Symmetric fit x ~ scale*(L - nmax), L in 0..2*nmax-1, with the value of
// largest magnitude on the extreme level -nmax (so the asymmetric grid's
// extra negative level is spent on it). rmse_type 1 weights by x^2 and
// searches 19 nearby grids for the best least-squares scale. (ggml's other
// rmse_types / importance weights are not needed without an imatrix.)
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) { amax = ax; max = x[i]; }
  }
  if (amax < GROUP_MAX_EPS) {
    std::memset(L, 0, size_t(n));
    return 0.f;
  }
  float iscale = -float(nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
    // sumlx^2/suml2 is the error reduction of the optimal scale for this
    // rounding; larger is better.
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i)
        L[i] = int8_t(nmax + clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// q3_K's symmetric fit: start from the absmax grid, then coordinate descent
// (up to 5 sweeps) moving single L[i] when that improves the x^2-weighted
// least-squares objective. L in 0..2*nmax-1 on return.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) { amax = ax; max = x[i]; }
  }
  if (amax < GROUP_MAX_EPS) {
    std::memset(L, 0, size_t(n));
    return 0.f;
  }
  const float iscale = -float(nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * float(L[i]) * float(L[i]);
        const int new_l = clampi(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * float(new_l);
          sl2 += w * float(new_l) * float(new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return sumlx / suml2;
}

// Packs 2-bit values L[0..255] the way q2_K/q3_K store them: byte 32*h + l
// holds elements 128*h + l + 32*s at bit pair s.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < QK_K; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = uint8_t(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}
int unpack_2bit(const uint8_t* qs, int i) {  // element i of a pack_2bit array
  return (qs[(i / 128) * 32 + i % 32] >> (2 * ((i % 128) / 32))) & 3;
}

// q4_K / q5_K scale packing, the inverse of get_scale_min_k4.
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* s) {
  std::memset(s, 0, K_SCALE_SIZE);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = ls[j];
      s[j + 4] = lm[j];
    } else {
      s[j + 4] = uint8_t((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
      s[j - 4] |= uint8_t((ls[j] >> 4) << 6);
      s[j] |= uint8_t((lm[j] >> 4) << 6);
    }
  }
}

// Shared by q4_K (nmax 15) and q5_K (nmax 31): fit each 32-element sub-block,
// quantize the 8 scales and 8 mins to 6 bits against d and dmin, then requantize
// the weights to L (0..nmax) against the stored scales.
void quantize_k_affine32(const float* x, int nmax, uint16_t* d_out, uint16_t* dmin_out,
                         uint8_t* scales_out, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  uint8_t Laux[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    // Weight each element by the sub-block RMS plus its own magnitude: large
    // weights matter more, but small ones are not ignored.
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = nmax == 15
        ? make_qkx2_quants(32, 15, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20, false)
        : make_qkx2_quants(32, 31, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.5f, 0.1f, 15, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = uint8_t(std::min(63, nearest_int(inv_scale * scales[j])));
    lm[j] = uint8_t(std::min(63, nearest_int(inv_min * mins[j])));
  }
  pack_scale_min_k4(ls, lm, scales_out);
  *d_out = f32_to_fp16(max_scale / 63.f);
  *dmin_out = f32_to_fp16(max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    get_scale_min_k4(j, scales_out, &sc, &m);
    const float d = fp16_to_f32(*d_out) * sc;
    if (d == 0) continue;  // keep the search's L (ggml does the same)
    const float dm = fp16_to_f32(*dmin_out) * m;
    for (int ii = 0; ii < 32; ++ii)
      L[32 * j + ii] = uint8_t(clampi(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
  }
}

}  // namespace

// ---- q2_K ------------------------------------------------------------------

void quantize_q2_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q2_K*>(dst);
  constexpr float q4scale = 15.f;
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    uint8_t L[QK_K], Laux[16];
    float weights[16], mins[16], scales[16];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      // Mean absolute error here: with only 4 levels, least squares chases
      // outliers at the expense of the bulk.
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < 16; ++j) y[i].scales[j] = uint8_t(nearest_int(iscale * scales[j]));
      y[i].d = f32_to_fp16(max_scale / q4scale);
    } else {
      std::memset(y[i].scales, 0, 16);
      y[i].d = f32_to_fp16(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < 16; ++j) y[i].scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
      y[i].dmin = f32_to_fp16(max_min / q4scale);
    } else {
      y[i].dmin = f32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * (y[i].scales[j] & 0xF);
      if (d == 0) continue;
      const float dm = fp16_to_f32(y[i].dmin) * (y[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = uint8_t(clampi(nearest_int((x[16 * j + ii] + dm) / d), 0, 3));
    }
    pack_2bit(L, y[i].qs);
  }
}

void dequantize_q2_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q2_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_f32(x[i].d), dmin = fp16_to_f32(x[i].dmin);
    for (int k = 0; k < QK_K; ++k) {
      const uint8_t sc = x[i].scales[k / 16];
      y[k] = d * float(sc & 0xF) * float(unpack_2bit(x[i].qs, k)) - dmin * float(sc >> 4);
    }
  }
}

// Per block: d_w d_a sum_j sc_j sum(q*a) - dmin_w d_a sum_j m_j bsum_j.
float vec_dot_q2_K_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q2_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int summs = 0, isum = 0;
    for (int j = 0; j < 16; ++j) {
      summs += (x[i].scales[j] >> 4) * y[i].bsums[j];
      int s = 0;
      for (int l = 0; l < 16; ++l) s += unpack_2bit(x[i].qs, 16 * j + l) * y[i].qs[16 * j + l];
      isum += (x[i].scales[j] & 0xF) * s;
    }
    sum += y[i].d * fp16_to_f32(x[i].d) * float(isum) - y[i].d * fp16_to_f32(x[i].dmin) * float(summs);
  }
  return sum;
}

// ---- q3_K ------------------------------------------------------------------

void quantize_q3_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q3_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    int8_t L[QK_K];
    float scales[16];
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
      const float s = std::fabs(scales[j]);
      if (s > amax) { amax = s; max_scale = scales[j]; }
    }
    std::memset(y[i].scales, 0, 12);
    if (max_scale != 0) {
      // Signed 6-bit sub-scales (-32..31) against d = -max_scale/32: the
      // largest-magnitude scale lands on -32, the level without a twin.
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) {
        const int l = clampi(nearest_int(iscale * scales[j]), -32, 31) + 32;
        if (j < 8) y[i].scales[j] = uint8_t(l & 0xF);
        else y[i].scales[j - 8] |= uint8_t((l & 0xF) << 4);
        y[i].scales[j % 4 + 8] |= uint8_t((l >> 4) << (2 * (j / 4)));
      }
      y[i].d = f32_to_fp16(1 / iscale);
    } else {
      y[i].d = f32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * float(q3k_scale(y[i].scales, j) - 32);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = int8_t(clampi(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
    }
    // Third bit goes to hmask (bit j/32 of byte j%32); the low two are packed.
    std::memset(y[i].hmask, 0, QK_K / 8);
    uint8_t L2[QK_K];
    for (int j = 0; j < QK_K; ++j) {
      int l = L[j];
      if (l > 3) {
        y[i].hmask[j % 32] |= uint8_t(1 << (j / 32));
        l -= 4;
      }
      L2[j] = uint8_t(l);
    }
    pack_2bit(L2, y[i].qs);
  }
}

// Element k of a q3_K block as a signed 3-bit value -4..3.
static int q3k_value(const block_q3_K& b, int k) {
  const bool high = (b.hmask[k % 32] >> (k / 32)) & 1;
  return unpack_2bit(b.qs, k) - (high ? 0 : 4);
}

void dequantize_q3_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q3_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < 16; ++j) {
      const float dl = d * float(q3k_scale(x[i].scales, j) - 32);
      for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * float(q3k_value(x[i], 16 * j + l));
    }
  }
}

float vec_dot_q3_K_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q3_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int isum = 0;
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += q3k_value(x[i], 16 * j + l) * y[i].qs[16 * j + l];
      isum += (q3k_scale(x[i].scales, j) - 32) * s;
    }
    sum += fp16_to_f32(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// ---- q4_K ------------------------------------------------------------------

void quantize_q4_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q4_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    uint8_t L[QK_K];
    quantize_k_affine32(x, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
    for (int j = 0; j < QK_K; j += 64)
      for (int l = 0; l < 32; ++l) y[i].qs[j / 2 + l] = uint8_t(L[j + l] | L[j + l + 32] << 4);
  }
}

static int q4k_value(const block_q4_K& b, int k) {
  const uint8_t q = b.qs[(k / 64) * 32 + k % 32];
  return (k % 64) < 32 ? (q & 0xF) : (q >> 4);
}

void dequantize_q4_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q4_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_f32(x[i].d), dmin = fp16_to_f32(x[i].dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      get_scale_min_k4(j, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * float(q4k_value(x[i], 32 * j + l)) - m1;
    }
  }
}

float vec_dot_q4_K_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q4_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int isum = 0, summs = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      get_scale_min_k4(j, x[i].scales, &sc, &m);
      int s = 0;
      for (int l = 0; l < 32; ++l) s += q4k_value(x[i], 32 * j + l) * y[i].qs[32 * j + l];
      isum += sc * s;
      summs += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    sum += y[i].d * fp16_to_f32(x[i].d) * float(isum) - y[i].d * fp16_to_f32(x[i].dmin) * float(summs);
  }
  return sum;
}

// ---- q5_K ------------------------------------------------------------------

void quantize_q5_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q5_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    uint8_t L[QK_K];
    quantize_k_affine32(x, 31, &y[i].d, &y[i].dmin, y[i].scales, L);
    std::memset(y[i].qh, 0, QK_K / 8);
    // Pair p of 64 elements: low nibbles as q4_K, 5th bits in qh bits 2p, 2p+1.
    for (int p = 0; p < 4; ++p)
      for (int l = 0; l < 32; ++l) {
        const int l1 = L[64 * p + l], l2 = L[64 * p + l + 32];
        y[i].qh[l] |= uint8_t((l1 >> 4) << (2 * p) | (l2 >> 4) << (2 * p + 1));
        y[i].qs[32 * p + l] = uint8_t((l1 & 0xF) | (l2 & 0xF) << 4);
      }
  }
}

static int q5k_value(const block_q5_K& b, int k) {
  const uint8_t q = b.qs[(k / 64) * 32 + k % 32];
  const int lo = (k % 64) < 32 ? (q & 0xF) : (q >> 4);
  const int hb = (b.qh[k % 32] >> ((k / 64) * 2 + ((k % 64) >= 32))) & 1;
  return lo | hb << 4;
}

void dequantize_q5_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q5_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_f32(x[i].d), dmin = fp16_to_f32(x[i].dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      get_scale_min_k4(j, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * float(q5k_value(x[i], 32 * j + l)) - m1;
    }
  }
}

float vec_dot_q5_K_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q5_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int isum = 0, summs = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      get_scale_min_k4(j, x[i].scales, &sc, &m);
      int s = 0;
      for (int l = 0; l < 32; ++l) s += q5k_value(x[i], 32 * j + l) * y[i].qs[32 * j + l];
      isum += sc * s;
      summs += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    sum += y[i].d * fp16_to_f32(x[i].d) * float(isum) - y[i].d * fp16_to_f32(x[i].dmin) * float(summs);
  }
  return sum;
}

// ---- q6_K ------------------------------------------------------------------

void quantize_q6_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q6_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    int8_t L[QK_K];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
      scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < GROUP_MAX_EPS) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    // int8 sub-scales against d = -max_scale/128, largest magnitude on -128.
    const float iscale = -128.f / max_scale;
    y[i].d = f32_to_fp16(1 / iscale);
    for (int ib = 0; ib < 16; ++ib) y[i].scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * y[i].scales[j];
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = int8_t(clampi(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
    }
    // Per 128 elements: ql[64] holds low nibbles (elements l and l+64 in byte
    // l, l+32 and l+96 in byte l+32); qh[32] holds the 2-bit tops of elements
    // l, l+32, l+64, l+96 at bit pairs 0..3 of byte l.
    for (int j = 0; j < QK_K; j += 128) {
      uint8_t* ql = y[i].ql + j / 2;
      uint8_t* qh = y[i].qh + j / 4;
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
        ql[l] = uint8_t((q1 & 0xF) | (q3 & 0xF) << 4);
        ql[l + 32] = uint8_t((q2 & 0xF) | (q4 & 0xF) << 4);
        qh[l] = uint8_t((q1 >> 4) | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
      }
    }
  }
}

// Element k of a q6_K block as a signed value -32..31.
static int q6k_value(const block_q6_K& b, int k) {
  const int h = k / 128, r = k % 128, l = r % 32, quarter = r / 32;
  const uint8_t lo = b.ql[64 * h + l + 32 * (quarter & 1)];
  const int low4 = quarter < 2 ? (lo & 0xF) : (lo >> 4);
  const int high2 = (b.qh[32 * h + l] >> (2 * quarter)) & 3;
  return (low4 | high2 << 4) - 32;
}

void dequantize_q6_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q6_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_f32(x[i].d);
    for (int k = 0; k < QK_K; ++k) y[k] = d * float(x[i].scales[k / 16]) * float(q6k_value(x[i], k));
  }
}

float vec_dot_q6_K_q8_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    int isum = 0;  // |isum| <= 256 * 32 * 128 * 128: fits in int32
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += q6k_value(x[i], 16 * j + l) * y[i].qs[16 * j + l];
      isum += x[i].scales[j] * s;
    }
    sum += fp16_to_f32(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// ---- q8_K ------------------------------------------------------------------

void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    float max = 0, amax = 0;
    for (int j = 0; j < QK_K; ++j)
      if (std::fabs(x[j]) > amax) { amax = std::fabs(x[j]); max = x[j]; }
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    // The signed max maps to -127, so every other value lands in -127..127;
    // the min() only guards float noise at the +127 end (as ggml's does).
    const float iscale = -127.f / max;
    for (int j = 0; j < QK_K; ++j) y[i].qs[j] = int8_t(std::min(127, nearest_int(iscale * x[j])));
    for (int j = 0; j < QK_K / 16; ++j) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += y[i].qs[16 * j + l];
      y[i].bsums[j] = int16_t(s);
    }
    y[i].d = 1 / iscale;
  }
}

void dequantize_q8_K(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const block_q8_K*>(src);
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K)
    for (int j = 0; j < QK_K; ++j) y[j] = x[i].d * float(x[i].qs[j]);
}

}  // namespace edgellm::ref
