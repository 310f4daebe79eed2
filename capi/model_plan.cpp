#include "capi/model_plan.h"

#include "base/error.h"

namespace edgellm::capi {

PlanSettings default_plan_settings(const edgellm_model& h) {
  PlanSettings s;
  s.n_seq = 1;
  s.n_threads = h.n_threads;
  if (h.model) s.load_mode = h.model->file().residency();  // loaded: what it is
  return s;
}

namespace {
GgmlType kv_type(int32_t t, const char* name) {
  switch (t) {
    case EDGELLM_KV_F32: return GgmlType::F32;
    case EDGELLM_KV_F16: return GgmlType::F16;
    case EDGELLM_KV_Q4_0: return GgmlType::Q4_0;
    case EDGELLM_KV_Q8_0: return GgmlType::Q8_0;
  }
  refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, " ", t,
         " is not a KV cache type (EDGELLM_KV_F32 0, EDGELLM_KV_F16 1, EDGELLM_KV_Q4_0 2, EDGELLM_KV_Q8_0 8)");
}
}  // namespace

ContextPolicy context_policy(const edgellm_context_options& o) {
  ContextPolicy p;
  switch (o.overflow) {
    case EDGELLM_OVERFLOW_STOP: p.mode = CtxOverflow::Stop; break;
    case EDGELLM_OVERFLOW_SHIFT: p.mode = CtxOverflow::Shift; break;
    case EDGELLM_OVERFLOW_WINDOW: p.mode = CtxOverflow::Window; break;
    default:
      refuse(EDGELLM_ERR_INVALID_ARGUMENT, "overflow ", o.overflow,
             " is not EDGELLM_OVERFLOW_STOP (0), EDGELLM_OVERFLOW_SHIFT (1) or EDGELLM_OVERFLOW_WINDOW (2)");
  }
  need_size(o.n_keep, "n_keep");
  need_size(o.n_window, "n_window");
  p.keep = o.n_keep;
  p.window = o.n_window;
  return p;
}

PlanSettings context_plan_settings(const edgellm_model& h, const edgellm_context_options* options) {
  edgellm_context_options o;
  edgellm_context_options_init(&o);
  if (options) {
    check_struct(options->struct_size, sizeof o, "edgellm_context_options");
    o = *options;
  }
  need_size(o.n_ctx, "n_ctx");
  if (o.n_batch < 1) refuse(EDGELLM_ERR_INVALID_ARGUMENT, "n_batch ", o.n_batch, " must be at least 1");
  if (o.n_ctx > h.model->hparams().n_ctx_train)
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, "n_ctx ", o.n_ctx, " is over the model's training context of ",
           h.model->hparams().n_ctx_train, " tokens");
  context_policy(o);  // checked here too, so a plan query refuses what create would
  if (o.spill_path) check_utf8(o.spill_path, "spill_path");
  PlanSettings s = default_plan_settings(h);
  s.n_ctx = o.n_ctx;
  s.n_batch = o.n_batch;
  s.type_k = kv_type(o.type_k, "type_k");
  s.type_v = kv_type(o.type_v, "type_v");
  if (o.swa_full != 0 && o.swa_full != 1)
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, "swa_full ", o.swa_full, " must be 0 (a ring on sliding-window layers) or 1 (the whole context)");
  s.swa_full = o.swa_full == 1;
  return s;
}

MemoryPlan plan_or_refuse(const Model& m, const PlanSettings& s) {
  try {
    return plan_memory(m, s);
  } catch (const Error& e) {
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, e.what());
  }
}

gguf::Residency choose_residency(const Model& probe, PlanSettings s, uint64_t limit) {
  if (s.load_mode != gguf::Residency::Auto) return s.load_mode;
  s.load_mode = resolve_auto_residency(probe.weight_bytes());
  if (limit > 0 && s.load_mode == gguf::Residency::HugePages && plan_memory(probe, s).footprint_bytes > limit / 4 * 3)
    return gguf::Residency::Mmap;
  return s.load_mode;
}

}  // namespace edgellm::capi
