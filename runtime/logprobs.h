// Log-probabilities of sampled tokens (OpenAI's logprobs / top_logprobs):
// the log-softmax of the raw logits at one position, before any sampling
// transform, as llama-server and OpenAI report them.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace edgellm {

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // best first
};

// The id's log-probability and the k best (k <= 20: a sorted insertion list).
TokenLogprob logprob_of(const float* logits, int32_t n_vocab, int32_t id, int k);

}  // namespace edgellm
