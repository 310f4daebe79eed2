// The ggml type table: ids, block sizes and bytes per block for every type ggml
// defines (so `inspect` can describe any file), with the subset we compute on
// marked supported.
#include "tensor/types.h"

#include <string>

#include "base/error.h"

namespace edgellm {

namespace {
constexpr int64_t QK_K = 256;
using T = GgmlType;

struct Entry {
  uint32_t id;
  TypeTraits t;
};

// Sizes follow ggml's block structs (ggml-common.h): e.g. q4_K = d, dmin (2 x f16)
// + 12 bytes of 6-bit scales + 128 bytes of nibbles = 144 bytes per 256 weights.
const Entry kTable[] = {
    {0, {"f32", 1, 4, true, T::F32}},
    {1, {"f16", 1, 2, true, T::F32}},
    {2, {"q4_0", 32, 18, true, T::Q8_0}},
    {3, {"q4_1", 32, 20, true, T::Q8_1}},
    {6, {"q5_0", 32, 22, true, T::Q8_0}},
    {7, {"q5_1", 32, 24, true, T::Q8_1}},
    {8, {"q8_0", 32, 34, true, T::Q8_0}},
    {9, {"q8_1", 32, 36, false, T::Q8_1}},
    {10, {"q2_K", QK_K, 84, true, T::Q8_K}},
    {11, {"q3_K", QK_K, 110, true, T::Q8_K}},
    {12, {"q4_K", QK_K, 144, true, T::Q8_K}},
    {13, {"q5_K", QK_K, 176, true, T::Q8_K}},
    {14, {"q6_K", QK_K, 210, true, T::Q8_K}},
    {15, {"q8_K", QK_K, 292, false, T::Q8_K}},
    {16, {"iq2_xxs", QK_K, 66, false, T::Q8_K}},
    {17, {"iq2_xs", QK_K, 74, false, T::Q8_K}},
    {18, {"iq3_xxs", QK_K, 98, false, T::Q8_K}},
    {19, {"iq1_s", QK_K, 50, false, T::Q8_K}},
    {20, {"iq4_nl", 32, 18, true, T::Q8_0}},
    {21, {"iq3_s", QK_K, 110, false, T::Q8_K}},
    {22, {"iq2_s", QK_K, 82, false, T::Q8_K}},
    {23, {"iq4_xs", QK_K, 136, true, T::Q8_K}},
    {24, {"i8", 1, 1, false, T::F32}},
    {25, {"i16", 1, 2, false, T::F32}},
    {26, {"i32", 1, 4, false, T::F32}},
    {27, {"i64", 1, 8, false, T::F32}},
    {28, {"f64", 1, 8, false, T::F32}},
    {29, {"iq1_m", QK_K, 56, false, T::Q8_K}},
    {30, {"bf16", 1, 2, true, T::F32}},
    {34, {"tq1_0", QK_K, 54, false, T::Q8_K}},
    {35, {"tq2_0", QK_K, 66, false, T::Q8_K}},
    {39, {"mxfp4", 32, 17, false, T::Q8_0}},
};
}  // namespace

const TypeTraits* type_traits(uint32_t id) {
  for (const auto& e : kTable)
    if (e.id == id) return &e.t;
  return nullptr;
}

std::string type_name(uint32_t id) {
  const TypeTraits* t = type_traits(id);
  return t ? std::string(t->name) : "unknown(" + std::to_string(id) + ")";
}

size_t row_size(GgmlType t, int64_t n) {
  const TypeTraits& tr = traits(t);
  if (n < 0 || n % tr.block_size != 0)
    fail("row of ", n, " elements is not a multiple of ", tr.name, "'s block size ", tr.block_size);
  return size_t(n / tr.block_size) * tr.type_size;
}

}  // namespace edgellm
