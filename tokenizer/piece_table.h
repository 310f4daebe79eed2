// Every token's text as printed (token_to_piece), in one buffer with
// offsets: ~7 bytes a token for a 150k vocabulary instead of a std::string
// (32 bytes, plus a heap block past 15 characters) each.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgellm {

class PieceTable {
 public:
  void build(const std::vector<std::string>& pieces) {
    size_t total = 0;
    for (const std::string& p : pieces) total += p.size();
    chars_.clear();
    chars_.reserve(total);
    offsets_.assign(1, 0);
    offsets_.reserve(pieces.size() + 1);
    for (const std::string& p : pieces) {
      chars_ += p;
      offsets_.push_back(uint32_t(chars_.size()));
    }
  }
  std::string_view operator[](size_t id) const {
    return std::string_view(chars_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

 private:
  std::string chars_;
  std::vector<uint32_t> offsets_;  // piece i is chars_[offsets_[i], offsets_[i + 1])
};

}  // namespace edgellm
