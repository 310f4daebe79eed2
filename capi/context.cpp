// Contexts: one conversation's KV cache and buffers, allocated at creation
// as the memory plan says; reset, info, and session files.
#include <cstring>

#include "capi/context_ops.h"
#include "capi/model_plan.h"
#include "runtime/session_file.h"

using namespace edgellm;
using namespace edgellm::capi;

extern "C" EDGELLM_API void edgellm_context_options_init(edgellm_context_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->n_ctx = 0;
  o->n_batch = 512;
  o->type_k = o->type_v = EDGELLM_KV_F16;
  o->overflow = EDGELLM_OVERFLOW_STOP;
  o->n_keep = 0;
  o->n_window = 0;
  o->spill_path = nullptr;
  o->swa_full = 0;
}

extern "C" EDGELLM_API edgellm_status edgellm_context_create(edgellm_model* model,
                                                            const edgellm_context_options* options,
                                                            edgellm_context** context) {
  if (context) *context = nullptr;
  return with_model("edgellm_context_create", model, [&](edgellm_model& h) {
    need(context, "context");
    const PlanSettings s = context_plan_settings(h, options);
    edgellm_context_options o;
    edgellm_context_options_init(&o);
    if (options) o = *options;  // checked by context_plan_settings
    const MemoryPlan plan = plan_or_refuse(*h.model, s);
    if (h.memory_limit > 0 && plan.footprint_bytes > h.memory_limit)
      refuse(EDGELLM_ERR_OUT_OF_MEMORY, "the context's plan needs a footprint of ", format_mib(plan.footprint_bytes),
             " (KV ", format_mib(plan.kv_bytes), ", buffers ", format_mib(plan.buffers_bytes + plan.overhead_bytes),
             "), over the model's memory_limit of ", format_mib(h.memory_limit), " by ",
             format_mib(plan.footprint_bytes - h.memory_limit),
             "; use a smaller n_ctx, a smaller n_batch or q8_0 KV types");
    auto c = std::make_unique<edgellm_context>();
    c->model = h.model;
    c->plan = plan;
    c->pin_threads = h.pin_threads;
    c->policy = context_policy(o);
    if (o.spill_path) c->spill_path = o.spill_path;
    build_session(*c, plan, plan.settings.n_threads);
    const size_t n_vocab = size_t(h.model->hparams().n_vocab);
    c->logits.assign(n_vocab, 0.0f);
    reset(*c);
    log(EDGELLM_LOG_INFO, "context: " + std::to_string(plan.n_ctx) + " tokens, batch " +
                              std::to_string(plan.n_batch) + ", KV " + format_mib(plan.kv_bytes) + " " +
                              type_name(uint32_t(s.type_k)) + ", " + std::to_string(c->n_threads) +
                              " threads, footprint " + format_mib(plan.footprint_bytes));
    register_handle(c.get(), Kind::Context);
    *context = c.release();
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_context_free(edgellm_context* context) {
  const char* fn = "edgellm_context_free";
  if (!context) return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE, "the context is NULL");
  switch (unregister_context(context)) {
    case EDGELLM_OK: break;
    case EDGELLM_ERR_BUSY:
      return report(fn, &context->error, EDGELLM_ERR_BUSY,
                    "a call is running on this context; cancel it and free the context when it returned");
    default:
      return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE,
                    "not a live context (freed already, or not a context handle)");
  }
  // Destructors do not throw here: the session frees memory, the valve
  // closes its temporary file.
  delete context;
  return EDGELLM_OK;
}

extern "C" EDGELLM_API void edgellm_context_info_init(edgellm_context_info* info) {
  if (!info) return;
  std::memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
}

extern "C" EDGELLM_API edgellm_status edgellm_context_info_get(edgellm_context* context, edgellm_context_info* info) {
  return with_context("edgellm_context_info_get", context, [&](edgellm_context& c) {
    need(info, "info");
    check_struct(info->struct_size, sizeof *info, "edgellm_context_info");
    info->n_ctx = int32_t(c.session->n_ctx());
    info->n_batch = int32_t(c.session->n_batch());
    info->n_past = int32_t(c.session->n_past() + (c.pending >= 0 ? 1 : 0));
    info->n_threads = c.n_threads;
    info->released = c.valve->released();
    info->kv_bytes = int64_t(c.session->kv_bytes());
    info->n_prefilled = c.n_prefilled;
    info->prefill_ms = c.prefill_ms;
    info->n_generated = c.n_generated;
    info->generate_ms = c.generate_ms;
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_reset(edgellm_context* context) {
  return with_context("edgellm_reset", context, [&](edgellm_context& c) { reset(c); });
}

extern "C" EDGELLM_API edgellm_status edgellm_session_save(edgellm_context* context, const char* path) {
  return with_context("edgellm_session_save", context, [&](edgellm_context& c) {
    need(path, "path");
    check_utf8(path, "path");
    make_resident(c);
    // The file holds evaluated rows: a generated token still pending is
    // evaluated first, so the file is the whole conversation.
    int32_t stop = 0;
    if (!ensure_logits(c, &stop))
      refuse(EDGELLM_ERR_CONTEXT_FULL, "the context is full: its last token cannot be evaluated to save it");
    save_session(*c.session, path);
    log(EDGELLM_LOG_INFO, "session saved: " + std::to_string(c.session->n_past()) + " tokens to " + path);
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_session_load(edgellm_context* context, const char* path) {
  return with_context("edgellm_session_load", context, [&](edgellm_context& c) {
    need(path, "path");
    check_utf8(path, "path");
    make_resident(c);
    reset(c);
    load_session(*c.session, path);  // leaves the session empty when it throws
    // Generation continues from the last token: it is evaluated again (as
    // `edgellm run --session` does) so its logits are exact.
    const std::vector<int32_t> held = c.session->tokens();
    if (!held.empty()) {
      // A sliding-window ring that cannot step back one token is fed again.
      const int64_t kept = c.session->truncate(int64_t(held.size()) - 1);
      for (int64_t i = kept; i < int64_t(held.size()) - 1; i += c.session->n_batch())
        c.session->decode(held.data() + i, std::min<int64_t>(c.session->n_batch(), int64_t(held.size()) - 1 - i));
      c.pending = held.back();
    }
    for (int32_t id : held)
      if (c.detok) c.detok->push(id);
    log(EDGELLM_LOG_INFO, "session loaded: " + std::to_string(held.size()) + " tokens from " + path);
  });
}
