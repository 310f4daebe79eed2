// Scale/min unpacking shared by the q4_K/q5_K kernels of every ISA folder.
// Generic code (kernels/isa_prelude.h includes it before any target region),
// with internal linkage all the same: each ISA file inlines its own copy.
#pragma once
#include <cstdint>
#include <cstring>

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

}  // namespace
}  // namespace edgellm
