#include "format/file_type.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "format/gguf.h"

namespace edgellm::gguf {

// enum llama_ftype values (llama.h); the gaps are ids llama.cpp retired.
const char* file_type_name(uint32_t ftype) {
  switch (ftype) {
    case 0: return "all F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K - Medium";
    case 11: return "Q3_K - Small";
    case 12: return "Q3_K - Medium";
    case 13: return "Q3_K - Large";
    case 14: return "Q4_K - Small";
    case 15: return "Q4_K - Medium";
    case 16: return "Q5_K - Small";
    case 17: return "Q5_K - Medium";
    case 18: return "Q6_K";
    case 19: return "IQ2_XXS - 2.0625 bpw";
    case 20: return "IQ2_XS - 2.3125 bpw";
    case 21: return "Q2_K - Small";
    case 22: return "IQ3_XS - 3.3 bpw";
    case 23: return "IQ3_XXS - 3.0625 bpw";
    case 24: return "IQ1_S - 1.5625 bpw";
    case 25: return "IQ4_NL - 4.5 bpw";
    case 26: return "IQ3_S - 3.4375 bpw";
    case 27: return "IQ3_S mix - 3.66 bpw";
    case 28: return "IQ2_S - 2.5 bpw";
    case 29: return "IQ2_M - 2.7 bpw";
    case 30: return "IQ4_XS - 4.25 bpw";
    case 31: return "IQ1_M - 1.75 bpw";
    case 32: return "BF16";
    case 36: return "TQ1_0 - 1.69 bpw ternary";
    case 37: return "TQ2_0 - 2.06 bpw ternary";
    case 38: return "MXFP4 MoE";
    case 39: return "NVFP4";
    case 40: return "Q1_0";
    case 41: return "Q2_0";
    default: return "unknown, may not work";
  }
}

namespace {

// The file type llama.cpp's loader assumes for a file whose tensors are
// mostly of ggml type t (a k-quant stands for its "Medium" recipe).
uint32_t ftype_for_tensor_type(uint32_t t) {
  switch (t) {
    case 0: return 0;    // f32
    case 1: return 1;    // f16
    case 30: return 32;  // bf16
    case 2: return 2;    // q4_0
    case 3: return 3;    // q4_1
    case 6: return 8;    // q5_0
    case 7: return 9;    // q5_1
    case 8: return 7;    // q8_0
    case 10: return 10;  // q2_K
    case 11: return 12;  // q3_K -> Q3_K_M
    case 12: return 15;  // q4_K -> Q4_K_M
    case 13: return 17;  // q5_K -> Q5_K_M
    case 14: return 18;  // q6_K
    case 34: return 36;  // tq1_0
    case 35: return 37;  // tq2_0
    case 16: return 19;  // iq2_xxs
    case 17: return 20;  // iq2_xs
    case 22: return 28;  // iq2_s
    case 18: return 23;  // iq3_xxs
    case 19: return 24;  // iq1_s
    case 29: return 31;  // iq1_m
    case 20: return 25;  // iq4_nl
    case 23: return 30;  // iq4_xs
    case 21: return 26;  // iq3_s
    case 40: return 39;  // nvfp4
    case 41: return 40;  // q1_0
    case 42: return 41;  // q2_0
    default: return 0;   // llama.cpp falls back to all F32
  }
}

// llama.cpp walks tensors by layer number, then name; on a tie in the count
// the type that reached it first wins, so the order matters.
bool llama_weight_order(const std::string& a, const std::string& b) {
  int la = -1, lb = -1;
  std::sscanf(a.c_str(), "blk.%d.", &la);
  std::sscanf(b.c_str(), "blk.%d.", &lb);
  return la != lb ? la < lb : a < b;
}

}  // namespace

FileType file_type_of(const File& f) {
  // llama.cpp reads the key as a u32; another integer type that fits is
  // taken too, anything else is ignored and the type guessed.
  if (const Value* v = f.find("general.file_type"); v && v->is_integer()) {
    const bool is_signed = v->type == ValueType::INT8 || v->type == ValueType::INT16 ||
                           v->type == ValueType::INT32 || v->type == ValueType::INT64;
    if (is_signed ? (v->i >= 0 && v->i <= int64_t(UINT32_MAX)) : v->u <= UINT32_MAX)
      return {uint32_t(is_signed ? uint64_t(v->i) : v->u), false};
  }
  std::vector<const TensorInfo*> order;
  for (const TensorInfo& t : f.tensors()) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(),
                   [](const TensorInfo* a, const TensorInfo* b) { return llama_weight_order(a->name, b->name); });
  std::map<uint32_t, int> count;
  uint32_t most = 0;  // f32 when the file has no tensors
  int most_n = 0;
  for (const TensorInfo* t : order) {
    const int n = ++count[uint32_t(t->type)];
    if (n > most_n) most_n = n, most = uint32_t(t->type);
  }
  return {ftype_for_tensor_type(most), true};
}

std::string file_type_label(const File& f) {
  const FileType t = file_type_of(f);
  return std::string(t.guessed ? "(guessed) " : "") + file_type_name(t.ftype);
}

}  // namespace edgellm::gguf
