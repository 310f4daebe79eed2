// One generation request and the state of its sequence while it runs. A
// request is data: the prompt's ids, the sampling parameters, the stops, the
// limits, the context policy and the callbacks. Every front end (`edgellm
// run` / `chat` / `bench`, the server, the C API) describes what it wants
// this way and hands it to the Scheduler (runtime/scheduler.h), which runs
// the loop — prefill, sample, stop ids and stop strings (with hold-back),
// detokenize, log-probabilities, the overflow policy — once, for all of them.
//
// Threads: a Generation's state is touched only by the thread running the
// scheduler's step (one at a time); what it produces for the caller
// (Event) is handed over under the scheduler's lock and delivered to the
// callbacks on the caller's own thread (Scheduler::run).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/context_policy.h"
#include "runtime/logprobs.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/stop_text.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {

// The sampler chain's hook for constraints (grammars, JSON schemas): apply()
// sees the raw logits of every position before the sampler and may ban ids
// (set them to -inf); accept() is told the id that was sampled. Both run on
// the stepping thread, inside the step.
class TokenMask {
 public:
  virtual ~TokenMask() = default;
  virtual void apply(float* logits, int32_t n_vocab) = 0;
  virtual void accept(int32_t id) = 0;
};

struct GenerationRequest {
  // Evaluated from the session's n_past() (append: a chat's next turn), or,
  // with reuse_prefix, as the whole sequence: the session keeps the longest
  // prefix it shares with it and only the rest is evaluated.
  std::vector<int32_t> prompt;
  bool reuse_prefix = false;
  // Start from these logits instead of evaluating a prompt (the C API's
  // generate after a prefill); prompt must then be empty.
  std::vector<float> start_logits;
  // Ids before the prompt that the repetition penalty also looks back on
  // (the C API's context: every id it holds); the prompt always counts.
  std::vector<int32_t> history_prefix;
  // Keep the raw logits in GenerationResult::last_logits when the
  // generation ends on a stop id (the logits that chose it) or on the token
  // budget before sampling (those it would have sampled from).
  bool keep_logits = false;
  SamplerParams sampling;
  // Continue this sampler instead (its RNG stream: a chat's turns share one);
  // it must outlive the generation. sampling is then unused.
  Sampler* sampler = nullptr;
  int64_t max_tokens = -1;  // -1: until a stop or a full context
  std::vector<int32_t> stop_ids;        // end-of-generation ids (never sent)
  std::vector<std::string> stop_strings;  // text stops, held back until decided
  int logprobs = -1;         // -1: none; else 0..20 alternatives per token
  bool prompt_logprobs = false;  // the log-probability of every prompt token (from an empty cache)
  ContextPolicy policy;
  // Whether the last generated token is evaluated into the cache (the CLI's
  // sessions and chats keep it; the server saves the pass).
  bool evaluate_last = true;
  std::shared_ptr<TokenMask> mask;  // may be null

  // Callbacks, on the caller's thread, in order. Returning false stops the
  // generation (the id, or the text, was not wanted); with other sequences
  // running, a few more tokens may have been computed (at most
  // Scheduler::kRunAhead), and are dropped.
  std::function<void()> on_ready;  // the prompt was accepted (fits, or the policy made room)
  std::function<void(const std::string&)> on_event;  // what the policy did (one line)
  std::function<bool(int32_t id)> on_token;         // each generated id (not stop ids)
  // Text safe to show (after stop strings) and the log-probabilities of the
  // tokens it completes.
  std::function<bool(const std::string& text, std::span<const TokenLogprob> logprobs)> on_text;
  // Polled by the stepping thread before every step: true ends it (cancelled).
  std::function<bool()> cancelled;
};

