#include "runtime/logprobs.h"

#include <algorithm>
#include <cmath>

namespace edgellm {

TokenLogprob logprob_of(const float* logits, int32_t n_vocab, int32_t id, int k) {
  float mx = -INFINITY;
  for (int32_t i = 0; i < n_vocab; ++i) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int32_t i = 0; i < n_vocab; ++i) sum += std::exp(double(logits[i]) - mx);
  const double lse = double(mx) + std::log(sum);
  TokenLogprob out;
  out.id = id;
  out.logprob = float(double(logits[id]) - lse);
  if (k > 0) {
    // k <= 20: a sorted insertion list beats sorting the vocabulary.
    auto& top = out.top;
    for (int32_t i = 0; i < n_vocab; ++i) {
      const float l = logits[i];
      if (int(top.size()) == k && !(l > top.back().second)) continue;
      auto at = std::find_if(top.begin(), top.end(), [&](const auto& e) { return l > e.second; });
      top.insert(at, {i, l});
      if (int(top.size()) > k) top.pop_back();
    }
    for (auto& [tid, v] : top) v = float(double(v) - lse);
  }
  return out;
}

}  // namespace edgellm
