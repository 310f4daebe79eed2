// WordPiece (tokenizer.ggml.model = "bert"), reproducing llama.cpp's
// llm_tokenizer_wpm and the special-token split in front of it.
//
// Encoding, per raw fragment between special tokens:
//  1. normalize code point by code point (llama.cpp's BertNormalizer subset):
//     with strip_accents, map each to the first code point of its NFD and
//     drop combining marks; drop NUL, U+FFFD (also what invalid UTF-8
//     decodes to) and control / format / private-use characters; lowercase;
//  2. split at whitespace, and make each punctuation character, ASCII symbol
//     and CJK ideograph a word of its own;
//  3. for each word, prefix U+2581 (the converter stores word-initial pieces
//     as "▁piece" and continuation pieces without "##") and take the longest
//     token at each byte position; if some position has none, the whole word
//     becomes [UNK].
#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "tokenizer/bpe_pretokenize.h"
#include "tokenizer/piece_table.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace edgellm {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581

// llama.cpp's (and BERT's) "Chinese character" blocks.
bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) ||
         (cp >= 0x2B920 && cp <= 0x2CEAF) ||  // 0x2B820 in Unicode; HF's BERT code says 0x2B920
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

class WpmTokenizer final : public Tokenizer {
 public:
  explicit WpmTokenizer(Vocab v);
  std::string token_to_piece(int32_t id) const override;

 protected:
  std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                   std::span<const TextSpan> literal) const override;

 private:
  void encode_word(std::string& word, std::vector<int32_t>& out) const;

  bpe::SpecialSplitter specials_;
  size_t max_token_len_ = 0;
  PieceTable pieces_;
};

WpmTokenizer::WpmTokenizer(Vocab v) : Tokenizer(std::move(v)), specials_(vocab_) {
  const Vocab& vb = vocab_;
  std::vector<std::string> pieces;
  pieces.resize(size_t(vb.n_tokens()));
  for (int32_t id = 0; id < vb.n_tokens(); id++) {
    const std::string& s = vb.tokens[size_t(id)];
    max_token_len_ = std::max(max_token_len_, s.size());
    std::string& p = pieces[size_t(id)];
    switch (vb.type(id)) {
      case TokenType::Normal:
        for (size_t i = 0; i < s.size();) {
          if (s.compare(i, kSpace.size(), kSpace) == 0) { p += ' '; i += kSpace.size(); }
          else p += s[i++];
        }
        break;
      case TokenType::Byte: p = std::string(1, char(std::stoi(s.substr(3, 2), nullptr, 16))); break;
      case TokenType::UserDefined: p = s; break;
      default: break;
    }
  }
  pieces_.build(pieces);
}

// word holds "▁" + the word's text.
void WpmTokenizer::encode_word(std::string& word, std::vector<int32_t>& out) const {
  const size_t n = word.size(), start = out.size();
  std::string_view w(word);
  for (size_t i = 0; i < n;) {
    size_t j = std::min(n, i + max_token_len_ + 1);
    int32_t id = -1;
    for (; j > i; j--)
      if ((id = vocab_.find(w.substr(i, j - i))) >= 0) break;
    if (id < 0) {  // no token at this position: the whole word is unknown
      out.resize(start);
      break;
    }
    out.push_back(id);
    i = j;
  }
  if (out.size() == start) {
    if (vocab_.unk < 0) fail("cannot encode word '", word.substr(kSpace.size()), "': the vocabulary has no [UNK] token");
    out.push_back(vocab_.unk);
  }
}

std::vector<int32_t> WpmTokenizer::encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                               std::span<const TextSpan> literal) const {
  std::vector<int32_t> out;
  if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  std::vector<bpe::SpecialSplitter::Fragment> frags;
  specials_.split(text, parse_special, frags, literal);

  std::string word(kSpace);  // "▁" + the current word
  auto finish = [&] {
    if (word.size() > kSpace.size()) encode_word(word, out);
    word.resize(kSpace.size());
  };
  for (const auto& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      continue;
    }
    std::string_view s = text.substr(f.off, f.len);
    for (size_t off = 0; off < s.size();) {
      size_t len;
      uint32_t cp = unicode::decode(s, off, &len);
      off += len;
      if (vocab_.strip_accents) cp = unicode::nfd_first(cp);
      if (unicode::is_whitespace(cp)) {
        finish();
        continue;
      }
      const uint8_t cat = cp < 0x80 ? 0 : unicode::categories(cp);
      const bool ascii_control = cp < 0x20 || cp == 0x7F;
      if (cp == 0 || cp == 0xFFFD || ascii_control || (cat & unicode::kControl)) continue;
      if (vocab_.strip_accents && (cat & unicode::kMark)) continue;
      const bool ascii_punct_or_symbol = cp < 0x7F && cp > 0x20 && !std::isalnum(int(cp));
      const bool alone = ascii_punct_or_symbol || (cat & unicode::kPunctuation) || is_cjk(cp);
      if (alone) finish();
      unicode::append_utf8(word, vocab_.lowercase ? unicode::to_lower(cp) : cp);
      if (alone) finish();
    }
    finish();
  }
  if (add_bos && vocab_.sep >= 0) out.push_back(vocab_.sep);
  return out;
}

std::string WpmTokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= vocab_.n_tokens())
    fail("token id ", id, " is out of range: the vocabulary has ", vocab_.n_tokens(), " tokens");
  return std::string(pieces_[size_t(id)]);
}

}  // namespace

std::unique_ptr<Tokenizer> make_wpm_tokenizer(Vocab v) {
  return std::make_unique<WpmTokenizer>(std::move(v));
}

}  // namespace edgellm
