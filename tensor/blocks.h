// Packed block structs of the quantized GGUF types, byte-for-byte the layouts
// of ggml-common.h, so a tensor in a file can be read in place (mmap) and a
// tensor we write loads in llama.cpp. Every field order below is what decides
// the byte offsets; the static_asserts pin the sizes to the type table
// (tensor/types.cpp) and to ggml. Half-precision fields are raw IEEE binary16
// bits (uint16_t) converted with base/fp16.h.
//
// Also declares the per-type scalar reference routines that tensor/ops.cpp
// dispatches to (implemented in quant_legacy.cpp, quant_k.cpp and
// quant_iq4.cpp). They take
// whole rows: n elements, n a multiple of the block size (ops.cpp checks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgellm {

constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK_K = 256;   // super-block size of the K-quants
constexpr int K_SCALE_SIZE = 12;  // 8 six-bit scales + 8 six-bit mins of q4_K/q5_K

// ---- legacy 32-element blocks ---------------------------------------------

// x[i] = d * (q[i] - 8). qs[j] holds element j in its low nibble and element
// j+16 in its high nibble.
struct block_q4_0 {
  uint16_t d;
  uint8_t qs[QK4_0 / 2];
};
// x[i] = d * q[i] + m, nibbles as in q4_0.
struct block_q4_1 {
  uint16_t d, m;
  uint8_t qs[QK4_1 / 2];
};
// x[i] = d * (q[i] - 16), q 5 bits: low 4 as in q4_0, bit 4 of element j in bit
// j of qh read as a little-endian uint32.
struct block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK5_0 / 2];
};
// x[i] = d * q[i] + m, 5-bit q as in q5_0.
struct block_q5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[QK5_1 / 2];
};
// x[i] = d * qs[i].
struct block_q8_0 {
  uint16_t d;
  int8_t qs[QK8_0];
};
// Activation format for q4_1/q5_1: s = d * sum(qs) lets the dot fold in the
// weights' offset m with one multiply per block.
struct block_q8_1 {
  uint16_t d, s;
  int8_t qs[QK8_1];
};

// ---- K-quants: 256-element super-blocks of 16 or 32-element sub-blocks ----

// 16 sub-blocks of 16: x = d*(scales&15)*q - dmin*(scales>>4), q 2 bits.
// qs[32*h + l] holds, at bit pair s, element 128*h + 32*s + l.
struct block_q2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d, dmin;
};
// 16 sub-blocks of 16: x = d*(sc-32)*(q-4), q 3 bits: low 2 packed as in q2_K,
// the third bit of element i in bit i/32 of hmask[i%32] (set means "no -4").
// scales: 16 six-bit values, low nibbles in bytes 0..7 (sub-block j<8 low
// nibble, j>=8 high nibble of byte j-8), top 2 bits in bytes 8..11.
struct block_q3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
// 8 sub-blocks of 32: x = d*sc*q - dmin*m, q 4 bits, sc/m 6 bits packed in
// scales (see get_scale_min_k4). qs[32*p + l]: low nibble element 64p+l, high
// nibble element 64p+32+l.
struct block_q4_K {
  uint16_t d, dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qs[QK_K / 2];
};
// q4_K plus a fifth bit: bit 2p (low nibble) / 2p+1 (high nibble) of qh[l].
struct block_q5_K {
  uint16_t d, dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};
// 16 sub-blocks of 16: x = d*scales*(q-32), q 6 bits: 4 in ql, 2 in qh.
struct block_q6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;
};
// Activation format for the K-quants: float scale (activations need range
// more than compactness) and per-16 sums so the min terms cost one multiply
// per sub-block instead of one per element.
struct block_q8_K {
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16];
};

// ---- non-linear 4-bit types: a fixed 16-level grid, denser near zero -------

// The grid every iq4 nibble indexes: x = scale * kvalues_iq4nl[nibble]. A
// format constant (ggml's kvalues_iq4nl): roughly the quantiles of a bell
// curve, so typical weights (mostly small, few large) lose less than on
// q4_0's even grid at the same 4 bits. Ascending, which the quantizer's
// bisection relies on.
inline constexpr int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};

// x[i] = d * kvalues_iq4nl[nibble i], nibbles as in q4_0 (qs[j]: element j
// low, element j+16 high).
struct block_iq4_nl {
  uint16_t d;
  uint8_t qs[32 / 2];
};
// 8 sub-blocks of 32: x = d * (ls - 32) * kvalues_iq4nl[nibble], ls a 6-bit
// sub-block scale: low 4 bits in scales_l[j/2] (sub-block j even: low nibble,
// odd: high), top 2 bits at bits 2j, 2j+1 of scales_h. qs[16*j + l]: element
// 32j + l low, 32j + 16 + l high (each sub-block packed like block_iq4_nl).
struct block_iq4_xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[QK_K / 64];
  uint8_t qs[QK_K / 2];
};

