#include "tensor/kquant_unpack.h"

#include "base/error.h"
#include "base/fp16.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

// q2_K/q3_K low bits: byte 32*h + l holds elements 128*h + l + 32*s at bit
// pair s (tensor/quant_k.cpp's pack_2bit).
void unpack_2bit_all(const uint8_t* qs, uint8_t* q) {
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 4; ++s)
      for (int l = 0; l < 32; ++l) q[128 * h + 32 * s + l] = uint8_t((qs[32 * h + l] >> (2 * s)) & 3);
}

// q4_K/q5_K: 8 sub-blocks of 32, 6-bit scale and min each.
void scales_mins_k4(const uint8_t* packed, KBlockInt* o) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    get_scale_min_k4(j, packed, &sc, &m);
    o->sc[2 * j] = o->sc[2 * j + 1] = sc;
    o->mn[2 * j] = o->mn[2 * j + 1] = m;
  }
}

void unpack_q2_K(const block_q2_K& b, KBlockInt* o) {
  unpack_2bit_all(b.qs, o->q);
  for (int j = 0; j < 16; ++j) {
    o->sc[j] = int16_t(b.scales[j] & 0xF);
    o->mn[j] = int16_t(b.scales[j] >> 4);
  }
  o->d = fp16_to_f32(b.d);
  o->dmin = fp16_to_f32(b.dmin);
}

// q = low2 - (hmask bit ? 0 : 4), so q + 4 = low2 | hbit << 2.
void unpack_q3_K(const block_q3_K& b, KBlockInt* o) {
  unpack_2bit_all(b.qs, o->q);
  for (int i = 0; i < 256; ++i) o->q[i] = uint8_t(o->q[i] | ((b.hmask[i % 32] >> (i / 32)) & 1) << 2);
  for (int j = 0; j < 16; ++j) {
    const int s = q3k_scale(b.scales, j) - 32;
    o->sc[j] = int16_t(s);
    o->mn[j] = int16_t(4 * s);
  }
  o->d = o->dmin = fp16_to_f32(b.d);
}

// qs[32p + l]: low nibble element 64p + l, high nibble element 64p + 32 + l.
void unpack_nibbles_k(const uint8_t* qs, uint8_t* q) {
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      q[64 * p + l] = qs[32 * p + l] & 0xF;
      q[64 * p + 32 + l] = qs[32 * p + l] >> 4;
    }
}

void unpack_q4_K(const block_q4_K& b, KBlockInt* o) {
  unpack_nibbles_k(b.qs, o->q);
  scales_mins_k4(b.scales, o);
  o->d = fp16_to_f32(b.d);
  o->dmin = fp16_to_f32(b.dmin);
}

// The fifth bit of element 64p + 32h + l is bit 2p + h of qh[l].
void unpack_q5_K(const block_q5_K& b, KBlockInt* o) {
  unpack_nibbles_k(b.qs, o->q);
  for (int i = 0; i < 256; ++i) o->q[i] = uint8_t(o->q[i] | ((b.qh[i % 32] >> (i / 32)) & 1) << 4);
  scales_mins_k4(b.scales, o);
  o->d = fp16_to_f32(b.d);
  o->dmin = fp16_to_f32(b.dmin);
}

// Element 128h + 32s + l: low 4 bits from ql[64h + l + 32(s & 1)] (low nibble
// for s < 2, high for s >= 2), top 2 from qh[32h + l] bits 2s, 2s + 1.
void unpack_q6_K(const block_q6_K& b, KBlockInt* o) {
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 4; ++s)
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = b.ql[64 * h + l + 32 * (s & 1)];
        const int low4 = s < 2 ? (lo & 0xF) : (lo >> 4);
        o->q[128 * h + 32 * s + l] = uint8_t(low4 | ((b.qh[32 * h + l] >> (2 * s)) & 3) << 4);
      }
  for (int j = 0; j < 16; ++j) {
    o->sc[j] = b.scales[j];
    o->mn[j] = int16_t(32 * b.scales[j]);
  }
  o->d = o->dmin = fp16_to_f32(b.d);
}

}  // namespace

bool is_unpackable_k(GgmlType t) {
  return t == GgmlType::Q2_K || t == GgmlType::Q3_K || t == GgmlType::Q4_K || t == GgmlType::Q5_K ||
         t == GgmlType::Q6_K;
}

void unpack_k_block(GgmlType t, const void* block, KBlockInt* out) {
  switch (t) {
    case GgmlType::Q2_K: return unpack_q2_K(*static_cast<const block_q2_K*>(block), out);
    case GgmlType::Q3_K: return unpack_q3_K(*static_cast<const block_q3_K*>(block), out);
    case GgmlType::Q4_K: return unpack_q4_K(*static_cast<const block_q4_K*>(block), out);
    case GgmlType::Q5_K: return unpack_q5_K(*static_cast<const block_q5_K*>(block), out);
    case GgmlType::Q6_K: return unpack_q6_K(*static_cast<const block_q6_K*>(block), out);
    default: fail("unpack_k_block: ", type_name(uint32_t(t)), " is not a K-quant");
  }
}

}  // namespace edgellm
