// The calls any thread may make at any time: cancel, memory pressure and
// the thermal state. They only flip atomics of a live context (under the
// registry's lock, so the context cannot be freed meanwhile); the work
// happens in the context's own calls, or at once when none is running.
#include "capi/context_ops.h"

using namespace edgellm;
using namespace edgellm::capi;

namespace {
edgellm_status not_live(const char* fn, const edgellm_context* c) {
  return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE,
                c ? "not a live context (freed, or not a context handle)" : "the context is NULL");
}
}  // namespace

extern "C" EDGELLM_API edgellm_status edgellm_cancel(edgellm_context* context) {
  // Only a running call sees the flag: each prefill and generate clears it
  // as it starts, so a cancel sent when nothing runs does not stop the next.
  if (!with_live_context(context, [](edgellm_context& c) { c.cancel.store(true); }))
    return not_live("edgellm_cancel", context);
  return EDGELLM_OK;
}

extern "C" EDGELLM_API edgellm_status edgellm_memory_pressure(edgellm_context* context, int32_t level) {
  const char* fn = "edgellm_memory_pressure";
  if (!is_live(context, Kind::Context)) return not_live(fn, context);
  if (level < EDGELLM_MEMORY_PRESSURE_NONE || level > EDGELLM_MEMORY_PRESSURE_CRITICAL)
    return report(fn, &context->error, EDGELLM_ERR_INVALID_ARGUMENT,
                  "level " + std::to_string(level) +
                      " is not an EDGELLM_MEMORY_PRESSURE_* level (0 none, 1 moderate, 2 critical)");
  if (level == EDGELLM_MEMORY_PRESSURE_NONE) return EDGELLM_OK;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const edgellm_status st = try_acquire(context);
    if (st == EDGELLM_OK) {
      const edgellm_status r = guarded(fn, &context->error, EDGELLM_ERR_FAILED, [&] { apply_pressure(*context, level); });
      finish_call(context);
      return r;
    }
    if (st != EDGELLM_ERR_BUSY) return not_live(fn, context);
    // A call is running: it applies the request as it returns (finish_call).
    // If it returned just before the request was recorded, the second
    // attempt takes the context itself.
    if (!with_live_context(context, [level](edgellm_context& c) {
          int cur = c.pressure_request.load();
          while (cur < level && !c.pressure_request.compare_exchange_weak(cur, level)) {
          }
        }))
      return not_live(fn, context);
    if (context->busy.load()) {
      log(EDGELLM_LOG_INFO, "memory pressure: a call is running; its memory is freed when it returns");
      return EDGELLM_OK;
    }
  }
  return EDGELLM_OK;
}

extern "C" EDGELLM_API edgellm_status edgellm_set_thermal_state(edgellm_context* context, int32_t state) {
  const char* fn = "edgellm_set_thermal_state";
  if (!is_live(context, Kind::Context)) return not_live(fn, context);
  if (state < EDGELLM_THERMAL_NOMINAL || state > EDGELLM_THERMAL_CRITICAL)
    return report(fn, &context->error, EDGELLM_ERR_INVALID_ARGUMENT,
                  "state " + std::to_string(state) +
                      " is not an EDGELLM_THERMAL_* state (0 nominal, 1 fair, 2 serious, 3 critical)");
  int configured = 0;
  const bool live = with_live_context(context, [&](edgellm_context& c) {
    c.thermal_state.store(state);
    configured = c.plan.settings.n_threads;
  });
  if (!live) return not_live(fn, context);
  const int now = threads_for(state, configured);
  log(EDGELLM_LOG_INFO, std::string("thermal state ") + thermal_name(state) + ": " + std::to_string(now) + " of " +
                            std::to_string(configured) + " threads from the next call");
  return EDGELLM_OK;
}
