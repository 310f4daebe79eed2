// Vocab::load: tokenizer.ggml.* metadata -> Vocab, trusting nothing.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {
namespace {

using gguf::Value;
using gguf::ValueType;

// Returns the array at `key`, or null if absent; fails if it is not an array
// whose elements satisfy `ok` (described as `want` in the message).
template <class Pred>
const Value* find_array(const gguf::File& f, const char* key, Pred ok, const char* want) {
  const Value* v = f.find(key);
  if (!v) return nullptr;
  if (v->type != ValueType::ARRAY)
    fail(f.source(), ": metadata key '", key, "': expected an array of ", want, ", found ",
         gguf::value_type_name(v->type));
  if (!ok(v->elem_type))
    fail(f.source(), ": metadata key '", key, "': expected an array of ", want,
         ", found an array of ", gguf::value_type_name(v->elem_type));
  return v;
}

bool is_int_type(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::UINT16: case ValueType::INT16:
    case ValueType::UINT32: case ValueType::INT32: case ValueType::UINT64: case ValueType::INT64:
      return true;
    default: return false;
  }
}

// Special ids: absent key -> `def`; uint32 -1 / int -1 -> absent (-1), which is
// how converters write "no such token".
int32_t read_special(const gguf::File& f, const char* key, int32_t def) {
  const Value* v = f.find(key);
  if (!v) return def;
  std::string what = f.source() + ": metadata key '" + key + "'";
  if (!v->is_integer()) fail(what, ": expected an integer token id, found ",
                             gguf::value_type_name(v->type));
  if (v->type == ValueType::UINT32 && v->u == 0xFFFFFFFFu) return -1;
  if (v->type == ValueType::UINT64 && v->u == ~uint64_t(0)) return -1;
  int64_t id = v->as_int(what);
  if (id == -1) return -1;
  if (id < 0 || id > INT32_MAX) fail(what, ": token id ", id, " is out of range");
  return int32_t(id);
}

bool parse_byte_token(const std::string& s, uint8_t* out) {
  if (s.size() != 6 || s.compare(0, 3, "<0x") != 0 || s[5] != '>') return false;
  int v = 0;
  for (int i = 3; i < 5; i++) {
    char c = s[size_t(i)];
    int d = std::isdigit((unsigned char)c) ? c - '0'
          : (c >= 'A' && c <= 'F') ? c - 'A' + 10
          : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v * 16 + d;
  }
  *out = uint8_t(v);
  return true;
}

// Token texts are shown in messages; keep them short and printable.
std::string quote(const std::string& s) {
  std::string r = "'";
  for (size_t i = 0; i < s.size() && i < 40; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7F) { r += "\\x"; r += "0123456789abcdef"[c >> 4]; r += "0123456789abcdef"[c & 15]; }
    else r += char(c);
  }
  if (s.size() > 40) r += "...";
  return r + "'";
}

}  // namespace

