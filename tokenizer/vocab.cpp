// Vocab::load: tokenizer.ggml.* metadata -> Vocab, trusting nothing.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"
#include "tokenizer/bpe_pretokenize.h"
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

  // Per-model defaults, as llama.cpp's: SentencePiece vocabularies converted
  // before these keys existed use <unk>=0, <s>=1, </s>=2, a dummy space
  // prefix and BOS; BERT uses [CLS]=101, [UNK]=100, [SEP]=102, [PAD]=0. (For
  // BPE llama.cpp defaults BOS and EOS to id 11, a GPT-NeoX-ism; here they are
  // absent unless the file names them.) A default outside the vocabulary is
  // dropped; a stored id outside it is an error.
  const bool spm = v.model == "llama", wpm = v.model == "bert";
  const bool bpe_model = v.model == "gpt2" || v.model == "gemma4";
  auto def = [&](int32_t id) { return id < int32_t(n) ? id : -1; };
  // llama.cpp runs "gemma4" files as BPE with the "gemma4" pre-tokenizer,
  // whatever tokenizer.ggml.pre says.
  v.pre = v.model == "gemma4" ? "gemma4" : f.get_string_or("tokenizer.ggml.pre", "");
  const bpe::PreInfo pre = bpe::pre_info(v.pre);
  v.bos = read_special(f, "tokenizer.ggml.bos_token_id", spm ? def(1) : wpm ? def(101) : -1);
  v.eos = read_special(f, "tokenizer.ggml.eos_token_id", spm ? def(2) : -1);
  v.unk = read_special(f, "tokenizer.ggml.unknown_token_id", spm ? 0 : wpm ? def(100) : -1);
  v.sep = read_special(f, "tokenizer.ggml.seperator_token_id", wpm ? def(102) : -1);
  v.eot = read_special(f, "tokenizer.ggml.eot_token_id", -1);
  v.pad = read_special(f, "tokenizer.ggml.padding_token_id", wpm ? 0 : -1);
  v.eom = read_special(f, "tokenizer.ggml.eom_token_id", -1);
  v.fim_pre = read_special(f, "tokenizer.ggml.fim_pre_token_id", read_special(f, "tokenizer.ggml.prefix_token_id", -1));
  v.fim_suf = read_special(f, "tokenizer.ggml.fim_suf_token_id", read_special(f, "tokenizer.ggml.suffix_token_id", -1));
  v.fim_mid = read_special(f, "tokenizer.ggml.fim_mid_token_id", read_special(f, "tokenizer.ggml.middle_token_id", -1));
  v.fim_pad = read_special(f, "tokenizer.ggml.fim_pad_token_id", -1);
  v.fim_rep = read_special(f, "tokenizer.ggml.fim_rep_token_id", -1);
  v.fim_sep = read_special(f, "tokenizer.ggml.fim_sep_token_id", -1);
  v.add_bos = f.get_bool_or("tokenizer.ggml.add_bos_token", spm || wpm || (bpe_model && pre.add_bos));
  if (bpe_model && pre.spm_style) v.add_bos = true;  // llama.cpp overrides a stored false for Gemma 4
  v.add_eos = f.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.add_sep = f.get_bool_or("tokenizer.ggml.add_sep_token", wpm);
  v.add_space_prefix = f.get_bool_or("tokenizer.ggml.add_space_prefix", spm);
  v.lowercase = f.get_bool_or("tokenizer.ggml.normalizer.lowercase", true);
  v.strip_accents = f.get_bool_or("tokenizer.ggml.normalizer.strip_accents", v.lowercase);

  if (bpe_model) {
    const Value* m = find_array(f, "tokenizer.ggml.merges",
                                [](ValueType t) { return t == ValueType::STRING; }, "strings");
    // llama.cpp lets a kimi-k2 vocabulary come without merges (each byte
    // then stays a token of its own).
    if (!m && v.pre != "kimi-k2")
      fail(src, ": metadata key 'tokenizer.ggml.merges' is missing: a BPE vocabulary needs its merges");
    if (m) {
      v.merges.reserve(m->arr.size());
      for (const Value& x : m->arr) v.merges.push_back(x.str);
    }
  }

  std::string name = f.get_string_or("general.name", "");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  v.special_rstrip = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;

  // Name the key, not just the id, when a special id is out of range.
  struct { const char* key; int32_t id; } specials[] = {
      {"tokenizer.ggml.bos_token_id", v.bos}, {"tokenizer.ggml.eos_token_id", v.eos},
      {"tokenizer.ggml.unknown_token_id", v.unk}, {"tokenizer.ggml.eot_token_id", v.eot},
      {"tokenizer.ggml.padding_token_id", v.pad}, {"tokenizer.ggml.eom_token_id", v.eom},
      {"tokenizer.ggml.seperator_token_id", v.sep}, {"tokenizer.ggml.fim_pre_token_id", v.fim_pre},
      {"tokenizer.ggml.fim_suf_token_id", v.fim_suf}, {"tokenizer.ggml.fim_mid_token_id", v.fim_mid},
      {"tokenizer.ggml.fim_pad_token_id", v.fim_pad}, {"tokenizer.ggml.fim_rep_token_id", v.fim_rep},
      {"tokenizer.ggml.fim_sep_token_id", v.fim_sep}};
  for (auto& s : specials)
    if (s.id >= int32_t(n))
      fail(src, ": metadata key '", s.key, "' = ", s.id, " is out of range: the vocabulary has ",
           n, " tokens");

  v.finalize(src);
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
      {"bos", bos}, {"eos", eos}, {"unk", unk}, {"eot", eot}, {"pad", pad}, {"sep", sep}, {"eom", eom},
      {"fim_pre", fim_pre}, {"fim_suf", fim_suf}, {"fim_mid", fim_mid}, {"fim_pad", fim_pad},
      {"fim_rep", fim_rep}, {"fim_sep", fim_sep}};
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

  merge_ids.clear();
  if (model == "gpt2" || model == "gemma4") {
    if (merges.empty() && pre != "kimi-k2")
      fail(src, ": the BPE vocabulary has no merges ('tokenizer.ggml.merges' is empty)");
    merge_ids.reserve(merges.size());
    std::string whole;
    for (size_t i = 0; i < merges.size(); i++) {
      const std::string& m = merges[i];
      const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
      if (sp == std::string::npos)
        fail(src, ": metadata key 'tokenizer.ggml.merges': merge ", i, " ", quote(m),
             " is not two tokens separated by a space");
      std::string_view l(m.data(), sp), r(m.data() + sp + 1, m.size() - sp - 1);
      whole.assign(l);
      whole.append(r);
      std::array<int32_t, 3> ids = {find(l), find(r), find(whole)};
      for (int k = 0; k < 3; k++)
        if (ids[size_t(k)] < 0)
          fail(src, ": metadata key 'tokenizer.ggml.merges': merge ", i, " ", quote(m), " refers to ",
               quote(std::string(k == 0 ? l : k == 1 ? r : std::string_view(whole))), ", which is not a token");
      merge_ids.push_back(ids);
    }
  }

  // Special tokens found by their text, as llama.cpp does (its loader has
  // the same lists); each one found is made Control. First the single ids
  // that metadata may already name ...
  auto make_control = [&](int32_t id) {
    if (types[size_t(id)] != TokenType::Control) types[size_t(id)] = TokenType::Control;
  };
  auto detect = [&](int32_t& id, std::initializer_list<const char*> texts) {
    if (id >= 0) return;
    for (const char* t : texts) {  // llama.cpp takes whichever it meets first; here the lowest id
      int32_t found = find(t);
      if (found >= 0 && (id < 0 || found < id)) id = found;
    }
    if (id >= 0) make_control(id);
  };
  int32_t eot_found = eot, eom_found = eom;
  detect(eot_found, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                     "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
                     "<end_of_utterance>"});
  detect(eom_found, {"<|eom_id|>"});
  detect(fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>",
                   "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"});
  detect(fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>",
                   "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"});
  detect(fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>",
                   "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"});
  detect(fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
  detect(fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
  detect(fim_sep, {"<|file_sep|>"});

  // ... then end of generation.
  std::vector<int32_t> eog;
  for (int32_t id : {fim_pad, fim_rep, fim_sep})
    if (id >= 0) eog.push_back(id);
  for (const char* t : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
                        "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
                        "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
                        "<｜end▁of▁sentence｜>", "[e~["}) {
    int32_t id = find(t);
    if (id < 0) continue;
    eog.push_back(id);
    make_control(id);
  }
  // gpt-oss: these always print.
  for (const char* t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
    if (int32_t id = find(t); id >= 0) types[size_t(id)] = TokenType::UserDefined;
  for (int32_t id : {eos, eot, eom})
    if (id >= 0) eog.push_back(id);
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto in_eog = [&](const char* t) {
    int32_t id = find(t);
    return id >= 0 && std::binary_search(eog.begin(), eog.end(), id) ? id : -1;
  };
  // o200k_harmony / solar-open: "<|end|>" ends a message, not generation.
  if (int32_t end = in_eog("<|end|>"); end >= 0 &&
      ((in_eog("<|return|>") >= 0 && in_eog("<|call|>") >= 0) ||
       (in_eog("<|calls|>") >= 0 && in_eog("<|flush|>") >= 0))) {
    eog.erase(std::find(eog.begin(), eog.end(), end));
    types[size_t(end)] = TokenType::UserDefined;
  }
  // Gemma 4 / PaddleOCR: "</s>" is an ordinary token there.
  if (int32_t s = in_eog("</s>"); s >= 0 && in_eog("<|tool_response>") >= 0) {
    eog.erase(std::find(eog.begin(), eog.end(), s));
    types[size_t(s)] = TokenType::Normal;
  }
  eog_ids = std::move(eog);
}

int32_t Vocab::find(std::string_view text) const {
  auto it = token_to_id.find(text);
  return it == token_to_id.end() ? -1 : it->second;
}

bool Vocab::is_eog(int32_t id) const {
  return std::find(eog_ids.begin(), eog_ids.end(), id) != eog_ids.end();
}

}  // namespace edgellm
