// BPE (tokenizer.ggml.model = "gpt2" or "gemma4"), reproducing llama.cpp's
// llm_tokenizer_bpe and the special-token split in front of it.
//
// Encoding:
//  1. special / added tokens are split off (bpe::SpecialSplitter);
//  2. SentencePiece-style pre-tokenizers (bpe::PreInfo::spm_style, Gemma 4)
//     only: each space of a raw fragment becomes "▁" (U+2581);
//  3. each raw fragment is decoded as llama.cpp decodes UTF-8 (invalid bytes
//     become U+FFFD) and split into words by the pre-tokenizer regexes
//     (bpe::PreTokenizer);
//  4. byte-level: each word's bytes are mapped to GPT-2's printable byte
//     alphabet ("Ġ" for a space, ...) and, for pre-tokenizers with
//     ignore_merges, a word that is itself a token is taken whole;
//     SentencePiece-style: a word made only of newlines that is a token is
//     taken whole;
//  5. otherwise the word starts as one symbol per byte (byte-level) or per
//     UTF-8 character (SentencePiece-style) and the adjacent pair with the
//     lowest merge rank is merged until none is left (ties: the leftmost),
//     with a priority queue and lazy deletion: O(n log n);
//  6. each final symbol is its token; a symbol that is no token (always a
//     single byte or character) falls back as llama.cpp does: byte-level, the
//     raw bytes of its character as one-byte tokens, if any; SentencePiece-
//     style, one <0xHH> token per byte, if any; else nothing.
// Merges are looked up by (left id, right id): Vocab::finalize checked that
// every merge side and every concatenation is a token, so this is the same
// as llama.cpp's lookup by text.
#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>

#include "base/error.h"
#include "tokenizer/bpe_pretokenize.h"
#include "tokenizer/piece_table.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace edgellm {
namespace {

// GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves, the
// other 68 (controls, space, 0x7F-0xA0, 0xAD) for U+0100 onwards in order.
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁", U+2581: a space in SentencePiece-style tokens

uint32_t byte_to_cp(uint8_t b) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (int c = 0; c < 256; c++) {
      bool printable = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
      t[size_t(c)] = printable ? uint32_t(c) : next++;
    }
    return t;
  }();
  return table[b];
}

// Inverse: -1 for a code point outside the alphabet.
int cp_to_byte(uint32_t cp) {
  static const auto table = [] {
    std::array<int16_t, 512> t;
    t.fill(-1);
    for (int b = 0; b < 256; b++) t[byte_to_cp(uint8_t(b))] = int16_t(b);
    return t;
  }();
  return cp < table.size() ? table[cp] : -1;
}

// Open-addressing hash map (left id, right id) -> (rank, merged id): the
// lookup of every adjacent pair is the hot path.
class MergeTable {
 public:
  struct Entry {
    uint64_t key = kEmpty;
    int32_t rank = 0, result = 0;
  };
  void build(size_t n) {
    size_t cap = 16;
    while (cap < n + n / 2) cap *= 2;  // load factor <= 2/3
    slots_.assign(cap, Entry{});
    mask_ = cap - 1;
  }
  // Keeps the first insertion of a key (the lowest rank), as llama.cpp's emplace.
  void insert(int32_t l, int32_t r, int32_t rank, int32_t result) {
    uint64_t key = pack(l, r);
    for (size_t i = hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) { slots_[i] = {key, rank, result}; return; }
      if (slots_[i].key == key) return;
    }
  }
  const Entry* find(int32_t l, int32_t r) const {
    uint64_t key = pack(l, r);
    for (size_t i = hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i];
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static uint64_t pack(int32_t l, int32_t r) { return (uint64_t(uint32_t(l)) << 32) | uint32_t(r); }
  size_t hash(uint64_t k) const { return size_t((k * 0x9E3779B97F4A7C15ull) >> 29) & mask_; }
  std::vector<Entry> slots_;
  size_t mask_ = 0;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(Vocab v);
  std::string token_to_piece(int32_t id) const override;

 protected:
  std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                   std::span<const TextSpan> literal) const override;

 private:
  struct Symbol {
    int32_t prev, next;  // neighbours in the chain, -1 at the ends
    int32_t id;          // token of the bytes so far; -1: a byte or character that is no token
    uint32_t n;          // bytes; 0: merged into its left neighbour
  };
  // A symbol lives at the index of its first byte in the word.
  struct Scratch {
    std::vector<Symbol> sym;
    std::vector<uint64_t> heap;  // queued pairs: rank << 32 | left index
    std::string encoded;
  };
  void encode_word(std::string_view word, Scratch& sc, std::vector<int32_t>& out) const;

  bpe::PreTokenizer pre_;
  bpe::SpecialSplitter specials_;
  bool ignore_merges_;
  bool spm_style_;  // bpe::PreInfo::spm_style
  MergeTable merges_;
  int32_t byte_ids_[256];                   // byte-level: token of each byte's character, -1 if none
  std::vector<int32_t> byte_fallback_[256]; // llama.cpp's fallback for a byte of a symbol that is no token
  std::string byte_chars_[256];             // byte-level: each byte's character, UTF-8
  PieceTable pieces_;         // token_to_piece, precomputed
};

