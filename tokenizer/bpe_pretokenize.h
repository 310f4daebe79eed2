// Pre-tokenization for the BPE ("gpt2") and WordPiece ("bert") tokenizers:
//  - the split of raw text around special / added tokens (shared with WPM);
//  - the split of each raw fragment into words by the regexes that
//    tokenizer.ggml.pre names, run with PCRE2 (UTF + UCP, JIT).
//
// llama.cpp runs these regexes in its own way, and its results are what a
// model was trained against, so the patterns here are its published ones with
// the adaptations needed to give identical splits under PCRE2:
//  - \s is llama.cpp's whitespace set (Unicode White_Space, which includes
//    U+0085) rather than PCRE2's;
//  - \d is [0-9] and \p{Lu} / \p{Ll} / \p{Lt} / \p{Lm} / \p{Lo} are \p{L}, as
//    llama.cpp's category-collapsing regex engine treats them;
//  - in patterns without \p{..} (which llama.cpp runs on code points with
//    non-ASCII whitespace turned into U+000B), a literal non-ASCII whitespace
//    character in a class never matches (e.g. U+3000 in deepseek-llm's
//    punctuation class);
//  - '$' means end of fragment only;
//  - \p{Han} (not a PCRE2 name here) is llama.cpp's unicode_cpt_is_han, the
//    CJK ideograph blocks its kimi-k2 splitter keeps apart from other letters;
//  - deepseek-llm's "\s+$" is written as an equivalent pattern that is not
//    quadratic on long whitespace runs.
// One difference remains: PCRE2 10.42 (Debian 12) has Unicode 14 tables and
// llama.cpp Unicode 15.1, so code points assigned since (CJK Extensions H and
// I, U+31350.., U+2EBF0.., and ~200 others) are "other" here but letters,
// marks or symbols there, and text using them can split differently.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace edgellm::bpe {

// What llama.cpp's vocabulary loader decides from the tokenizer.ggml.pre name.
struct PreInfo {
  bool known = false;          // llama.cpp knows the name
  bool supported = false;      // and it is implemented here
  bool add_bos = false;        // default of tokenizer.ggml.add_bos_token
  bool ignore_merges = false;  // a word that is a token is taken whole
  // SentencePiece-style BPE (llama.cpp's "gemma4" pre-tokenizer): spaces are
  // escaped as U+2581 before the split, merges start from whole UTF-8
  // characters instead of GPT-2's byte alphabet, a character without a token
  // falls back to <0xHH> byte tokens, and a word made only of newlines that
  // is itself a token is taken whole. llama.cpp also forces add_bos on.
  bool spm_style = false;
};
// An empty name (no tokenizer.ggml.pre) is "default", as in llama.cpp.
PreInfo pre_info(std::string_view pre);

// Splits text into words. Thread-safe: one instance serves concurrent calls.
class PreTokenizer {
 public:
  // Throws Error for a name llama.cpp does not know ("unknown pre-tokenizer")
  // and for known ones not implemented here ("... not supported yet").
  explicit PreTokenizer(std::string_view pre);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;

  // text: valid UTF-8 without surrogates (unicode::canonical_utf8's subject
  // form). Calls fn(begin, end) for each word, in order; the words cover text.
  template <class F>
  void split(std::string_view text, F&& fn) const {
    using Fn = std::remove_reference_t<F>;
    split_impl(text, [](void* ctx, size_t b, size_t e) { (*static_cast<Fn*>(ctx))(b, e); }, &fn);
  }

  const std::string& name() const { return name_; }

 private:
  using WordFn = void (*)(void* ctx, size_t begin, size_t end);
  void split_impl(std::string_view text, WordFn fn, void* ctx) const;
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

// The special-token split that runs before everything else, as llama.cpp's
// tokenizer_st_partition: special tokens are taken longest text first over
// the whole input; control and unknown tokens only with parse_special;
// user-defined ones always.
// literal (Tokenizer::encode_with_literals): byte ranges where control and
// unknown tokens are not taken, with parse_special or not.
class SpecialSplitter {
 public:
  explicit SpecialSplitter(const Vocab& v);
  struct Fragment {
    int32_t token;  // -1: raw text [off, off + len)
    size_t off, len;
  };
  void split(std::string_view text, bool parse_special, std::vector<Fragment>& out,
             std::span<const TextSpan> literal = {}) const;

 private:
  struct Special {
    int32_t id;
    bool control;  // control / unknown: only with parse_special
    bool rstrip;   // whitespace after it is dropped (Phi-3 names)
  };
  const Vocab& vocab_;
  std::vector<Special> specials_;
  // A byte trie of the special texts: one pass over the input finds which
  // specials occur at all, so the longest-first split (one scan of the text
  // per special) only runs for those, not for all of a vocabulary's hundreds.
  struct TrieNode {
    std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
    std::vector<int32_t> ends;                      // indices into specials_
  };
  std::vector<TrieNode> trie_;
  int32_t root_next_[256];
};

// Whether [begin, end) overlaps one of `literal` (sorted, non-overlapping,
// none empty).
inline bool overlaps_literal(std::span<const TextSpan> literal, size_t begin, size_t end) {
  if (literal.empty()) return false;
  // The first span that ends after `begin`; spans are disjoint and sorted, so
  // their ends ascend too.
  auto it = std::upper_bound(literal.begin(), literal.end(), begin,
                             [](size_t b, const TextSpan& s) { return b < s.end; });
  return it != literal.end() && it->begin < end;
}

}  // namespace edgellm::bpe

namespace edgellm {
// The tokenizers behind make_tokenizer (bpe.cpp, wpm.cpp); v is finalized.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab v);
std::unique_ptr<Tokenizer> make_wpm_tokenizer(Vocab v);
}  // namespace edgellm
