#include "runtime/stop_text.h"

#include <algorithm>

namespace edgellm {

std::string StopText::push(std::string_view piece) {
  if (stopped_) return "";
  held_.append(piece);
  // The earliest complete stop string ends the text there.
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = held_.find(s);
    if (at < cut) { cut = at; matched_ = s; }
  }
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  // Hold back the longest tail of held_ that is a proper prefix of a stop
  // string; everything before it can no longer be part of one.
  size_t keep = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) { keep = n; break; }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopText::flush() {
  std::string out;
  if (!stopped_) out.swap(held_);
  held_.clear();
  return out;
}

}  // namespace edgellm
