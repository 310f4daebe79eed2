// Dispatch of the reference row operations by type. The per-type code lives in
// quant_legacy.cpp (32-element blocks), quant_k.cpp (256-element K-quants) and
// quant_iq4.cpp (the non-linear iq4_nl / iq4_xs);
// this file checks the row length once and picks the routine.
#include "base/error.h"
#include "base/fp16.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

namespace edgellm {

namespace {

[[noreturn]] void unsupported(GgmlType t, const char* op) {
  fail("tensor type ", type_name(uint32_t(t)), " is not supported for ", op);
}

void check_row(GgmlType t, int64_t n, const char* op) {
  const TypeTraits* tr = type_traits(uint32_t(t));
  if (!tr) fail("unknown tensor type id ", uint32_t(t), " in ", op);
  if (n < 0 || n % tr->block_size != 0)
    fail(op, ": row of ", n, " elements is not a multiple of ", tr->name, "'s block size ",
         tr->block_size);
}

}  // namespace

void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n) {
  check_row(t, n, "dequantize");
  switch (t) {
    case GgmlType::F32: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<const float*>(src)[i]; return;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(static_cast<const uint16_t*>(src)[i]); return;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(static_cast<const uint16_t*>(src)[i]); return;
    case GgmlType::Q4_0: return ref::dequantize_q4_0(src, dst, n);
    case GgmlType::Q4_1: return ref::dequantize_q4_1(src, dst, n);
    case GgmlType::Q5_0: return ref::dequantize_q5_0(src, dst, n);
    case GgmlType::Q5_1: return ref::dequantize_q5_1(src, dst, n);
    case GgmlType::Q8_0: return ref::dequantize_q8_0(src, dst, n);
    case GgmlType::Q8_1: return ref::dequantize_q8_1(src, dst, n);
    case GgmlType::Q2_K: return ref::dequantize_q2_K(src, dst, n);
    case GgmlType::Q3_K: return ref::dequantize_q3_K(src, dst, n);
    case GgmlType::Q4_K: return ref::dequantize_q4_K(src, dst, n);
    case GgmlType::Q5_K: return ref::dequantize_q5_K(src, dst, n);
    case GgmlType::Q6_K: return ref::dequantize_q6_K(src, dst, n);
    case GgmlType::Q8_K: return ref::dequantize_q8_K(src, dst, n);
    case GgmlType::IQ4_NL: return ref::dequantize_iq4_nl(src, dst, n);
    case GgmlType::IQ4_XS: return ref::dequantize_iq4_xs(src, dst, n);
    default: unsupported(t, "dequantize");
  }
}

void quantize_row(GgmlType t, const float* src, void* dst, int64_t n) {
  check_row(t, n, "quantize");
  switch (t) {
    case GgmlType::F32: for (int64_t i = 0; i < n; ++i) static_cast<float*>(dst)[i] = src[i]; return;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_fp16(src[i]); return;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_bf16(src[i]); return;
    case GgmlType::Q4_0: return ref::quantize_q4_0(src, dst, n);
    case GgmlType::Q4_1: return ref::quantize_q4_1(src, dst, n);
    case GgmlType::Q5_0: return ref::quantize_q5_0(src, dst, n);
    case GgmlType::Q5_1: return ref::quantize_q5_1(src, dst, n);
    case GgmlType::Q8_0: return ref::quantize_q8_0(src, dst, n);
    case GgmlType::Q8_1: return ref::quantize_q8_1(src, dst, n);
    case GgmlType::Q2_K: return ref::quantize_q2_K(src, dst, n);
    case GgmlType::Q3_K: return ref::quantize_q3_K(src, dst, n);
    case GgmlType::Q4_K: return ref::quantize_q4_K(src, dst, n);
    case GgmlType::Q5_K: return ref::quantize_q5_K(src, dst, n);
    case GgmlType::Q6_K: return ref::quantize_q6_K(src, dst, n);
    case GgmlType::Q8_K: return ref::quantize_q8_K(src, dst, n);
    case GgmlType::IQ4_NL: return ref::quantize_iq4_nl(src, dst, n);
    case GgmlType::IQ4_XS: return ref::quantize_iq4_xs(src, dst, n);
    default: unsupported(t, "quantize");
  }
}

// Float weights dot float activations, accumulated in double: this is the
// oracle the SIMD kernels are compared with, so it should not add its own
// rounding error that grows with n.
template <class Load>
static float dot_float(int64_t n, const Load& load, const float* x) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += double(load(i)) * double(x[i]);
  return float(sum);
}

float vec_dot(GgmlType wt, int64_t n, const void* w, const void* a) {
  check_row(wt, n, "vec_dot");
  const float* x = static_cast<const float*>(a);
  switch (wt) {
    case GgmlType::F32: {
      const auto* p = static_cast<const float*>(w);
      return dot_float(n, [p](int64_t i) { return p[i]; }, x);
    }
    case GgmlType::F16: {
      const auto* p = static_cast<const uint16_t*>(w);
      return dot_float(n, [p](int64_t i) { return fp16_to_f32(p[i]); }, x);
    }
    case GgmlType::BF16: {
      const auto* p = static_cast<const uint16_t*>(w);
      return dot_float(n, [p](int64_t i) { return bf16_to_f32(p[i]); }, x);
    }
    case GgmlType::Q4_0: return ref::vec_dot_q4_0_q8_0(n, w, a);
    case GgmlType::Q4_1: return ref::vec_dot_q4_1_q8_1(n, w, a);
    case GgmlType::Q5_0: return ref::vec_dot_q5_0_q8_0(n, w, a);
    case GgmlType::Q5_1: return ref::vec_dot_q5_1_q8_1(n, w, a);
    case GgmlType::Q8_0: return ref::vec_dot_q8_0_q8_0(n, w, a);
    case GgmlType::Q2_K: return ref::vec_dot_q2_K_q8_K(n, w, a);
    case GgmlType::Q3_K: return ref::vec_dot_q3_K_q8_K(n, w, a);
    case GgmlType::Q4_K: return ref::vec_dot_q4_K_q8_K(n, w, a);
    case GgmlType::Q5_K: return ref::vec_dot_q5_K_q8_K(n, w, a);
    case GgmlType::Q6_K: return ref::vec_dot_q6_K_q8_K(n, w, a);
    case GgmlType::IQ4_NL: return ref::vec_dot_iq4_nl_q8_0(n, w, a);
    case GgmlType::IQ4_XS: return ref::vec_dot_iq4_xs_q8_K(n, w, a);
    default: unsupported(wt, "vec_dot");  // q8_1 / q8_K are activation-only formats
  }
}

}  // namespace edgellm
