// Sampler: see sampler.h for the contract.
//
// Candidates live in one preallocated array. Truncations shrink a prefix
// `size` of it; `sorted` counts the leading candidates known to be the best
// ones in order (logit descending, id ascending on ties: a total order, so the
// result does not depend on the standard library's sort). Only what a stage
// needs is sorted: top-k partially sorts k elements; top-p sorts a growing
// prefix until the cumulative probability is reached, which for peaked
// distributions is a few dozen tokens rather than the whole vocabulary.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace edgellm {

void Sampler::validate(const SamplerParams& p) {
  if (!std::isfinite(p.temp)) fail("sampler: temp must be a finite number, got ", p.temp);
  if (p.temp < 0) fail("sampler: temp must be >= 0 (0 means greedy), got ", p.temp);
  if (p.top_k < 0) fail("sampler: top_k must be >= 0 (0 disables it), got ", p.top_k);
  if (!(p.top_p > 0 && p.top_p <= 1))
    fail("sampler: top_p must be in (0, 1] (1 disables it), got ", p.top_p);
  if (!(p.min_p >= 0 && p.min_p <= 1))
    fail("sampler: min_p must be in [0, 1] (0 disables it), got ", p.min_p);
  if (!(p.repeat_penalty > 0) || std::isinf(p.repeat_penalty))
    fail("sampler: repeat_penalty must be a finite number > 0 (1 disables it), got ", p.repeat_penalty);
  for (const auto& [name, v] : {std::pair{"presence_penalty", p.presence_penalty}, {"frequency_penalty", p.frequency_penalty}})
    if (!(v >= -2 && v <= 2)) fail("sampler: ", name, " must be in [-2, 2] (0 disables it), got ", v);
  for (const auto& [id, bias] : p.logit_bias)
    if (std::isnan(bias) || bias == INFINITY)
      fail("sampler: logit_bias for token ", id, " must be a number or -inf, got ", bias);
  if (p.repeat_last_n < -1)
    fail("sampler: repeat_last_n must be >= -1 (0 disables the penalty, -1 covers the whole history), got ",
         p.repeat_last_n);
}

Sampler::Sampler(const SamplerParams& p, int32_t n_vocab) : p_(p), n_vocab_(n_vocab) {
  validate(p);
  if (n_vocab <= 0) fail("sampler: n_vocab must be > 0, got ", n_vocab);
  for (const auto& [id, bias] : p.logit_bias)
    if (id < 0 || id >= n_vocab) fail("sampler: logit_bias names token ", id, ", outside the vocabulary (", n_vocab, " tokens)");
  cand_.resize(size_t(n_vocab));
  count_.assign(size_t(n_vocab), 0);
  reseed(p.seed);
}

// splitmix64 expands the 64-bit seed into xoshiro's 256-bit state (the
// seeding its authors recommend; it never yields the all-zero state).
void Sampler::reseed(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s = z ^ (z >> 31);
  }
}

