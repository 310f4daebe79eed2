// Scale/min unpacking shared by the q4_K/q5_K kernels of every ISA folder.
// Internal linkage on purpose: this header is included by files compiled
// with different -m flags (kernels/avx2, kernels/avx512, kernels/neon), and an
// inline function with external linkage would be merged across them by the
// linker, so an AVX-512 build of it could end up called on an AVX2-only host.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace edgellm {
namespace {

// The 8 six-bit scales and 8 six-bit mins of a q4_K/q5_K block, unpacked from
// its 12 packed bytes four at a time with 32-bit word ops: byte j of sc/m is
// what get_scale_min_k4(j) (tensor/blocks.h) returns.
struct ScalesMinsK4 {
  uint8_t sc[8];
  uint8_t m[8];
};

inline ScalesMinsK4 unpack_scales_mins_k4(const uint8_t* packed) {
  uint32_t a[3];
  std::memcpy(a, packed, 12);
  // j < 4: low 6 bits of bytes j (scale) and j + 4 (min).
  // j >= 4: low/high nibble of byte j + 4, top two bits from the spare top
  // bits of bytes j - 4 (scale) and j (min).
  const uint32_t lo6 = 0x3f3f3f3fu, lo4 = 0x0f0f0f0fu, top2 = 0x03030303u;
  const uint32_t w[4] = {a[0] & lo6, (a[2] & lo4) | ((a[0] >> 6) & top2) << 4,  //
                         a[1] & lo6, ((a[2] >> 4) & lo4) | ((a[1] >> 6) & top2) << 4};
  ScalesMinsK4 r;
  std::memcpy(r.sc, w, 8);
  std::memcpy(r.m, w + 2, 8);
  return r;
}

#if defined(__AVX2__)
// sum_j m_j * (bsums[2j] + bsums[2j+1]) over the 8 sub-blocks of 32: the
// min term of a q4_K/q5_K x q8_K super-block. Pair sums (|.| <= 4064) by hadd.
inline int32_t mins_dot_bsums(const ScalesMinsK4& s, const int16_t* bsums) {
  const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8)));
  const __m128i mins = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s.m)));
  __m128i v = _mm_madd_epi16(mins, bs);
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(v);
}
#endif

}  // namespace
}  // namespace edgellm