BpeTokenizer::BpeTokenizer(Vocab v)
    : Tokenizer(std::move(v)),
      pre_(vocab_.pre),
      specials_(vocab_),
      ignore_merges_(bpe::pre_info(vocab_.pre).ignore_merges),
      spm_style_(bpe::pre_info(vocab_.pre).spm_style) {
  const Vocab& vb = vocab_;
  const int32_t n = vb.n_tokens();

  for (int b = 0; b < 256; b++) {
    if (spm_style_) {  // <0xHH>, upper-case hex as llama.cpp spells it
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", unsigned(b));
      byte_ids_[b] = -1;
      if (int32_t id = vb.find(hex); id >= 0) byte_fallback_[b].push_back(id);
      continue;
    }
    unicode::append_utf8(byte_chars_[b], byte_to_cp(uint8_t(b)));
    byte_ids_[b] = vb.find(byte_chars_[b]);
    for (char c : byte_chars_[b])
      if (int32_t id = vb.find(std::string_view(&c, 1)); id >= 0) byte_fallback_[b].push_back(id);
  }

  merges_.build(vb.merge_ids.size());
  for (size_t i = 0; i < vb.merge_ids.size(); i++) {
    const auto& m = vb.merge_ids[i];
    merges_.insert(m[0], m[1], int32_t(i), m[2]);
  }
  // The rank table above is all encoding needs: the merge texts and id
  // triples (~8 MiB for a 150k vocabulary) would only sit in the footprint.
  std::vector<std::string>().swap(vocab_.merges);
  std::vector<std::array<int32_t, 3>>().swap(vocab_.merge_ids);

  // As llama.cpp's token_to_piece (special = false).
  std::vector<std::string> pieces;
  pieces.resize(size_t(n));
  for (int32_t id = 0; id < n; id++) {
    const std::string& s = vb.tokens[size_t(id)];
    std::string& p = pieces[size_t(id)];
    switch (vb.type(id)) {
      case TokenType::Normal:
        if (spm_style_) {  // "▁" -> " ", everything else as it is
          for (size_t off = 0; off < s.size();) {
            size_t at = s.find(kSpaceMark, off);
            p.append(s, off, at == std::string::npos ? std::string::npos : at - off);
            if (at == std::string::npos) break;
            p += ' ';
            off = at + kSpaceMark.size();
          }
          break;
        }
        for (size_t off = 0; off < s.size();) {
          size_t len;
          uint32_t cp = unicode::decode(s, off, &len);
          int b = cp_to_byte(cp);
          if (b >= 0) {
            p += char(b);
          } else {  // llama.cpp's marker for a character outside the byte alphabet
            std::string utf8;
            unicode::append_utf8(utf8, cp);
            p += "[UNK_BYTE_0x";
            for (char c : utf8) {
              char hex[4];
              std::snprintf(hex, sizeof hex, "%02x", unsigned(uint8_t(c)));
              p += hex;
            }
            p += s + "]";
          }
          off += len;
        }
        break;
      case TokenType::Byte:  // validated as <0xHH> by Vocab::finalize
        p = std::string(1, char(std::stoi(s.substr(3, 2), nullptr, 16)));
        break;
      case TokenType::UserDefined: p = s; break;
      default: break;  // control, unknown, unused, undefined: no text
    }
  }
  pieces_.build(pieces);
}

