// IEEE half and bfloat16 <-> float conversions (bit-exact with ggml's scalar
// paths: round-to-nearest-even, NaN kept quiet).
#pragma once
#include <cstdint>
#include <cstring>

namespace edgellm {

inline float bits_to_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t f32_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    if (mant == 0) return bits_to_f32(sign);
    // subnormal: normalise
    int e = -1;
    do { mant <<= 1; ++e; } while (!(mant & 0x400));
    mant &= 0x3ff;
    return bits_to_f32(sign | uint32_t(127 - 15 - e) << 23 | mant << 13);
  }
  if (exp == 31) return bits_to_f32(sign | 0x7f800000u | mant << 13);
  return bits_to_f32(sign | (exp + 127 - 15) << 23 | mant << 13);
}

inline uint16_t f32_to_fp16(float f) {
  const uint32_t x = f32_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float v = bits_to_f32(ax) + 0.5f;  // shifts the mantissa into place, RNE
    return uint16_t(sign | (f32_to_bits(v) - f32_to_bits(0.5f)));
  }
  uint32_t r = ax + ((15u - 127u) << 23) + 0xfffu + ((ax >> 13) & 1u);
  return uint16_t(sign | (r >> 13));
}

inline float bf16_to_f32(uint16_t h) { return bits_to_f32(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 64);  // quiet NaN
  return uint16_t((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace edgellm
