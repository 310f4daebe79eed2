// AVX-512 (BW, VL, VNNI) vec_dot for the K-quant weights q4_K, q5_K and q6_K
// x q8_K activations (compiled with the kernels/avx512 flags; registered by
// register_avx512). Scalar twins: ref::vec_dot_q{4,5,6}_K_q8_K in
// tensor/quant_k.cpp.
//
// Why: the scalar K-quant dots unpack one element at a time and run ~20x
// slower than the int8 SIMD dots; Q4_K_M / Q5_K_M files are mostly q4_K/q5_K
// with q6_K for ffn_down and the output matrix.
//
// Cost per element (w = weight row, a = activation, 292/256 B of q8_K):
//   vec_dot q4_K x q8_K : 144/256 B of w + 292/256 B of a;  2 int8 MAC ops
//   vec_dot q5_K x q8_K : 176/256 B of w + 292/256 B of a;  2 int8 MAC ops (+2 ops 5th bit)
//   vec_dot q6_K x q8_K : 210/256 B of w + 292/256 B of a;  2 int8 MAC ops (+3 ops unpack)
// plus per 256-element super-block a few dozen ops for the sub-block scales.
//
// 64 elements per zmm: vpdpbusd of the unsigned weight levels (0..63) with the
// signed q8_K bytes into 16 int32 lanes, each lane inside one sub-block, so the
// sub-block scales are applied with one vpmulld against a lane-permuted scale
// vector. Each super-block's integer sum is exact and is scaled with the
// reference's own float expression; the weights' offset (q6_K's -32, the
// mins of q4_K/q5_K) goes through q8_K's per-16 sums (bsums), which for rows
// from the q8_K quantizer are exactly the sums of its bytes.
// simd_avx512.h first: it silences GCC 12's intrinsic-header warnings before
// <immintrin.h> is read.
#include "kernels/avx512/simd_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

// Scale-vector lane permutation: int32 lane l takes scale first + l / per.
inline __m512i lane_groups(int first, int per) {
  alignas(64) int32_t idx[16];
  for (int l = 0; l < 16; ++l) idx[l] = first + l / per;
  return _mm512_load_si512(idx);
}

// q4_K and q5_K: 8 sub-blocks of 32, x = d*sc*q - dmin*m, q = 4 or 5 bits.
// qs[32p + l]: low nibble element 64p + l (sub-block 2p), high nibble element
// 64p + 32 + l (sub-block 2p+1); q5_K's fifth bits are bits 2p / 2p+1 of qh[l].
template <class Block>
float vec_dot_k_affine(int64_t n, const void* w, const void* a) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const __m512i m4 = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
  const __m512i idx[4] = {lane_groups(0, 8), lane_groups(2, 8), lane_groups(4, 8), lane_groups(6, 8)};
  __m512i sel[4];  // the qh bits of elements 64p .. 64p+63
  for (int p = 0; p < 4; ++p)
    sel[p] = join(_mm256_set1_epi8(char(1 << (2 * p))), _mm256_set1_epi8(char(2 << (2 * p))));
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const ScalesMinsK4 s = unpack_scales_mins_k4(x[i].scales);
    const int32_t summs = mins_dot_bsums(s, y[i].bsums);
    const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s.sc)));
    __m512i hb = _mm512_setzero_si512();
    if constexpr (kFifthBit) hb = join(load256(x[i].qh), load256(x[i].qh));
    __m512i acc = _mm512_setzero_si512();
    for (int p = 0; p < 4; ++p) {
      const __m256i b = load256(x[i].qs + 32 * p);
      __m512i q = _mm512_and_si512(join(b, _mm256_srli_epi16(b, 4)), m4);
      if constexpr (kFifthBit) q = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(hb, sel[p]), q, c16);
      const __m512i dp = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, load512(y[i].qs + 64 * p));
      acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dp, _mm512_permutexvar_epi32(idx[p], sc)));
    }
    const int32_t isum = _mm512_reduce_add_epi32(acc);
    sum += y[i].d * half(x[i].d) * float(isum) - y[i].d * half(x[i].dmin) * float(summs);
  }
  return sum;
}

// q6_K: 16 sub-blocks of 16, x = d*sc*(q-32), q = 6 bits. Per half h of 128
// elements: the 64 bytes ql[64h ..] hold in their low nibbles elements 0..63
// of the half and in their high nibbles elements 64..127, in order; qh[32h + l]
// holds the top two bits of elements l, l+32, l+64, l+96 at bit pairs 0..3.
float vec_dot_q6_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  const __m512i idx[4] = {lane_groups(0, 4), lane_groups(4, 4), lane_groups(8, 4), lane_groups(12, 4)};
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales)));
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = load512(x[i].ql + 64 * h);
      const __m256i qh = load256(x[i].qh + 32 * h);
      // Bit pairs 0/1 (first 64 elements) and 2/3 (last 64) at bits 4..5 of the
      // lanes of elements l (low 32 bytes) and l+32 (high 32 bytes).
      const __m512i hh = join(qh, _mm256_srli_epi16(qh, 2));
      const __m512i q0 = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_slli_epi16(hh, 4), m30));
      const __m512i q1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_and_si512(hh, m30));
      const __m512i d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q0, load512(y[i].qs + 128 * h));
      const __m512i d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q1, load512(y[i].qs + 128 * h + 64));
      acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d0, _mm512_permutexvar_epi32(idx[2 * h], sc)));
      acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d1, _mm512_permutexvar_epi32(idx[2 * h + 1], sc)));
    }
    // The -32 offset: 32 * sum_j sc_j * bsums_j.
    const __m512i off = _mm512_mullo_epi32(sc, _mm512_cvtepi16_epi32(load256(y[i].bsums)));
    const int32_t isum = _mm512_reduce_add_epi32(_mm512_sub_epi32(acc, _mm512_slli_epi32(off, 5)));
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// q8_K activations, the same bytes as ref::quantize_q8_K: the abs-max by SIMD
// max (exact), the signed value of the first element reaching it (the
// reference's scan order), iscale = -127/max, one float multiply per element,
// vcvtps2dq's round-half-even (= nearest_int), min(127), each bsum the int32
// sum of its 16 bytes (one zmm).
void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    __m512 m = _mm512_setzero_ps();
    for (int c = 0; c < 16; ++c) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + 16 * c)));
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float max = 0;
    for (int c = 0; c < 16; ++c) {
      const __mmask16 hit =
          _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * c)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit) {
        max = x[16 * c + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 vs = _mm512_set1_ps(iscale);
    for (int c = 0; c < 16; ++c) {
      const __m512i q =
          _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * c), vs)), _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16 * c), _mm512_cvtepi32_epi8(q));
      y[i].bsums[c] = int16_t(_mm512_reduce_add_epi32(q));
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace

void register_kquant_avx512(KernelSet& k) {
  k.quantize_act[int(GgmlType::Q8_K)] = quantize_q8_K;
  k.vec_dot[int(GgmlType::Q4_K)] = vec_dot_k_affine<block_q4_K>;
  k.vec_dot[int(GgmlType::Q5_K)] = vec_dot_k_affine<block_q5_K>;
  k.vec_dot[int(GgmlType::Q6_K)] = vec_dot_q6_K;
}

}  // namespace edgellm