// Sub-block j (0..7) scale of an iq4_xs block, still biased by 32.
inline int iq4xs_scale(const block_iq4_xs& b, int j) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

static_assert(sizeof(block_q4_0) == 18, "q4_0 layout must match ggml");
static_assert(sizeof(block_q4_1) == 20, "q4_1 layout must match ggml");
static_assert(sizeof(block_q5_0) == 22, "q5_0 layout must match ggml");
static_assert(sizeof(block_q5_1) == 24, "q5_1 layout must match ggml");
static_assert(sizeof(block_q8_0) == 34, "q8_0 layout must match ggml");
static_assert(sizeof(block_q8_1) == 36, "q8_1 layout must match ggml");
static_assert(sizeof(block_q2_K) == 84, "q2_K layout must match ggml");
static_assert(sizeof(block_q3_K) == 110, "q3_K layout must match ggml");
static_assert(sizeof(block_q4_K) == 144, "q4_K layout must match ggml");
static_assert(sizeof(block_q5_K) == 176, "q5_K layout must match ggml");
static_assert(sizeof(block_q6_K) == 210, "q6_K layout must match ggml");
static_assert(sizeof(block_q8_K) == 292, "q8_K layout must match ggml");
static_assert(sizeof(block_iq4_nl) == 18, "iq4_nl layout must match ggml");
static_assert(sizeof(block_iq4_xs) == 136 && offsetof(block_iq4_xs, qs) == 8, "iq4_xs layout must match ggml");
static_assert(offsetof(block_q2_K, d) == 80 && offsetof(block_q3_K, d) == 108 &&
              offsetof(block_q6_K, d) == 208 && offsetof(block_q8_K, bsums) == 260,
              "K-quant field offsets must match ggml");

// Sub-block j (0..7) scale and min of q4_K/q5_K: j<4 are the low 6 bits of
// bytes j and j+4; j>=4 keep their low 4 bits in byte j+4 (scale low nibble,
// min high nibble) and their top 2 bits in the spare top bits of bytes j-4
// (scale) and j (min). Exactly ggml's get_scale_min_k4.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Sub-block j (0..15) six-bit scale of q3_K, still biased by 32.
inline int q3k_scale(const uint8_t* s, int j) {
  const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return lo | (hi << 4);
}

// ---- per-type reference routines (rows of n elements) ---------------------
namespace ref {
#define EDGELLM_QUANT_DECL(t)                                        \
  void dequantize_##t(const void* src, float* dst, int64_t n);       \
  void quantize_##t(const float* src, void* dst, int64_t n);
EDGELLM_QUANT_DECL(q4_0)
EDGELLM_QUANT_DECL(q4_1)
EDGELLM_QUANT_DECL(q5_0)
EDGELLM_QUANT_DECL(q5_1)
EDGELLM_QUANT_DECL(q8_0)
EDGELLM_QUANT_DECL(q8_1)
EDGELLM_QUANT_DECL(q2_K)
EDGELLM_QUANT_DECL(q3_K)
EDGELLM_QUANT_DECL(q4_K)
EDGELLM_QUANT_DECL(q5_K)
EDGELLM_QUANT_DECL(q6_K)
EDGELLM_QUANT_DECL(q8_K)
EDGELLM_QUANT_DECL(iq4_nl)
EDGELLM_QUANT_DECL(iq4_xs)
#undef EDGELLM_QUANT_DECL

// Dot of a weight row with an activation row in the weight's vec_dot_type.
float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* a);
float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* a);
float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* a);
float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* a);
float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* a);
float vec_dot_q2_K_q8_K(int64_t n, const void* w, const void* a);
float vec_dot_q3_K_q8_K(int64_t n, const void* w, const void* a);
float vec_dot_q4_K_q8_K(int64_t n, const void* w, const void* a);
float vec_dot_q5_K_q8_K(int64_t n, const void* w, const void* a);
float vec_dot_q6_K_q8_K(int64_t n, const void* w, const void* a);
float vec_dot_iq4_nl_q8_0(int64_t n, const void* w, const void* a);
float vec_dot_iq4_xs_q8_K(int64_t n, const void* w, const void* a);

// ggml's nearest_int: round half to even via the 1.5*2^23 trick; identical to
// lrintf in the default rounding mode for |x| < 2^22, and kept verbatim so
// quantizer ties break exactly as llama-quantize's do.
inline int nearest_int(float fval) {
  float val = fval + 12582912.f;
  int32_t i;
  static_assert(sizeof(float) == sizeof(int32_t));
  std::memcpy(&i, &val, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}
}  // namespace ref

}  // namespace edgellm
