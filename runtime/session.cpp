#include "runtime/session.h"

#include "base/cpu_affinity.h"

#include <algorithm>
#include <thread>

namespace edgellm {

PlanSettings SessionConfig::plan_settings(const Model& model) const {
  PlanSettings s;
  s.n_ctx = n_ctx;
  s.n_batch = n_batch;
  s.type_k = type_k;
  s.type_v = type_v;
  s.n_seq = 1;
  s.n_threads = n_threads > 0 ? n_threads : default_thread_count();
  s.logits_all = logits_all;
  s.swa_full = swa_full;
  s.load_mode = model.file().residency();  // already loaded: what it is
  return s;
}

Session::Session(const Model& model, const SessionConfig& cfg)
    : Session(model, plan_memory(model, cfg.plan_settings(model)), cfg.pin_threads) {}

Session::Session(const Model& model, const MemoryPlan& plan, bool pin_threads)
    : owned_(std::make_unique<Executor>(model, plan, pin_threads)),
      ex_(owned_.get()),
      kv_(plan, model.hparams()) {}

Session::Session(Executor& executor)
    : ex_(&executor), kv_(executor.plan(), executor.model().hparams()) {}

Session::~Session() = default;

int64_t Session::keep_prefix(int64_t n, std::vector<int32_t>& feed) {
  const int64_t kept = kv_.reusable(n);
  if (kept < n) feed.insert(feed.begin(), kv_.tokens().begin() + kept, kv_.tokens().begin() + n);
  return kv_.truncate(n);
}

}  // namespace edgellm
