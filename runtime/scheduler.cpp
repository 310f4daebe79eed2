#include "runtime/scheduler.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"

namespace edgellm {

Scheduler::Scheduler(Executor& executor, int64_t step_tokens)
    : ex_(executor),
      budget_(step_tokens > 0 && step_tokens < executor.n_batch() ? step_tokens : executor.n_batch()) {
  max_seq_ = std::max<int64_t>(executor.plan().settings.n_seq, 1);
  const size_t n = size_t(max_seq_);
  entries_.reserve(n);
  snapshot_.reserve(n);
  parts_.reserve(n);
  waits_.reserve(n);
  in_pass_.reserve(n);
}

Scheduler::Stats Scheduler::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

int Scheduler::active() const {
  std::lock_guard lk(mu_);
  return int(entries_.size());
}

// Delivers one batch of events to the request's callbacks; false when one
// of them asked to stop (the rest are dropped).
bool Scheduler::deliver(Generation& g, std::vector<GenerationEvent>& events) {
  const GenerationRequest& r = g.request();
  for (GenerationEvent& e : events) {
    switch (e.kind) {
      case GenerationEvent::Ready:
        if (r.on_ready) r.on_ready();
        break;
      case GenerationEvent::Info:
        if (r.on_event) r.on_event(e.text);
        break;
      case GenerationEvent::Token:
        if (r.on_token && !r.on_token(e.id)) return false;
        break;
      case GenerationEvent::Text:
        if (r.on_text && !r.on_text(e.text, e.logprobs)) return false;
        break;
    }
  }
  return true;
}

GenerationResult Scheduler::run(Session& session, GenerationRequest request) {
  if (&session.executor() != &ex_) fail("scheduler: the session is not a sequence of this scheduler's executor");
  Generation g(session, std::move(request));
  Entry entry{&g, {}, false};
  std::unique_lock lk(mu_);
  for (const Entry* e : entries_)
    if (&e->g->session() == &session) fail("scheduler: the session already runs a generation");
  if (int64_t(entries_.size()) >= max_seq_)
    fail("scheduler: ", entries_.size(), " generations run already, as many as the plan has sequences (--parallel)");
  entries_.push_back(&entry);
  std::vector<GenerationEvent> mine;
  bool stopped = false;  // a callback said stop
  try {
    for (;;) {
      if (!entry.out.empty()) {
        mine.swap(entry.out);
        entry.undelivered = 0;
        lk.unlock();
        if (!stopped && !deliver(g, mine)) {
          stopped = true;
          g.cancel();
        }
        mine.clear();
        lk.lock();
        continue;
      }
      if (entry.done) break;
      if (stepping_) {
        cv_.wait(lk);
        continue;
      }
      stepping_ = true;
      lk.unlock();
      struct Done {  // the flag drops and the others wake, however step() ends
        Scheduler& s;
        std::unique_lock<std::mutex>& lk;
        ~Done() {
          lk.lock();
          s.stepping_ = false;
          s.cv_.notify_all();
        }
      };
      bool ran = false;
      {
        Done done{*this, lk};
        ran = step();
      }
      // Nobody could run (every caller behind on its tokens): wait for one
      // of them rather than spin.
      if (!ran && entry.out.empty() && !entry.done) cv_.wait_for(lk, std::chrono::milliseconds(1));
    }
  } catch (...) {
    // A callback or a step threw: the entry leaves before g goes out of scope.
    if (!lk.owns_lock()) lk.lock();
    auto it = std::find(entries_.begin(), entries_.end(), &entry);
    if (it != entries_.end()) entries_.erase(it);
    throw;
  }
  lk.unlock();
  if (!g.error().empty()) fail(g.error());
  GenerationResult res = std::move(g.result());
  if (stopped) res.cancelled = true;
  return res;
}

bool Scheduler::step() {
  {
    std::lock_guard lk(mu_);
    snapshot_.assign(entries_.begin(), entries_.end());
    waits_.clear();
    for (const Entry* e : snapshot_) waits_.push_back(e->undelivered >= kRunAhead);
  }

  // Admission, cancellation; then the pass: every decoding sequence's next
  // token first, then prefill chunks in arrival order under the budget.
  for (Entry* e : snapshot_) {
    Generation& g = *e->g;
    if (g.phase() == Generation::Phase::Done) continue;
    if (g.check_cancel()) {
      g.end_cancelled();
      continue;
    }
    if (g.phase() == Generation::Phase::Admit) g.admit();
  }
  parts_.clear();
  in_pass_.clear();
  int64_t left = budget_;
  const int64_t max_parts = ex_.max_parts();
  // Decoders are scanned from a rotating start, so a batch too small for
  // everybody (more sequences than -b) still serves each in turn; prompts
  // in arrival order (the oldest finishes its prefill first).
  const size_t n_snap = snapshot_.size(), first = n_snap ? turn_++ % n_snap : 0;
  for (const Generation::Phase want : {Generation::Phase::Decode, Generation::Phase::Prefill}) {
    for (size_t k = 0; k < n_snap; ++k) {
      const size_t at = want == Generation::Phase::Decode ? (first + k) % n_snap : k;
      Generation& g = *snapshot_[at]->g;
      if (g.phase() != want || waits_[at] || int64_t(parts_.size()) >= max_parts) continue;
      const int64_t n = g.tokens_wanted(left);
      if (n < 1) continue;
      parts_.push_back({&g.session().kv(), g.input(), n});
      in_pass_.push_back(&g);
      left -= n;
    }
  }
  if (!parts_.empty()) {
    try {
      const float* logits = ex_.forward_batch(parts_.data(), int64_t(parts_.size()));
      const int64_t n_vocab = ex_.model().hparams().n_vocab;
      for (size_t j = 0; j < in_pass_.size(); ++j) in_pass_[j]->consumed(parts_[j].n, logits + int64_t(j) * n_vocab);
    } catch (const Error& err) {
      for (Generation* g : in_pass_) g->fail(err.what());
    }
  }
  std::lock_guard lk(mu_);
  if (!parts_.empty()) {
    ++stats_.passes;
    stats_.parts += parts_.size();
    stats_.tokens += uint64_t(budget_ - left);
    stats_.widest = std::max(stats_.widest, int64_t(parts_.size()));
  }
  for (Entry* e : snapshot_) {
    Generation& g = *e->g;
    std::vector<GenerationEvent>& staged = g.staged();
    for (GenerationEvent& ev : staged) {
      e->undelivered += ev.kind == GenerationEvent::Token ? 1 : 0;
      e->out.push_back(std::move(ev));
    }
    staged.clear();
    if (g.phase() == Generation::Phase::Done && !e->done) {
      e->done = true;
      entries_.erase(std::find(entries_.begin(), entries_.end(), e));
    }
  }
  cv_.notify_all();
  return !parts_.empty();
}

}  // namespace edgellm
