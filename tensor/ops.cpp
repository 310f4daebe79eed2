// Dispatch of the reference row operations by type.
#include "base/error.h"
#include "base/fp16.h"
#include "tensor/types.h"

namespace edgellm {

static void unsupported(GgmlType t, const char* op) {
  fail("tensor type ", type_name(uint32_t(t)), " is not supported for ", op);
}

void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case GgmlType::F32: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<const float*>(src)[i]; return;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(static_cast<const uint16_t*>(src)[i]); return;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(static_cast<const uint16_t*>(src)[i]); return;
    default: unsupported(t, "dequantize");
  }
}

void quantize_row(GgmlType t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case GgmlType::F32: for (int64_t i = 0; i < n; ++i) static_cast<float*>(dst)[i] = src[i]; return;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_fp16(src[i]); return;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_bf16(src[i]); return;
    default: unsupported(t, "quantize");
  }
}

float vec_dot(GgmlType wt, int64_t n, const void* w, const void* a) {
  const float* x = static_cast<const float*>(a);
  float sum = 0;
  switch (wt) {
    case GgmlType::F32: for (int64_t i = 0; i < n; ++i) sum += static_cast<const float*>(w)[i] * x[i]; return sum;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) sum += fp16_to_f32(static_cast<const uint16_t*>(w)[i]) * x[i]; return sum;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) sum += bf16_to_f32(static_cast<const uint16_t*>(w)[i]) * x[i]; return sum;
    default: unsupported(wt, "vec_dot");
  }
  return 0;
}

}  // namespace edgellm
