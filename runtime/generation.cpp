#include "runtime/generation.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "runtime/chat_prompt.h"

namespace edgellm {

namespace {
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

Generation::Generation(Session& session, GenerationRequest request)
    : s_(session),
      r_(std::move(request)),
      n_vocab_(int32_t(session.model().hparams().n_vocab)),
      own_sampler_(r_.sampler ? nullptr : std::make_unique<Sampler>(r_.sampling, n_vocab_)),
      sampler_(r_.sampler ? r_.sampler : own_sampler_.get()),
      stop_(r_.stop_strings) {
  if (r_.prompt.empty() && r_.start_logits.empty())
    edgellm::fail("the prompt is empty and the model has no BOS token to start from");
  if (!r_.start_logits.empty() && (!r_.prompt.empty() || int64_t(r_.start_logits.size()) != n_vocab_))
    edgellm::fail("start_logits: ", r_.start_logits.size(), " values for a ", n_vocab_,
                  "-token vocabulary, with no prompt, are needed");
  if (r_.max_tokens < -1) edgellm::fail("n_predict ", r_.max_tokens, " is invalid (use -1 for unlimited, or >= 0)");
  if (r_.logprobs > 20) edgellm::fail("logprobs: at most 20 alternatives per token (", r_.logprobs, " asked)");
  for (int32_t id : r_.prompt)
    if (id < 0 || id >= n_vocab_)
      edgellm::fail("the prompt holds token id ", id, ", outside the vocabulary (", n_vocab_, " tokens)");
  if (r_.prompt_logprobs && !r_.reuse_prefix)
    edgellm::fail("prompt log-probabilities need the whole sequence as the prompt (reuse_prefix)");
  if (const Tokenizer* tok = s_.model().tokenizer()) detok_ = std::make_unique<Detokenizer>(*tok);
  // Sized once, so the steps never allocate for them (a history that
  // outgrows this halves in place).
  history_.reserve(std::max(size_t(s_.n_ctx()), r_.history_prefix.size() + r_.prompt.size()) + 1);
  history_.assign(r_.history_prefix.begin(), r_.history_prefix.end());
  history_.insert(history_.end(), r_.prompt.begin(), r_.prompt.end());
  if (r_.keep_logits) res_.last_logits.resize(size_t(n_vocab_));
  const int64_t most = r_.max_tokens >= 0 ? std::min(r_.max_tokens, s_.n_ctx()) : s_.n_ctx();
  res_.tokens.reserve(size_t(most) + 1);
  logits_.resize(size_t(n_vocab_));
  res_.n_prompt = int64_t(r_.prompt.size());
}

bool Generation::check_cancel() {
  if (cancel_.load(std::memory_order_relaxed)) return true;
  if (r_.cancelled && r_.cancelled()) cancel_.store(true, std::memory_order_relaxed);
  return cancel_.load(std::memory_order_relaxed);
}

bool Generation::room(int64_t need) {
  std::string what;
  const int64_t d = make_room(s_, r_.policy, need, &what);
  if (d > 0) {
    res_.n_dropped += d;
    ++res_.n_overflows;
    staged_.push_back({GenerationEvent::Info, 0, what, {}});
  } else if (d < 0) {
    res_.stop_reason = what;
  }
  return d >= 0;
}

void Generation::admit() {
  t_admit_ = Clock::now();
  if (r_.prompt_logprobs) {
    // The logits after every prompt token: one token per pass from an empty cache.
    s_.truncate(0);
    feed_ = r_.prompt;
  } else if (r_.reuse_prefix) {
    PrefillPlan plan = plan_prefill(s_.tokens(), r_.prompt);
    res_.n_cached = s_.keep_prefix(int64_t(plan.keep), plan.feed);
    feed_ = std::move(plan.feed);
  } else {
    feed_ = r_.prompt;
  }
  const int64_t n = int64_t(feed_.size());
  if (s_.n_past() + n > s_.n_ctx() && !room(n)) {
    error_ = "the prompt (" + std::to_string(n) + " tokens) does not fit the context (" +
             std::to_string(s_.n_ctx() - s_.n_past()) + " free of " + std::to_string(s_.n_ctx()) + "): " +
             res_.stop_reason;
    phase_ = Phase::Done;
    return;
  }
  staged_.push_back({GenerationEvent::Ready, 0, {}, {}});
  // The detokenizer sees the context (unprinted): e.g. SentencePiece drops
  // the dummy-prefix space only right after BOS.
  if (detok_) {
    for (int32_t id : s_.tokens()) detok_->push(id);
    for (int32_t id : feed_) detok_->push(id);
  }
  // Nothing to evaluate only when the caller brought the logits (a prompt
  // is never empty, and plan_prefill always feeds at least one id).
  if (feed_.empty()) {
    phase_ = Phase::Decode;
    t_first_ = Clock::now();
    sample(r_.start_logits.data());
    return;
  }
  phase_ = Phase::Prefill;
}

int64_t Generation::tokens_wanted(int64_t budget) const {
  if (phase_ == Phase::Decode) return budget > 0 ? 1 : 0;
  if (phase_ != Phase::Prefill) return 0;
  const int64_t left = int64_t(feed_.size() - fed_);
  return std::min({left, budget, r_.prompt_logprobs ? int64_t(1) : s_.n_batch()});
}

const int32_t* Generation::input() const { return phase_ == Phase::Decode ? &next_ : feed_.data() + fed_; }

void Generation::consumed(int64_t n, const float* logits) {
  if (phase_ == Phase::Decode) {
    if (last_pass_) {
      finish("length");
      return;
    }
    sample(logits);
    return;
  }
  fed_ += size_t(n);
  res_.n_evaluated += n;
  if (r_.prompt_logprobs && fed_ < feed_.size())
    res_.prompt_logprobs.push_back(logprob_of(logits, n_vocab_, feed_[fed_], r_.logprobs < 0 ? 0 : r_.logprobs));
  if (fed_ < feed_.size()) return;
  t_first_ = Clock::now();
  res_.prompt_ms = ms_between(t_admit_, t_first_);
  phase_ = Phase::Decode;
  sample(logits);
}

void Generation::sample(const float* logits) {
  // keep_logits: the logits a next call would start from, kept where the
  // generation ends with them unconsumed (the budget, a stop id).
  auto keep = [&] {
    if (r_.keep_logits) std::memcpy(res_.last_logits.data(), logits, sizeof(float) * size_t(n_vocab_));
  };
  if (r_.max_tokens >= 0 && res_.n_generated >= r_.max_tokens) {
    keep();
    finish("length");
    return;
  }
  std::memcpy(logits_.data(), logits, sizeof(float) * size_t(n_vocab_));
  if (r_.mask) r_.mask->apply(logits_.data(), n_vocab_);
  const int32_t id = sampler_->sample(logits_.data(), history_.data(), history_.size());
  if (r_.mask) r_.mask->accept(id);
  if (++res_.n_generated == 1) res_.ttft_ms = ms_between(t_admit_, Clock::now());
  if (std::find(r_.stop_ids.begin(), r_.stop_ids.end(), id) != r_.stop_ids.end()) {
    res_.stopped_by_eog = true;
    keep();
    finish("stop");
    return;
  }
  res_.tokens.push_back(id);
  staged_.push_back({GenerationEvent::Token, id, {}, {}});
  if (detok_) {
    const std::string piece = detok_->push(id);
    // Log-probabilities of the raw logits, before the penalties and the mask.
    if (r_.logprobs >= 0) pending_.push_back({logprob_of(logits, n_vocab_, id, r_.logprobs), produced_, produced_ + piece.size()});
    produced_ += piece.size();
    const std::string text = stop_.push(piece);
    if (stop_.stopped()) {
      release(text, true);
      res_.stopped_by_string = true;
      finish("stop");
      return;
    }
    release(text, false);
  }
  const bool budget_spent = r_.max_tokens >= 0 && res_.n_generated >= r_.max_tokens;
  if (budget_spent && !r_.evaluate_last) {
    finish("length");
    return;
  }
  if (s_.n_past() >= s_.n_ctx() && !room(1)) {
    res_.context_full = true;
    finish("length");
    return;
  }
  // Long runs (shift, window) outgrow the history: the penalty only looks
  // back repeat_last_n, so the oldest half goes (in place, no allocation).
  if (history_.size() == history_.capacity())
    history_.erase(history_.begin(), history_.begin() + long(history_.size() / 2));
  history_.push_back(id);
  next_ = id;
  last_pass_ = budget_spent;
}

void Generation::release(const std::string& text, bool cut) {
  sent_ += text.size();
  GenerationEvent ev{GenerationEvent::Text, 0, text, {}};
  size_t n = 0;
  while (n < pending_.size() && (pending_[n].end <= sent_ || (cut && pending_[n].begin < sent_)))
    ev.logprobs.push_back(std::move(pending_[n++].lp));
  pending_.erase(pending_.begin(), pending_.begin() + long(n));
  res_.text += text;
  res_.logprobs.insert(res_.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
  if (text.empty() && ev.logprobs.empty()) return;
  staged_.push_back(std::move(ev));
}

void Generation::finish(const char* reason) {
  if (phase_ == Phase::Done) return;
  res_.finish_reason = reason;
  // What the detokenizer and the stop strings still hold goes out, unless
  // a stop string already ended the text or the caller is gone.
  if (detok_ && !stop_.stopped() && !res_.cancelled) {
    std::string rest = stop_.push(detok_->flush());
    if (stop_.stopped()) {
      res_.finish_reason = "stop";
      res_.stopped_by_string = true;
    } else {
      rest += stop_.flush();
    }
    release(rest, true);
  }
  if (phase_ == Phase::Decode || phase_ == Phase::Prefill)
    res_.generate_ms = t_first_.time_since_epoch().count() ? ms_between(t_first_, Clock::now()) : 0;
  phase_ = Phase::Done;
}

void Generation::end_cancelled() {
  res_.cancelled = true;
  finish("cancelled");
}

void Generation::fail(const std::string& why) {
  error_ = why;
  res_.cancelled = true;  // nothing more is sent
  finish("cancelled");
}

}  // namespace edgellm
