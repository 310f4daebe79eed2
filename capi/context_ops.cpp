#include "capi/context_ops.h"

#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "runtime/session_file.h"

namespace edgellm::capi {

void build_session(edgellm_context& c, const MemoryPlan& p, int n_threads) {
  c.valve.reset();  // holds a reference to the session
  c.session.reset();  // free the old cache before the new one is allocated
  c.session = std::make_unique<Session>(*c.model, p, c.pin_threads);
  c.valve = std::make_unique<PressureValve>(*c.session, c.spill_path);
  c.n_threads = n_threads;
}

void apply_pressure(edgellm_context& c, int level) {
  if (level == EDGELLM_MEMORY_PRESSURE_MODERATE) {
    if (!c.session->executor().buffers_resident()) return;
    const uint64_t freed = c.session->plan().arena.total;
    c.session->executor().release_buffers();
    log(EDGELLM_LOG_INFO, "memory pressure (moderate): freed the activation buffers, " + format_mib(freed) +
                              "; they come back on the next call");
  } else if (level == EDGELLM_MEMORY_PRESSURE_CRITICAL) {
    const int64_t n = c.session->n_past();
    const uint64_t freed = c.valve->release();
    if (freed == 0) return;
    log(EDGELLM_LOG_INFO, "memory pressure (critical): spilled the KV cache (" + std::to_string(n) + " tokens) to " +
                              (c.spill_path.empty() ? std::string("an unlinked temporary file") : c.spill_path) +
                              " and freed " + format_mib(freed) + "; it comes back on the next call");
  }
}

void make_resident(edgellm_context& c) {
  if (!c.valve->released()) return;
  c.valve->restore();
  log(EDGELLM_LOG_INFO, "memory pressure over: the KV cache (" + std::to_string(c.session->n_past()) +
                            " tokens) is back from its spill file");
}

int threads_for(int thermal_state, int configured) {
  switch (thermal_state) {
    case EDGELLM_THERMAL_SERIOUS: return configured > 1 ? configured / 2 : 1;
    case EDGELLM_THERMAL_CRITICAL: return 1;
    default: return configured;
  }
}

const char* thermal_name(int state) {
  switch (state) {
    case EDGELLM_THERMAL_NOMINAL: return "nominal";
    case EDGELLM_THERMAL_FAIR: return "fair";
    case EDGELLM_THERMAL_SERIOUS: return "serious";
    case EDGELLM_THERMAL_CRITICAL: return "critical";
  }
  return "unknown";
}

void apply_thermal(edgellm_context& c) {
  const int state = c.thermal_state.load();
  const int want = threads_for(state, c.plan.settings.n_threads);
  if (want == c.n_threads) return;
  make_resident(c);
  // The thread pool's size is fixed at construction, and so is the matmul
  // scratch the plan sizes per thread: a new executor it is. The cache goes
  // through an unlinked temporary file so the old and the new one are never
  // allocated together (the device is hot, maybe short of memory too).
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> spill(nullptr, std::fclose);
  if (c.session->n_past() > 0) {
    spill.reset(std::tmpfile());
    if (!spill) fail("thermal state: cannot create a temporary file for the KV cache: ", std::strerror(errno));
    save_session(*c.session, spill.get());
  }
  PlanSettings s = c.plan.settings;
  s.n_threads = want;
  const int was = c.n_threads;
  build_session(c, plan_memory(*c.model, s), want);
  if (spill) load_session(*c.session, spill.get());
  log(EDGELLM_LOG_INFO, std::string("thermal state ") + thermal_name(state) + ": running on " +
                            std::to_string(want) + " thread" + (want == 1 ? "" : "s") + " (was " +
                            std::to_string(was) + ")");
}

bool make_room_for(edgellm_context& c, int64_t need, std::string* why) {
  std::string what;
  const int64_t dropped = make_room(*c.session, c.policy, need, &what);
  if (dropped < 0) {
    *why = what;
    return false;
  }
  if (dropped > 0) log(EDGELLM_LOG_INFO, what);
  return true;
}

bool ensure_logits(edgellm_context& c, int32_t* stop) {
  if (c.pending < 0) return true;
  make_resident(c);
  std::string why;
  if (c.session->n_past() >= c.session->n_ctx() && !make_room_for(c, 1, &why)) {
    *stop = EDGELLM_STOP_CONTEXT_FULL;
    log(EDGELLM_LOG_INFO, "generation stopped: " + why);
    return false;
  }
  const float* out = c.session->decode(&c.pending, 1);
  std::memcpy(c.logits.data(), out, c.logits.size() * sizeof(float));
  c.pending = -1;
  c.logits_ready = true;
  return true;
}

void reset(edgellm_context& c) {
  make_resident(c);
  c.session->truncate(0);
  c.pending = -1;
  c.logits_ready = false;
  if (c.model->tokenizer()) c.detok = std::make_unique<Detokenizer>(*c.model->tokenizer());
  c.n_prefilled = c.n_generated = 0;
  c.prefill_ms = c.generate_ms = 0;
}

}  // namespace edgellm::capi
