// Streaming detokenizer: pieces in, whole UTF-8 characters out.
//
// Byte-fallback tokens carry one byte each, so an emoji may arrive as four
// tokens; printing (or sending over SSE) the first three alone would show
// replacement characters. We hold back a trailing incomplete sequence until
// its last byte arrives. Bytes that can never complete (a stray continuation
// byte, an invalid lead byte) are passed through rather than held forever.
#include "tokenizer/tokenizer.h"

namespace edgellm {
namespace {

// Expected length of a sequence starting with c; 0 for a continuation byte,
// 1 for ASCII and for bytes that cannot start a sequence.
size_t seq_len(uint8_t c) {
  if (c < 0x80) return 1;
  if (c < 0xC0) return 0;
  if (c < 0xE0) return 2;
  if (c < 0xF0) return 3;
  if (c < 0xF8) return 4;
  return 1;
}

// Length of the prefix of s that does not end inside an unfinished sequence.
size_t complete_prefix(const std::string& s) {
  const size_t n = s.size();
  // The last lead byte is at most 3 bytes back for a sequence still open.
  for (size_t back = 1; back <= 4 && back <= n; back++) {
    size_t len = seq_len(uint8_t(s[n - back]));
    if (len == 0) continue;  // continuation byte: keep looking for its lead
    return len > back ? n - back : n;
  }
  return n;  // only continuation bytes: nothing to wait for
}

}  // namespace

std::string Detokenizer::push(int32_t id) {
  const Vocab& v = tok_.vocab();
  if (id == v.bos && id >= 0) {
    // The text after BOS began with SPM's dummy prefix "▁"; drop its space.
    strip_space_ = v.add_space_prefix;
    return {};
  }
  std::string piece = tok_.token_to_piece(id);
  if (piece.empty()) return {};
  if (strip_space_) {
    if (piece[0] == ' ') piece.erase(0, 1);
    strip_space_ = false;
  }
  pending_ += piece;
  size_t k = complete_prefix(pending_);
  std::string out = pending_.substr(0, k);
  pending_.erase(0, k);
  return out;
}

std::string Detokenizer::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

std::string detokenize(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  Detokenizer d(tok);
  std::string out;
  for (int32_t id : ids) out += d.push(id);
  return out + d.flush();
}

}  // namespace edgellm
