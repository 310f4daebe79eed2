// Vocabulary (from tokenizer.ggml.* metadata), tokenizers and a streaming
// detokenizer.
//
// These models are implemented, each reproducing llama.cpp token for token,
// because a model was trained on exactly those ids and any difference
// silently degrades its output:
//  - "llama": SentencePiece (spm.cpp);
//  - "gpt2": byte-level BPE with merge ranks and the pre-tokenizer regexes
//    named by tokenizer.ggml.pre (bpe.cpp, bpe_pretokenize.cpp);
//  - "gemma4": the same BPE, SentencePiece-style (spaces as "▁", merges over
//    UTF-8 characters, <0xHH> byte fallback; bpe::PreInfo::spm_style);
//  - "bert": WordPiece (wpm.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/gguf.h"

namespace edgellm {

// Values as stored in tokenizer.ggml.token_type (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6
};

// Hash that accepts std::string_view, so lookups of substrings of the input
// never build a temporary std::string.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Vocab {
  static constexpr size_t kMaxTokenBytes = 1024;  // longer token texts are rejected as corrupt

  std::string model;  // tokenizer.ggml.model: "llama", "gpt2", "gemma4", "bert", ...
  std::string pre;    // tokenizer.ggml.pre (BPE pre-tokenizer name; "" if absent; always "gemma4" for "gemma4")
  std::vector<std::string> tokens;
  std::vector<float> scores;      // one per token (0 if the file has none)
  std::vector<TokenType> types;   // one per token (Normal if the file has none)
  // BPE merges as stored: "left right", lowest rank first. Every side and
  // every concatenation must be a token (checked by finalize for "gpt2" and
  // "gemma4").
  std::vector<std::string> merges;
  // Derived by finalize for "gpt2" and "gemma4": per merge, the ids of its left side, its
  // right side and their concatenation.
  std::vector<std::array<int32_t, 3>> merge_ids;
  // -1 when absent. A stored 4294967295 (uint32 -1) also means absent.
  int32_t bos = -1, eos = -1, unk = -1, eot = -1, pad = -1, sep = -1, eom = -1;
  // Fill-in-the-middle tokens: from metadata, else found by their usual texts
  // as llama.cpp does ("<|fim_prefix|>", "<fim-prefix>", "<PAD>", ...).
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  bool add_bos = true, add_eos = false, add_space_prefix = true;
  bool add_sep = false;  // WordPiece: [SEP] closes an encoding that starts with [CLS]
  // WordPiece normalizer (tokenizer.ggml.normalizer.*): lowercase, and strip
  // accents (NFD, drop combining marks).
  bool lowercase = true, strip_accents = true;
  // End of generation, ascending, as llama.cpp decides it: eos, eot, eom,
  // fim pad/repo/file-separator, and the tokens whose text chat models use to
  // end a turn (<|im_end|>, <|eot_id|>, <|end|>, <end_of_turn>,
  // <|endoftext|>, </s>, ...). Those tokens are made Control, as llama.cpp
  // does, so they print as nothing and are only parsed with parse_special.
  std::vector<int32_t> eog_ids;
  // llama.cpp strips whitespace after special tokens for models whose
  // general.name contains "phi-3"/"phi3" (a name-keyed quirk, not in the
  // metadata); kept so that Phi-3 chat prompts tokenize identically.
  bool special_rstrip = false;
  // Text -> id. When a text occurs twice the later id wins, as in llama.cpp.
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> token_to_id;

  // Reads and validates tokenizer.ggml.*; every failure is an Error naming the
  // key or token id at fault.
  static Vocab load(const gguf::File& f);
  // Validates the fields set by hand (tests, converters) and builds
  // token_to_id / eog_ids. load() ends with this. `source` prefixes errors.
  void finalize(const std::string& source = "vocab");

  int32_t n_tokens() const { return int32_t(tokens.size()); }
  int32_t find(std::string_view text) const;  // -1 if absent
  bool is_eog(int32_t id) const;
  TokenType type(int32_t id) const { return types[size_t(id)]; }
};

// A byte range [begin, end) of a text to encode.
struct TextSpan {
  size_t begin = 0, end = 0;
  bool operator==(const TextSpan&) const = default;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // add_bos: add the special tokens that frame an encoding, as llama.cpp's
  // add_special does, except EOS, which is never appended (callers that
  // honour vocab().add_eos append it): SPM prepends BOS if the vocab has one;
  // BPE prepends BOS if vocab().add_bos; WordPiece prepends [CLS] (bos) and,
  // if vocab().add_sep, appends [SEP]. parse_special: recognise the texts of
  // control tokens in the input (e.g. "<s>") as those tokens. User-defined
  // tokens are always recognised, as in llama.cpp.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const {
    return encode_impl(text, add_bos, parse_special, {});
  }
  // encode(text, add_bos, parse_special = true), except inside `literal`
  // (byte ranges of text, sorted by begin, non-overlapping): a control or
  // unknown token's text that overlaps one of them is not recognised there
  // and is encoded as ordinary text, as parse_special = false would.
  // User-defined tokens are recognised everywhere, as always. The text is
  // still encoded as one whole (one dummy prefix, merges across the span
  // edges), so this is what a chat prompt needs: the template's markup is
  // parsed as control tokens, the messages' contents are not
  // (runtime/chat_prompt.h). Unsorted or overlapping spans are an Error.
  std::vector<int32_t> encode_with_literals(std::string_view text, bool add_bos,
                                            const std::vector<TextSpan>& literal) const;
  // Bytes this token contributes to the output: "▁" -> " ", <0x0A> -> "\n",
  // byte-level BPE text through the byte decoder ("Ġ" -> " "), control /
  // unknown / unused tokens -> "", user-defined tokens verbatim.
  virtual std::string token_to_piece(int32_t id) const = 0;
  const Vocab& vocab() const { return vocab_; }

 protected:
  explicit Tokenizer(Vocab v) : vocab_(std::move(v)) {}
  // literal: empty, or sorted, non-overlapping and within text (checked by
  // encode_with_literals); only consulted when parse_special.
  virtual std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                           std::span<const TextSpan> literal) const = 0;
  Vocab vocab_;
};

// Builds the tokenizer for f's tokenizer.ggml.model ("llama", "gpt2", "gemma4",
// "bert").
// Other models, and BPE pre-tokenizers llama.cpp knows but edgellm does not
// implement, fail with "... not supported yet; pass token ids with --tokens";
// an unknown pre-tokenizer name is a plain error.
std::unique_ptr<Tokenizer> make_tokenizer(const gguf::File& f);
std::unique_ptr<Tokenizer> make_tokenizer(Vocab v);

// Turns a stream of ids into text that is always whole UTF-8: bytes of a
// character split over several byte tokens are held back until complete.
// The leading space of the first piece after a BOS is stripped (SPM's dummy
// prefix), so decode(encode(text, add_bos=true)) == text. A stream that does
// not start with BOS is taken to be a continuation and keeps its spaces.
class Detokenizer {
 public:
  explicit Detokenizer(const Tokenizer& tok) : tok_(tok) {}
  std::string push(int32_t id);
  std::string flush();  // whatever is held back, even if not valid UTF-8

 private:
  const Tokenizer& tok_;
  std::string pending_;
  bool strip_space_ = false;
};

// Whole sequence at once, via Detokenizer.
std::string detokenize(const Tokenizer& tok, const std::vector<int32_t>& ids);

}  // namespace edgellm