Vocab Vocab::load(const gguf::File& f) {
  Vocab v;
  const std::string& src = f.source();
  const Value* model = f.find("tokenizer.ggml.model");
  if (!model) fail(src, ": metadata key 'tokenizer.ggml.model' is missing: the file has no tokenizer");
  v.model = model->as_string(src + ": metadata key 'tokenizer.ggml.model'");

  const Value* toks = find_array(f, "tokenizer.ggml.tokens",
                                 [](ValueType t) { return t == ValueType::STRING; }, "strings");
  if (!toks) fail(src, ": metadata key 'tokenizer.ggml.tokens' is missing");
  if (toks->arr.empty()) fail(src, ": metadata key 'tokenizer.ggml.tokens' is empty: the vocabulary has no tokens");
  if (toks->arr.size() > size_t(INT32_MAX))
    fail(src, ": metadata key 'tokenizer.ggml.tokens' has ", toks->arr.size(), " tokens, more than ids can hold");
  const size_t n = toks->arr.size();
  v.tokens.reserve(n);
  for (const Value& t : toks->arr) v.tokens.push_back(t.str);

  v.scores.assign(n, 0.0f);
  if (const Value* sc = find_array(f, "tokenizer.ggml.scores",
                                   [](ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; },
                                   "float32")) {
    if (sc->arr.size() != n)
      fail(src, ": metadata key 'tokenizer.ggml.scores' has ", sc->arr.size(),
           " entries but 'tokenizer.ggml.tokens' has ", n);
    for (size_t i = 0; i < n; i++) v.scores[i] = float(sc->arr[i].f);
  }

  v.types.assign(n, TokenType::Normal);
  if (const Value* ty = find_array(f, "tokenizer.ggml.token_type", is_int_type, "integers")) {
    if (ty->arr.size() != n)
      fail(src, ": metadata key 'tokenizer.ggml.token_type' has ", ty->arr.size(),
           " entries but 'tokenizer.ggml.tokens' has ", n);
    for (size_t i = 0; i < n; i++) {
      int64_t t = ty->arr[i].as_int(src + ": metadata key 'tokenizer.ggml.token_type'");
      if (t < 0 || t > 6)
        fail(src, ": metadata key 'tokenizer.ggml.token_type': token ", i, " has type ", t,
             ", expected 0..6");
      v.types[i] = TokenType(t);
    }
  }

  // llama.cpp's defaults for SentencePiece vocabularies converted before these
  // keys existed: <unk>=0, <s>=1, </s>=2, a dummy space prefix, BOS added.
  const bool spm = v.model == "llama";
  const bool have3 = n > 2;
  v.bos = read_special(f, "tokenizer.ggml.bos_token_id", spm && have3 ? 1 : -1);
  v.eos = read_special(f, "tokenizer.ggml.eos_token_id", spm && have3 ? 2 : -1);
  v.unk = read_special(f, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
  v.eot = read_special(f, "tokenizer.ggml.eot_token_id", -1);
  v.pad = read_special(f, "tokenizer.ggml.padding_token_id", -1);
  const int32_t eom = read_special(f, "tokenizer.ggml.eom_token_id", -1);
  v.add_bos = f.get_bool_or("tokenizer.ggml.add_bos_token", spm);
  v.add_eos = f.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = f.get_bool_or("tokenizer.ggml.add_space_prefix", spm);

  std::string name = f.get_string_or("general.name", "");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  v.special_rstrip = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;

  // Name the key, not just the id, when a special id is out of range.
  struct { const char* key; int32_t id; } specials[] = {
      {"tokenizer.ggml.bos_token_id", v.bos}, {"tokenizer.ggml.eos_token_id", v.eos},
      {"tokenizer.ggml.unknown_token_id", v.unk}, {"tokenizer.ggml.eot_token_id", v.eot},
      {"tokenizer.ggml.padding_token_id", v.pad}, {"tokenizer.ggml.eom_token_id", eom}};
  for (auto& s : specials)
    if (s.id >= int32_t(n))
      fail(src, ": metadata key '", s.key, "' = ", s.id, " is out of range: the vocabulary has ",
           n, " tokens");

  v.finalize(src);
  if (eom >= 0 && !v.is_eog(eom)) v.eog_ids.push_back(eom);
  return v;
}

void Vocab::finalize(const std::string& src) {
  const size_t n = tokens.size();
  if (n == 0) fail(src, ": the vocabulary is empty");
  if (n > size_t(INT32_MAX)) fail(src, ": the vocabulary has too many tokens (", n, ")");
  if (scores.empty()) scores.assign(n, 0.0f);
  if (types.empty()) types.assign(n, TokenType::Normal);
  if (scores.size() != n) fail(src, ": ", scores.size(), " scores for ", n, " tokens");
  if (types.size() != n) fail(src, ": ", types.size(), " token types for ", n, " tokens");
  struct { const char* what; int32_t id; } specials[] = {
      {"bos", bos}, {"eos", eos}, {"unk", unk}, {"eot", eot}, {"pad", pad}};
  for (auto& s : specials)
    if (s.id < -1 || s.id >= int32_t(n))
      fail(src, ": ", s.what, " token id ", s.id, " is out of range: the vocabulary has ", n, " tokens");

  token_to_id.clear();
  token_to_id.reserve(n);
  for (size_t i = 0; i < n; i++) {
    const std::string& t = tokens[i];
    if (t.size() > kMaxTokenBytes)
      fail(src, ": token ", i, " is ", t.size(), " bytes long (at most ", kMaxTokenBytes,
           " allowed): the vocabulary is corrupt");
    if (std::isnan(scores[i])) fail(src, ": token ", i, " ", quote(t), " has a NaN score");
    if (int32_t(types[i]) < 0 || int32_t(types[i]) > 6)
      fail(src, ": token ", i, " has type ", int32_t(types[i]), ", expected 0..6");
    uint8_t b;
    if (types[i] == TokenType::Byte && !parse_byte_token(t, &b))
      fail(src, ": token ", i, " ", quote(t), " is a byte token but not of the form <0xHH>");
    token_to_id[t] = int32_t(i);
  }

  eog_ids.clear();
  auto add_eog = [&](int32_t id) {
    if (id >= 0 && std::find(eog_ids.begin(), eog_ids.end(), id) == eog_ids.end()) eog_ids.push_back(id);
  };
  add_eog(eos);
  add_eog(eot);
  for (const char* t : {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|endoftext|>", "<|end|>"}) {
    int32_t id = find(t);
    if (id >= 0 && types[size_t(id)] == TokenType::Control) add_eog(id);
  }
}

int32_t Vocab::find(std::string_view text) const {
  auto it = token_to_id.find(text);
  return it == token_to_id.end() ? -1 : it->second;
}

bool Vocab::is_eog(int32_t id) const {
  return std::find(eog_ids.begin(), eog_ids.end(), id) != eog_ids.end();
}

}  // namespace edgellm
