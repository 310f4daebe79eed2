// The generation engine's scheduler: continuous batching over every
// sequence of one executor. Each step is one forward pass that carries the
// next token of every decoding sequence and, under the step's token budget,
// chunks of the prompts still being prefilled (oldest first), so that one
// read of the weights serves all of them: decode is memory-bound, and N
// sequences cost little more than one. A long prompt never stalls running
// streams for more than one chunk.
//
// There is no scheduler thread: run() is called from each requester's own
// thread (an HTTP handler, a C API call, the CLI), and whichever of them
// finds no step running runs the next one, for everybody. A request's
// callbacks are delivered on its own thread, between steps, so a slow
// client delays only itself. One sequence alone steps on its own thread with
// no hand-over at all (the CLI's case).
//
// Memory: the batch buffers are the executor's (its plan counts n_seq
// sequences and n_batch tokens); the step's part lists are sized here once.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/executor.h"
#include "runtime/generation.h"
#include "runtime/session.h"

namespace edgellm {

class Scheduler {
 public:
  // step_tokens: the most tokens one step evaluates (-b); 0 or more than the
  // executor's batch: its n_batch (-ub, the pass's size).
  explicit Scheduler(Executor& executor, int64_t step_tokens = 0);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs the request on `session` (a sequence of this scheduler's executor,
  // held by this caller alone) to its end, batched with whatever else runs,
  // delivering the callbacks on this thread. Thread-safe: call it from as
  // many threads as there are sequences. Throws edgellm::Error for a bad
  // request or a prompt the context cannot hold (nothing was evaluated then).
  GenerationResult run(Session& session, GenerationRequest request);

  // A sequence whose caller has not taken this many tokens yet sits out the
  // next steps: a slow client delays only itself, and what a caller that
  // stops reading never sees stays bounded.
  static constexpr int64_t kRunAhead = 8;

  int active() const;  // generations running or waiting for their first step
  // Counters since construction: forward passes, sequence-parts they
  // carried, tokens evaluated, and the most parts one pass carried.
  struct Stats {
    uint64_t passes = 0, parts = 0, tokens = 0;
    int64_t widest = 0;
  };
  Stats stats() const;
  int64_t step_tokens() const { return budget_; }
  Executor& executor() { return ex_; }

 private:
  bool step();  // one batched pass (false: nothing could run); one thread at a time
  bool deliver(Generation& g, std::vector<GenerationEvent>& events);

  Executor& ex_;
  int64_t budget_;
  int64_t max_seq_;  // the plan's sequences: at most this many generations at once
  size_t turn_ = 0;  // where the step's scan starts (rotates: no sequence waits for ever)
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Guarded by mu_: the generations taking part, what each has for its
  // caller, and whether a step runs now.
  struct Entry {
    Generation* g;
    std::vector<GenerationEvent> out;
    int64_t undelivered = 0;  // tokens in `out`
    bool done = false;
  };

  std::vector<Entry*> entries_;
  bool stepping_ = false;
  Stats stats_;
  // The stepping thread's own lists, sized once.
  std::vector<Entry*> snapshot_;
  std::vector<uint8_t> waits_;  // per snapshot entry: its caller is kRunAhead tokens behind
  std::vector<Executor::Part> parts_;
  std::vector<Generation*> in_pass_;
};

}  // namespace edgellm
