#include "tools/quant_mix.h"

#include "base/error.h"

namespace edgellm {

namespace {

using T = GgmlType;

// llama_ftype values (llama.h). Only recipes whose every tensor type
// edgellm can run are offered.
const QuantRecipe kRecipes[] = {
    {"F32", 0, T::F32},       {"F16", 1, T::F16},       {"BF16", 32, T::BF16},    {"Q8_0", 7, T::Q8_0},
    {"Q6_K", 18, T::Q6_K},    {"Q5_K_M", 17, T::Q5_K},  {"Q5_K_S", 16, T::Q5_K},  {"Q5_1", 9, T::Q5_1},
    {"Q5_0", 8, T::Q5_0},     {"Q4_K_M", 15, T::Q4_K},  {"Q4_K_S", 14, T::Q4_K},  {"Q4_1", 3, T::Q4_1},
    {"Q4_0", 2, T::Q4_0},     {"Q3_K_L", 13, T::Q3_K},  {"Q3_K_M", 12, T::Q3_K},  {"Q3_K_S", 11, T::Q3_K},
    {"Q2_K", 10, T::Q2_K},    {"IQ4_NL", 25, T::IQ4_NL}, {"IQ4_XS", 30, T::IQ4_XS},
};

// The ladder people step down when a model does not fit (llama.cpp's
// recommended recipes, most to fewest bits).
const char* const kLadder[] = {"F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q3_K_M", "Q2_K", nullptr};

bool is_quantized(T t) { return t != T::F32 && t != T::F16 && t != T::BF16; }

// llama.cpp's use_more_bits: the first and last eighth of the layers and
// every third layer in between.
bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

bool is(const QuantRecipe& r, const char* name) { return r.name == name; }
bool is_iq4(const QuantRecipe& r) { return is(r, "IQ4_NL") || is(r, "IQ4_XS"); }

// tensor_type_fallback: a block that does not divide the row length.
T fallback(T t, int64_t cols) {
  if (cols % traits(t).block_size == 0) return t;
  T f = t;
  switch (t) {
    // llama.cpp's choice since it has iq4_nl (before, edgellm could not run
    // iq4_nl and planned q4_0 here).
    case T::Q2_K: case T::Q3_K: case T::IQ4_XS: f = T::IQ4_NL; break;
    case T::Q4_K: f = T::Q5_0; break;
    case T::Q5_K: f = T::Q5_1; break;
    case T::Q6_K: f = T::Q8_0; break;
    default: break;  // a 32-element type: only F16 is left
  }
  return cols % traits(f).block_size == 0 ? f : T::F16;
}

}  // namespace

QuantRecipe parse_quant(const std::string& name) {
  std::string up;
  for (char c : name) up += char(c >= 'a' && c <= 'z' ? c - 32 : c);
  for (const QuantRecipe& r : kRecipes)
    if (r.name == up) return r;
  fail("--quant '", name, "' is not a recipe edgellm plans (", quant_names(), ")");
}

std::optional<QuantRecipe> quant_of_file_type(uint32_t ftype) {
  for (const QuantRecipe& r : kRecipes)
    if (r.ftype == ftype) return r;
  return std::nullopt;
}

std::string quant_names() {
  std::string s;
  for (const QuantRecipe& r : kRecipes) s += (s.empty() ? "" : ", ") + r.name;
  return s;
}

const char* const* quant_ladder() { return kLadder; }

GgmlType quant_tensor_type(const QuantRecipe& r, const TensorSite& t) {
  if (t.role == TensorRole::Vector) return T::F32;  // norms, biases, rope factors stay f32
  if (!is_quantized(r.base)) return r.base;
  T nt = r.base;
  const int64_t i = t.layer, n = t.n_layer;
  if (t.role == TensorRole::Output || (t.tied && t.role == TensorRole::TokenEmbd)) {
    if (t.cols % traits(r.base).block_size != 0) nt = T::Q8_0;
    else if (r.base != T::Q8_0) nt = T::Q6_K;
  } else if (t.role == TensorRole::AttnV) {
    if (is(r, "Q2_K")) nt = t.n_gqa >= 4 ? T::Q4_K : T::Q3_K;
    else if (is(r, "Q3_K_M")) nt = i < 2 ? T::Q5_K : T::Q4_K;
    else if (is(r, "Q3_K_L")) nt = T::Q5_K;
    else if ((is(r, "Q4_K_M") || is(r, "Q5_K_M")) && more_bits(i, n)) nt = T::Q6_K;
    else if (is(r, "Q4_K_S") && i < 4) nt = T::Q5_K;
    else if (is_iq4(r) && t.n_gqa >= 4) nt = T::Q5_K;
  } else if (t.role == TensorRole::FfnDown) {
    if (is(r, "Q2_K")) nt = T::Q3_K;
    else if (is(r, "Q3_K_M")) nt = i < n / 16 ? T::Q5_K : T::Q4_K;
    else if (is(r, "Q3_K_L")) nt = T::Q5_K;
    else if ((is(r, "Q4_K_M") || is(r, "Q5_K_M")) && more_bits(i, n)) nt = T::Q6_K;
    else if (is_iq4(r) && i < n / 8) nt = T::Q5_K;  // llama.cpp: only without an imatrix, as here
    else if (is(r, "Q4_K_S") && i < n / 8) nt = T::Q5_K;
  } else if (t.role == TensorRole::AttnOut) {
    if (is(r, "Q2_K")) nt = T::Q3_K;
    else if (is(r, "Q3_K_M")) nt = T::Q4_K;
    else if (is(r, "Q3_K_L")) nt = T::Q5_K;
  }
  return fallback(nt, t.cols);
}

}  // namespace edgellm