struct GenerationResult {
  int64_t n_prompt = 0;     // prompt tokens (as given)
  int64_t n_cached = 0;     // of these, already in the cache (reuse_prefix)
  int64_t n_evaluated = 0;  // prompt tokens evaluated
  int64_t n_generated = 0;  // sampled ids, a stop id included
  double prompt_ms = 0, generate_ms = 0, ttft_ms = 0;
  std::string finish_reason = "length";  // "stop" | "length" | "cancelled"
  bool stopped_by_eog = false, stopped_by_string = false, context_full = false, cancelled = false;
  std::string stop_reason;  // set when the context stopped generation
  int64_t n_dropped = 0;    // positions the policy dropped (shift, window)
  int n_overflows = 0;      // times it did
  std::string text;         // everything sent
  std::vector<int32_t> tokens;  // generated ids (stop ids excluded)
  std::vector<TokenLogprob> logprobs;         // generated tokens whose text was sent
  std::vector<TokenLogprob> prompt_logprobs;  // one per prompt token after the first
  std::vector<float> last_logits;             // keep_logits
};

// What a step hands the caller.
struct GenerationEvent {
  enum Kind { Ready, Info, Token, Text } kind = Text;
  int32_t id = 0;
  std::string text;
  std::vector<TokenLogprob> logprobs;
};

class Generation {
 public:
  // Checks the request (sampling parameters, limits, ids): throws
  // edgellm::Error naming what is wrong. Nothing runs yet.
  Generation(Session& session, GenerationRequest request);

  enum class Phase { Admit, Prefill, Decode, Done };
  Phase phase() const { return phase_; }
  Session& session() { return s_; }

  // Stepping thread only. admit(): prefix reuse and room for the prompt; a
  // prompt that cannot fit finishes it with error(). tokens_wanted(): how
  // many ids it feeds in this step (at most `budget`), input() where they
  // are; consumed(): they were evaluated and `logits` (the last one's) is
  // what follows them.
  void admit();
  int64_t tokens_wanted(int64_t budget) const;
  const int32_t* input() const;
  void consumed(int64_t n, const float* logits);
  // The step could not run (an error in the batched pass).
  void fail(const std::string& why);
  void end_cancelled();  // ends it now, sending nothing more
  // Polled before each step: a cancel() or the request's predicate.
  bool check_cancel();
  void cancel() { cancel_.store(true, std::memory_order_relaxed); }

  // Events staged during a step (taken under the scheduler's lock).
  std::vector<GenerationEvent>& staged() { return staged_; }
  const GenerationResult& result() const { return res_; }
  GenerationResult& result() { return res_; }
  const std::string& error() const { return error_; }
  const GenerationRequest& request() const { return r_; }

 private:
  using Clock = std::chrono::steady_clock;
  void sample(const float* logits);
  bool room(int64_t need);
  void release(const std::string& text, bool cut);
  void finish(const char* reason);

  Session& s_;
  GenerationRequest r_;
  int32_t n_vocab_;
  Phase phase_ = Phase::Admit;
  std::unique_ptr<Sampler> own_sampler_;
  Sampler* sampler_;
  std::unique_ptr<Detokenizer> detok_;  // null without a tokenizer (ids only)
  StopText stop_;
  std::vector<int32_t> feed_;  // what the prompt leaves to evaluate
  size_t fed_ = 0;
  int32_t next_ = -1;  // the id the next decode step evaluates
  bool last_pass_ = false;  // that step is the last (evaluate_last)
  std::vector<int32_t> history_;  // repetition-penalty window
  std::vector<float> logits_;      // the sampler's copy
  // Log-probabilities wait with their text: an entry goes out once the text
  // up to its token's end has, never for a token wholly inside the text a
  // stop string cut off.
  struct Pending {
    TokenLogprob lp;
    size_t begin, end;  // the token's bytes in the detokenized stream
  };
  std::vector<Pending> pending_;
  size_t produced_ = 0, sent_ = 0;
  std::vector<GenerationEvent> staged_;
  GenerationResult res_;
  std::string error_;
  std::atomic<bool> cancel_{false};
  Clock::time_point t_admit_, t_first_;
};

}  // namespace edgellm
