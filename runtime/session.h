// A session: one conversation over a loaded model, the common case of one
// KvCache on its own Executor. Built from a MemoryPlan (or from settings,
// through plan_memory), which both allocate verbatim at construction;
// decode() never allocates. For several sequences over one executor (server
// slots), construct a Session per sequence on a shared Executor.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/executor.h"
#include "runtime/kv_cache.h"
#include "runtime/memory_plan.h"

namespace edgellm {

struct SessionConfig {
  int64_t n_ctx = 0;      // 0: the model's training context, capped at 4096
  int64_t n_batch = 512;  // tokens per forward pass during prefill
  int n_threads = 0;      // 0: hardware concurrency
  bool pin_threads = false;  // bind thread i to the i-th allowed CPU (ThreadPool)
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;  // KV cache element types
  bool logits_all = false;  // room for logits of every token of a batch (eval), not just the last
  bool swa_full = false;    // sliding-window layers keep the whole context (PlanSettings::swa_full)
  // The plan settings these stand for, for a model loaded with the given residency.
  PlanSettings plan_settings(const Model& model) const;
};

class Session {
 public:
  // Plans from cfg and owns its executor.
  Session(const Model& model, const SessionConfig& cfg);
  // Owns an executor built from this plan (e.g. one checked against a memory limit).
  Session(const Model& model, const MemoryPlan& plan, bool pin_threads = false);
  // A sequence on a shared executor (whose plan counts it among n_seq).
  explicit Session(Executor& executor);
  ~Session();

  // Runs n tokens (n <= n_batch) at positions n_past()..n_past()+n-1, appends
  // their keys/values to the cache and returns logits: for the last token only
  // ([n_vocab]) or, with all_logits (needs SessionConfig::logits_all), for each
  // of the n tokens ([n][n_vocab]). The pointer stays valid until the next call.
  const float* decode(const int32_t* tokens, int64_t n, bool all_logits = false) {
    return ex_->forward(kv_, tokens, n, all_logits);
  }

  int64_t n_past() const { return kv_.size(); }
  int64_t n_ctx() const { return kv_.n_ctx(); }
  int64_t n_batch() const { return ex_->n_batch(); }
  const Model& model() const { return ex_->model(); }
  // Forget cached positions >= n (n = 0 resets the conversation); returns
  // how many stay: n, or 0 when a sliding-window layer no longer holds the
  // window before n (KvCache::truncate): the caller feeds from there.
  int64_t truncate(int64_t n) { return kv_.truncate(n); }
  // Truncates to n and puts back in front of `feed` the cached ids that could
  // not stay (none, or those after what truncate() kept), so that feeding
  // `feed` leaves the cache standing for its first n ids followed by the
  // original feed. Returns how many positions stayed.
  int64_t keep_prefix(int64_t n, std::vector<int32_t>& feed);
  // The ids the cache holds (one per cached position).
  const std::vector<int32_t>& tokens() const { return kv_.tokens(); }
  KvCache& kv() { return kv_; }
  Executor& executor() { return *ex_; }
  const MemoryPlan& plan() const { return ex_->plan(); }
  ThreadPool& pool() { return ex_->pool(); }
  size_t kv_bytes() const { return kv_.bytes(); }
  size_t buffer_bytes() const { return ex_->plan().arena.total; }

 private:
  std::unique_ptr<Executor> owned_;
  Executor* ex_;
  KvCache kv_;
};

}  // namespace edgellm