void BpeTokenizer::encode_word(std::string_view word, Scratch& sc, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() > size_t(INT32_MAX)) fail("a word of ", word.size(), " bytes is too long to tokenize");
  if (ignore_merges_ && !spm_style_) {
    std::string& enc = sc.encoded;
    enc.clear();
    for (char c : word) enc += byte_chars_[uint8_t(c)];
    if (int32_t id = vocab_.find(enc); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  if (spm_style_ && word.find_first_not_of('\n') == std::string_view::npos) {
    // llama.cpp's Gemma 4 rule: a run of newlines that is a token is kept whole.
    if (int32_t id = vocab_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol>& sym = sc.sym;
  std::vector<uint64_t>& heap = sc.heap;
  sym.resize(word.size());
  heap.clear();
  const int32_t n = int32_t(word.size());
  // The first symbols: each byte, or each UTF-8 character (the word is whole
  // UTF-8, canonical_utf8's form; a length is still clamped to the word).
  for (int32_t i = 0, prev = -1; i < n; prev = i, i += int32_t(sym[size_t(i)].n)) {
    int32_t len = 1, id;
    if (spm_style_) {
      const uint8_t lead = uint8_t(word[size_t(i)]);
      len = std::min(n - i, lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
      id = vocab_.find(word.substr(size_t(i), size_t(len)));
    } else {
      id = byte_ids_[uint8_t(word[size_t(i)])];
    }
    sym[size_t(i)] = {prev, i + len == n ? -1 : i + len, id, uint32_t(len)};
  }

  // A queued pair is (rank, left index) in one integer: the smallest is the
  // lowest rank, then the leftmost, as llama.cpp's queue orders them. The
  // right side is the left's current neighbour; the entry is stale if the
  // pair there now has another rank (a merge rank names one pair of texts).
  auto rank_of = [&](int32_t l, int32_t r) -> const MergeTable::Entry* {
    int32_t lid = sym[size_t(l)].id, rid = sym[size_t(r)].id;
    return lid < 0 || rid < 0 ? nullptr : merges_.find(lid, rid);
  };
  auto key = [](int32_t rank, int32_t left) { return (uint64_t(uint32_t(rank)) << 32) | uint32_t(left); };
  for (int32_t i = 0; sym[size_t(i)].next >= 0; i = sym[size_t(i)].next)
    if (const MergeTable::Entry* e = rank_of(i, sym[size_t(i)].next)) heap.push_back(key(e->rank, i));
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  auto push = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    if (const MergeTable::Entry* e = rank_of(l, r)) {
      heap.push_back(key(e->rank, l));
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const uint64_t top = heap.back();
    heap.pop_back();
    const int32_t left = int32_t(uint32_t(top)), rank = int32_t(top >> 32);
    Symbol& l = sym[size_t(left)];
    if (l.n == 0 || l.next < 0) continue;
    const MergeTable::Entry* e = rank_of(left, l.next);
    if (!e || e->rank != rank) continue;  // stale
    Symbol& r = sym[size_t(l.next)];
    l.id = e->result;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[size_t(r.next)].prev = left;
    push(l.prev, left);
    push(left, l.next);
  }

  for (int32_t i = 0; i != -1; i = sym[size_t(i)].next) {
    const Symbol& s = sym[size_t(i)];
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {  // a single byte or character (merges only make tokens)
      for (uint32_t k = 0; k < s.n; k++) {
        const auto& fb = byte_fallback_[uint8_t(word[size_t(i) + k])];
        out.insert(out.end(), fb.begin(), fb.end());
      }
    }
  }
}

std::vector<int32_t> BpeTokenizer::encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                               std::span<const TextSpan> literal) const {
  std::vector<int32_t> out;
  if (add_bos && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  std::vector<bpe::SpecialSplitter::Fragment> frags;
  specials_.split(text, parse_special, frags, literal);
  out.reserve(out.size() + text.size() / 3 + 4);

  Scratch sc;
  std::string canon, subject, escaped;
  for (const auto& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      continue;
    }
    std::string_view raw = text.substr(f.off, f.len);
    if (spm_style_ && raw.find(' ') != std::string_view::npos) {
      // Spaces are escaped on the raw bytes, before decoding, as llama.cpp does.
      escaped.clear();
      for (char c : raw) {
        if (c == ' ') escaped += kSpaceMark;
        else escaped += c;
      }
      raw = escaped;
    }
    // The words of raw text go to PCRE2 as they are when the text is valid
    // UTF-8 (the usual case); otherwise decoded as llama.cpp does first.
    std::string_view words_of = raw, subject_of = raw;
    if (!unicode::is_canonical(raw)) {
      canon = unicode::canonical_utf8(raw, &subject);
      words_of = canon;
      subject_of = subject;
    }
    pre_.split(subject_of, [&](size_t b, size_t e) { encode_word(words_of.substr(b, e - b), sc, out); });
  }
  return out;
}

std::string BpeTokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= vocab_.n_tokens())
    fail("token id ", id, " is out of range: the vocabulary has ", vocab_.n_tokens(), " tokens");
  return std::string(pieces_[size_t(id)]);
}

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab v) {
  return std::make_unique<BpeTokenizer>(std::move(v));
}

}  // namespace edgellm
