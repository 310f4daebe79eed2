// Tensor element types, numbered exactly as ggml/GGUF number them, and the
// scalar reference operations on each: dequantize, quantize, and the dot
// product of one weight row with one row of activations in the type's
// "vec_dot_type" (the int8 block format activations are quantized to on the
// fly). These reference versions are the oracle every SIMD kernel is tested
// against (kernels/).
//
// Block layouts are bit-compatible with ggml (see tensor/blocks.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgellm {

enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ4_NL = 20, IQ4_XS = 23,
  BF16 = 30,
};

struct TypeTraits {
  const char* name;        // "q4_K" etc., as ggml spells it
  int64_t block_size;      // elements per block (1 for float types)
  size_t type_size;        // bytes per block
  bool supported;          // we can dequantize / dot it
  GgmlType vec_dot_type;   // activation format for vec_dot (F32 for float weights)
};

// nullptr for an id ggml does not define (or that we do not know at all).
const TypeTraits* type_traits(uint32_t type_id);
// "q4_K", or "unknown(17)" when the id is unknown.
std::string type_name(uint32_t type_id);
inline const TypeTraits& traits(GgmlType t) { return *type_traits(uint32_t(t)); }

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_size(GgmlType t, int64_t n);

// Reference (scalar) operations. n must be a multiple of the block size.
void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n);
void quantize_row(GgmlType t, const float* src, void* dst, int64_t n);
// dot(w_row, act_row) where act_row is in traits(wt).vec_dot_type format.
float vec_dot(GgmlType wt, int64_t n, const void* w_row, const void* act_row);

}  // namespace edgellm
