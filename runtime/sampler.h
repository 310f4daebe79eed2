// Token sampler: logit bias, repetition / presence / frequency penalties,
// top-k, top-p, min-p, temperature, then a draw from a seeded PRNG, in the
// order of llama.cpp's common sampler so that the same flags mean the same
// thing.
//
// Buffers are allocated once in the constructor; sample() never allocates, so
// it can sit inside the decode loop. The PRNG is our own (xoshiro256**, seeded
// through splitmix64) and the draw does not use <random> distributions, whose
// output differs between standard libraries: same seed, same tokens, anywhere.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace edgellm {

struct SamplerParams {
  float temp = 0.8f;            // <= 0: greedy (argmax, ties -> lowest id)
  int32_t top_k = 40;           // <= 0: disabled
  float top_p = 0.95f;          // >= 1: disabled
  float min_p = 0.05f;          // <= 0: disabled
  float repeat_penalty = 1.0f;  // 1: disabled
  int32_t repeat_last_n = 64;   // 0: disabled, -1: the whole history
  // OpenAI's penalties over the same window: logit -= count * frequency +
  // (count > 0) * presence, count = occurrences of the id in the window.
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;  // each in [-2, 2]; 0: disabled
  // Added to the id's logit before anything else (OpenAI's logit_bias; -100
  // or -inf bans the token in practice). Ids must be inside the vocabulary.
  std::vector<std::pair<int32_t, float>> logit_bias;
  uint64_t seed = 0xED6E;       // "EDGE" (G is not a hex digit)
};

class Sampler {
 public:
  // Validates p (see validate) and n_vocab > 0; allocates all buffers.
  Sampler(const SamplerParams& p, int32_t n_vocab);

  // logits: n_vocab floats, modified in place (the penalty is applied to them).
  // history: previously seen ids (prompt + generated); the last repeat_last_n
  // are penalised, each distinct id once. Performs no heap allocation (except
  // to throw, for a history id outside the vocabulary).
  int32_t sample(float* logits, const int32_t* history, size_t n_history);
  void reseed(uint64_t seed);

  // Throws edgellm::Error with a message naming the bad parameter.
  static void validate(const SamplerParams& p);
  // Heap bytes a sampler over n_vocab tokens holds (for the memory plan).
  static size_t buffer_bytes(int32_t n_vocab) { return size_t(n_vocab) * (sizeof(Candidate) + sizeof(uint32_t)); }
  const SamplerParams& params() const { return p_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  void apply_penalty(float* logits, const int32_t* history, size_t n_history);
  uint64_t next_u64();
  double next_unit();  // uniform in [0, 1), 53 bits

  SamplerParams p_;
  int32_t n_vocab_;
  std::vector<Candidate> cand_;  // n_vocab, reused every call
  std::vector<uint32_t> count_;  // n_vocab occurrence counts for the penalties, all 0 between calls
  uint64_t s_[4];                // xoshiro256** state
};

}  // namespace edgellm
