// AVX2 vec_dot for the K-quant weights q4_K, q5_K and q6_K x q8_K activations
// (compiled with the kernels/avx2 flags; registered by register_avx2). Scalar
// twins: ref::vec_dot_q{4,5,6}_K_q8_K in tensor/quant_k.cpp.
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
// Exactness: each super-block's integer sum is computed exactly in int32
// lanes (maddubs of unsigned weight levels 0..63 with the signed q8_K bytes
// cannot saturate: 2*63*128 < 32767), reduced to one int, and then scaled and
// accumulated in float with the reference's own expression and order (the
// result differs from it only where the compiler fuses that multiply-add into
// an FMA here: in the last bit). The weights' offset (q6_K's -32,
// q4_K/q5_K's mins) is applied through q8_K's per-16 sums (bsums) instead of
// per element; for q8_K rows from the quantizer bsums are exactly those sums.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/avx2/simd_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

// q4_K and q5_K: 8 sub-blocks of 32, x = d*sc*q - dmin*m, q = 4 or 5 bits.
// qs[32p + l]: low nibble element 64p + l (sub-block 2p), high nibble element
// 64p + 32 + l (sub-block 2p+1); q5_K's fifth bits are bits 2p / 2p+1 of qh[l].
template <class Block>
float vec_dot_k_affine(int64_t n, const void* w, const void* a) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0x0F), bit0 = _mm256_set1_epi8(1);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    const ScalesMinsK4 s = unpack_scales_mins_k4(x[i].scales);
    const int32_t summs = mins_dot_bsums(s, y[i].bsums);

    __m256i hb = _mm256_setzero_si256();
    if constexpr (kFifthBit) hb = load256(x[i].qh);
    __m256i acc = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {
      const __m256i b = load256(x[i].qs + 32 * p);
      __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
      if constexpr (kFifthBit) {  // bits 2p, 2p+1 of qh: hb is shifted down by 2 per p
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hb, bit0), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), bit0), 4));
        hb = _mm256_srli_epi16(hb, 2);
      }
      const __m256i p0 = _mm256_maddubs_epi16(lo, load256(y[i].qs + 64 * p));
      const __m256i p1 = _mm256_maddubs_epi16(hi, load256(y[i].qs + 64 * p + 32));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p0, _mm256_set1_epi16(s.sc[2 * p])));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p1, _mm256_set1_epi16(s.sc[2 * p + 1])));
    }
    const int32_t isum = hsum_i32(acc);
    sum += y[i].d * half(x[i].d) * float(isum) - y[i].d * half(x[i].dmin) * float(summs);
  }
  return sum;
}

// q6_K: 16 sub-blocks of 16, x = d*sc*(q-32), q = 6 bits. Per half h of 128
// elements: ql[64h + l] holds the low nibbles of elements l (low) and l+64
// (high), ql[64h + 32 + l] those of l+32 and l+96; qh[32h + l] holds their
// top two bits at bit pairs 0, 1, 2, 3.
float vec_dot_q6_K(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const block_q6_K*>(w);
  const auto* y = static_cast<const block_q8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  // Pair k of a half (sub-blocks 2k, 2k+1 of its 8 scales as int16): int16
  // lane 2k broadcast to the low 128 bits, lane 2k+1 to the high.
  auto pair_shuffle = [](int k) {
    return _mm256_set_m128i(_mm_set1_epi16(short(0x0100 + 0x0202 * (2 * k + 1))),
                            _mm_set1_epi16(short(0x0100 + 0x0202 * (2 * k))));
  };
  const __m256i shuf[4] = {pair_shuffle(0), pair_shuffle(1), pair_shuffle(2), pair_shuffle(3)};
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; ++i) {
    __m256i acc = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = x[i].ql + 64 * h;
      const int8_t* q8 = y[i].qs + 128 * h;
      const __m256i l0 = load256(ql), l1 = load256(ql + 32), hb = load256(x[i].qh + 32 * h);
      const __m256i sc = _mm256_broadcastsi128_si256(
          _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[i].scales + 8 * h))));
      // Unsigned levels 0..63 of elements 32k .. 32k+31 of this half.
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m30)),
          _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), m30)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(hb, m30)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                          _mm256_and_si256(_mm256_srli_epi16(hb, 2), m30))};
      for (int k = 0; k < 4; ++k) {
        const __m256i p16 = _mm256_maddubs_epi16(q[k], load256(q8 + 32 * k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p16, _mm256_shuffle_epi8(sc, shuf[k])));
      }
    }
    // The -32 offset: 32 * sum_j sc_j * bsums_j.
    const __m256i off = _mm256_madd_epi16(_mm256_cvtepi8_epi16(load128(x[i].scales)), load256(y[i].bsums));
    const int32_t isum = hsum_i32(_mm256_sub_epi32(acc, _mm256_slli_epi32(off, 5)));
    sum += half(x[i].d) * y[i].d * float(isum);
  }
  return sum;
}

// q8_K activations, the same bytes as ref::quantize_q8_K: the abs-max by SIMD
// max (exact), the signed value of the first element reaching it (the
// reference's scan order), iscale = -127/max, one float multiply per element,
// vcvtps2dq's round-half-even (= nearest_int), min(127); each bsum the int32
// sum of its 16 values. 32 values at a time are packed to bytes with two
// saturating packs (exact: all in -127..127) and one lane permute.
void quantize_q8_K(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<block_q8_K*>(dst);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int c = 0; c < 32; ++c) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * c)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float max = 0;
    for (int c = 0; c < 32; ++c) {
      const int hit = _mm256_movemask_ps(
          _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * c)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
      if (hit) {
        max = x[8 * c + __builtin_ctz(unsigned(hit))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m256 vs = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int c = 0; c < 8; ++c) {  // 32 values: bsums 2c, 2c + 1
      __m256i q[4];
      for (int v = 0; v < 4; ++v)
        q[v] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * c + 8 * v), vs)), top);
      y[i].bsums[2 * c] = int16_t(hsum_i32(_mm256_add_epi32(q[0], q[1])));
      y[i].bsums[2 * c + 1] = int16_t(hsum_i32(_mm256_add_epi32(q[2], q[3])));
      const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + 32 * c), _mm256_permutevar8x32_epi32(b, order));
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace

void register_kquant_avx2(KernelSet& k) {
  k.quantize_act[int(GgmlType::Q8_K)] = quantize_q8_K;
  k.vec_dot[int(GgmlType::Q4_K)] = vec_dot_k_affine<block_q4_K>;
  k.vec_dot[int(GgmlType::Q5_K)] = vec_dot_k_affine<block_q5_K>;
  k.vec_dot[int(GgmlType::Q6_K)] = vec_dot_q6_K;
}

}  // namespace edgellm
