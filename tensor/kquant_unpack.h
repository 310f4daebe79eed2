// One K-quant super-block (q2_K, q3_K, q4_K, q5_K, q6_K) rewritten as plain
// integers, so that a single prefill GEMM tile per ISA serves all five
// formats (kernels/*/gemm_kquant_*.cpp):
//
//   x_i = d * sc_j * q_i - dmin * mn_j      (j = i / 16, q_i unsigned 0..63)
//
// and therefore, against a q8_K activation block (a_i, bsums_j, d_a):
//
//   dot = d_a * (d * sum_j sc_j * sum_{i in j} q_i a_i - dmin * sum_j mn_j bsums_j)
//
// The formats whose values are signed (q3_K: q - 4, q6_K: q - 32) are brought
// to this form by moving the offset into the min term (mn_j = 4 sc_j or
// 32 sc_j, dmin = d), so every kernel multiplies unsigned weights by signed
// activations: x86's vpmaddubsw (u8 x s8, pairs of at most 2*63*128 < 2^15:
// no saturation) and ARM's SDOT/SMMLA (0..63 fits int8) alike. Sub-blocks of
// 32 (q4_K, q5_K) are written as two of 16 with the same scale and min.
//
// Integer parts are exact, so a kernel built on this form differs from the
// scalar vec_dot only in the order of its float operations.
//
// Cost: ~1 ns per weight byte, paid once per (row, super-block) per GEMM call
// and reused by every token of the call (hundreds in prefill).
#pragma once
#include <cstdint>

#include "tensor/types.h"

namespace edgellm {

struct KBlockInt {
  alignas(32) uint8_t q[256];  // element order, 0..63
  int16_t sc[16];              // per 16 elements
  int16_t mn[16];              // per 16 elements
  float d = 0, dmin = 0;
};

// True for the five formats unpack_k_block() understands.
bool is_unpackable_k(GgmlType t);
// Unpacks super-block `block` (a block_q2_K .. block_q6_K of type t).
void unpack_k_block(GgmlType t, const void* block, KBlockInt* out);

}  // namespace edgellm