uint64_t Sampler::next_u64() {  // xoshiro256**
  auto rotl = [](uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Sampler::next_unit() { return double(next_u64() >> 11) * 0x1.0p-53; }

// The repetition penalty hits each distinct id in the window once, as
// llama.cpp does; dividing a negative logit would make the token more likely,
// so those are multiplied. Presence and frequency penalties subtract, per id,
// a constant and a multiple of its count in the same window.
void Sampler::apply_penalty(float* logits, const int32_t* history, size_t n_history) {
  const bool repeat = p_.repeat_penalty != 1.0f, openai = p_.presence_penalty != 0 || p_.frequency_penalty != 0;
  if (!(repeat || openai) || p_.repeat_last_n == 0 || n_history == 0) return;
  size_t start = 0;
  if (p_.repeat_last_n > 0 && n_history > size_t(p_.repeat_last_n)) start = n_history - size_t(p_.repeat_last_n);
  for (size_t i = start; i < n_history; i++) {
    const int32_t id = history[i];
    if (id < 0 || id >= n_vocab_) {
      for (size_t j = start; j < i; j++) count_[size_t(history[j])] = 0;
      fail("sampler: history token ", id, " at position ", i, " is outside the vocabulary (", n_vocab_, ")");
    }
    ++count_[size_t(id)];
  }
  for (size_t i = start; i < n_history; i++) {
    uint32_t& count = count_[size_t(history[i])];
    if (count == 0) continue;  // this id was already penalised
    float& l = logits[history[i]];
    if (repeat) l = l <= 0 ? l * p_.repeat_penalty : l / p_.repeat_penalty;
    l -= float(count) * p_.frequency_penalty + p_.presence_penalty;
    count = 0;
  }
}

int32_t Sampler::sample(float* logits, const int32_t* history, size_t n_history) {
  for (const auto& [id, bias] : p_.logit_bias) logits[id] += bias;
  apply_penalty(logits, history, n_history);
  const size_t n = size_t(n_vocab_);

  // Argmax, lowest id on ties; NaN logits never win. Greedy is just this, and
  // the max also anchors the softmax below.
  int32_t best = 0;
  float max_l = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (logits[i] > max_l) { max_l = logits[i]; best = int32_t(i); }
  // Greedy; also a degenerate distribution (all -inf / NaN, or a +inf logit
  // that would turn the softmax into NaN) has only one sensible answer.
  if (p_.temp <= 0 || !std::isfinite(max_l)) return best;

  Candidate* c = cand_.data();
  for (size_t i = 0; i < n; i++) c[i] = {int32_t(i), std::isnan(logits[i]) ? -INFINITY : logits[i]};
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  size_t size = n, sorted = 0;
  auto ensure_sorted = [&](size_t m) {
    m = std::min(m, size);
    if (m <= sorted) return;
    if (m == size) std::sort(c, c + size, better);
    else std::partial_sort(c, c + m, c + size, better);
    sorted = m;
  };

  if (p_.top_k > 0 && size_t(p_.top_k) < size) {
    ensure_sorted(size_t(p_.top_k));
    size = sorted;
  }

  if (p_.top_p < 1.0f) {
    // Softmax at temperature 1 over the current candidates (llama.cpp applies
    // top-p before temperature, so the temperature does not move the cut).
    double sum = 0;
    for (size_t i = 0; i < size; i++) sum += std::exp(double(c[i].logit) - max_l);
    double cum = 0;
    for (size_t i = 0; i < size; i++) {
      if (i >= sorted) ensure_sorted(std::max<size_t>(64, 4 * sorted));
      cum += std::exp(double(c[i].logit) - max_l) / sum;
      if (cum >= double(p_.top_p)) { size = i + 1; break; }
    }
    sorted = std::min(sorted, size);
  }

  if (p_.min_p > 0.0f) {
    // p_i >= min_p * p_max  <=>  logit_i >= max_logit + log(min_p). The max is
    // never removed by the stages above, so it is still max_l.
    const double thr = double(max_l) + std::log(double(p_.min_p));
    size_t j = 0;
    for (size_t i = 0; i < size; i++)  // order-preserving, so a sorted prefix stays sorted
      if (double(c[i].logit) >= thr) c[j++] = c[i];
    size = std::max<size_t>(j, 1);
    sorted = std::min(sorted, size);
  }

  // Temperature, then draw. The weights overwrite the logits in place.
  const double inv_t = 1.0 / double(p_.temp);
  double sum = 0;
  for (size_t i = 0; i < size; i++) {
    double w = std::exp((double(c[i].logit) - max_l) * inv_t);
    c[i].logit = float(w);
    sum += c[i].logit;
  }
  const double r = next_unit() * sum;
  double acc = 0;
  for (size_t i = 0; i < size; i++) {
    acc += c[i].logit;
    if (r < acc) return c[i].id;
  }
  return c[size - 1].id;  // r landed on the rounding error at the very top
}

}  // namespace edgellm
