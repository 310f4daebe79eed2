// Prefill and generation, as requests to the generation engine
// (runtime/scheduler.h) on the context's own executor: the same loop as
// `edgellm run` and the server (the same sampler on the same logits, the
// same context policy), so a stream through the C API is exactly what
// `edgellm run` prints for that prompt and seed. What the C API adds is
// where it can stop: between any two tokens (cancel, the callback), with
// the last token handed out kept as `pending` and evaluated by whichever
// call comes next, so an interrupted generation costs no wasted forward
// pass and the conversation can go on from it.
//
// Each context has its own executor (its own thread pool and buffers), so
// contexts on one model generate concurrently from different threads and
// cancelling one never touches another (tests/test_capi_concurrency.cpp).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "capi/context_ops.h"
#include "runtime/sampler.h"
#include "runtime/scheduler.h"

using namespace edgellm;
using namespace edgellm::capi;

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

SamplerParams sampler_params(const edgellm_sampling& s) {
  SamplerParams p;
  p.temp = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.min_p = s.min_p;
  p.repeat_penalty = s.repeat_penalty;
  p.repeat_last_n = s.repeat_last_n;
  p.seed = s.seed;
  try {
    Sampler::validate(p);
  } catch (const Error& e) {
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, e.what());
  }
  return p;
}
}  // namespace

extern "C" EDGELLM_API void edgellm_sampling_init(edgellm_sampling* s) {
  if (!s) return;
  std::memset(s, 0, sizeof *s);
  const SamplerParams d;  // the runtime's defaults, which are the CLI's
  s->struct_size = sizeof *s;
  s->temperature = d.temp;
  s->top_k = d.top_k;
  s->top_p = d.top_p;
  s->min_p = d.min_p;
  s->repeat_penalty = d.repeat_penalty;
  s->repeat_last_n = d.repeat_last_n;
  s->n_predict = -1;
  s->seed = d.seed;
}

extern "C" EDGELLM_API void edgellm_generate_result_init(edgellm_generate_result* r) {
  if (!r) return;
  std::memset(r, 0, sizeof *r);
  r->struct_size = sizeof *r;
}

namespace {
// One request on the context's own executor: the engine's loop, delivered
// on this thread.
GenerationResult run_on_context(edgellm_context& c, GenerationRequest r) {
  r.policy = c.policy;
  r.on_event = [](const std::string& what) { log(EDGELLM_LOG_INFO, what); };
  // Another thread's edgellm_cancel: seen before the next step.
  r.cancelled = [&c] { return c.cancel.exchange(false); };
  Scheduler one(c.session->executor());
  return one.run(*c.session, std::move(r));
}
}  // namespace

extern "C" EDGELLM_API edgellm_status edgellm_prefill(edgellm_context* context, const int32_t* tokens,
                                                     int32_t n_tokens) {
  return with_context("edgellm_prefill", context, [&](edgellm_context& c) {
    c.cancel.store(false);
    need_size(n_tokens, "n_tokens");
    if (n_tokens == 0) return;
    need(tokens, "tokens");
    const int64_t n_vocab = c.model->hparams().n_vocab;
    for (int32_t i = 0; i < n_tokens; ++i)
      if (tokens[i] < 0 || tokens[i] >= n_vocab)
        refuse(EDGELLM_ERR_INVALID_ARGUMENT, "tokens[", i, "] = ", tokens[i], " is not a token id (the vocabulary has ",
               n_vocab, ")");
    apply_thermal(c);
    make_resident(c);
    // The pending token (the last one generated) goes first.
    GenerationRequest r;
    r.prompt.reserve(size_t(n_tokens) + 1);
    if (c.pending >= 0) r.prompt.push_back(c.pending);
    r.prompt.insert(r.prompt.end(), tokens, tokens + n_tokens);
    Session& s = *c.session;
    const int64_t n = int64_t(r.prompt.size());
    std::string why;
    if (s.n_past() + n > s.n_ctx() && !make_room_for(c, n, &why))
      refuse(EDGELLM_ERR_CONTEXT_FULL, "the tokens (", n, ") do not fit the context (", s.n_ctx() - s.n_past(),
             " free of ", s.n_ctx(), "): ", why);
    // Evaluate only: no token is sampled, the last logits are kept.
    r.max_tokens = 0;
    r.keep_logits = true;
    r.evaluate_last = false;
    const auto t0 = std::chrono::steady_clock::now();
    c.logits_ready = false;
    c.pending = -1;
    const GenerationResult res = run_on_context(c, std::move(r));
    c.n_prefilled += res.n_evaluated;
    c.prefill_ms += ms_since(t0);
    if (res.cancelled)
      refuse(EDGELLM_ERR_CANCELLED, "cancelled after ", res.n_evaluated, " of ", n, " tokens (those stay in the context)");
    std::memcpy(c.logits.data(), res.last_logits.data(), c.logits.size() * sizeof(float));
    c.logits_ready = true;
    // The detokenizer sees the prompt (unprinted), so the first piece after
    // it is spaced as `edgellm run` spaces it.
    if (c.detok)
      for (int32_t i = 0; i < n_tokens; ++i) c.detok->push(tokens[i]);
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_generate(edgellm_context* context, const edgellm_sampling* sampling,
                                                      edgellm_token_callback callback, void* user_data,
                                                      edgellm_generate_result* result) {
  return with_context("edgellm_generate", context, [&](edgellm_context& c) {
    c.cancel.store(false);
    edgellm_sampling sp;
    edgellm_sampling_init(&sp);
    if (sampling) {
      check_struct(sampling->struct_size, sizeof sp, "edgellm_sampling");
      sp = *sampling;
    }
    if (result) check_struct(result->struct_size, sizeof *result, "edgellm_generate_result");
    if (sp.n_predict < -1)
      refuse(EDGELLM_ERR_INVALID_ARGUMENT, "n_predict ", sp.n_predict, " is invalid (-1 for no limit, or >= 0)");
    if (!c.logits_ready && c.pending < 0)
      refuse(EDGELLM_ERR_FAILED, "nothing to generate from: prefill a prompt first (at least BOS)");
    if (!c.detok) refuse(EDGELLM_ERR_FAILED, "the model has no usable tokenizer: ", c.model->tokenizer_error());
    GenerationRequest r;
    r.sampling = sampler_params(sp);
    apply_thermal(c);
    make_resident(c);

    const auto t0 = std::chrono::steady_clock::now();
    int32_t n_generated = 0, stop = EDGELLM_STOP_N_PREDICT;
    bool callback_stop = false;
    auto finish = [&] {
      const double ms = ms_since(t0);
      c.generate_ms += ms;
      if (result) {
        result->n_generated = n_generated;
        result->stop_reason = stop;
        result->n_past = int32_t(c.session->n_past() + (c.pending >= 0 ? 1 : 0));
        result->generate_ms = ms;
      }
    };
    if (sp.n_predict == 0) return finish();
    // The engine samples from the logits a prefill left, or evaluates the
    // id handed out last (pending) first; every id the context holds counts
    // for the repetition penalty.
    const int32_t was_pending = c.pending;
    r.history_prefix = c.session->tokens();
    if (c.logits_ready) {
      r.start_logits = c.logits;
    } else {
      std::string why;
      if (c.session->n_past() >= c.session->n_ctx() && !make_room_for(c, 1, &why)) {
        stop = EDGELLM_STOP_CONTEXT_FULL;
        log(EDGELLM_LOG_INFO, "generation stopped: " + why);
        return finish();
      }
      r.prompt = {c.pending};
    }
    r.max_tokens = sp.n_predict;
    r.stop_ids = c.model->tokenizer()->vocab().eog_ids;
    r.evaluate_last = false;  // the last id handed out stays pending, evaluated by whichever call comes next
    r.keep_logits = true;
    r.on_token = [&](int32_t id) {
      ++n_generated;
      ++c.n_generated;
      const std::string piece = c.detok->push(id);
      if (callback && callback(id, piece.c_str(), int32_t(piece.size()), user_data) != 0) {
        callback_stop = true;
        return false;
      }
      return true;
    };
    GenerationResult res;
    try {
      res = run_on_context(c, std::move(r));
    } catch (...) {
      c.pending = was_pending;
      throw;
    }
    if (res.stopped_by_eog) {
      // Every id before the end-of-generation one was evaluated: its logits
      // are where a next call starts.
      stop = EDGELLM_STOP_EOG;
      std::memcpy(c.logits.data(), res.last_logits.data(), c.logits.size() * sizeof(float));
      c.logits_ready = true;
      c.pending = -1;
    } else if (!res.tokens.empty()) {
      c.pending = res.tokens.back();
      c.logits_ready = false;
    } else if (res.n_evaluated == 0) {
      c.pending = was_pending;  // stopped before anything ran
    }
    if (!res.stopped_by_eog) {
      if (callback_stop) stop = EDGELLM_STOP_CALLBACK;
      else if (res.cancelled) stop = EDGELLM_STOP_CANCELLED;
      else if (res.context_full) {
        stop = EDGELLM_STOP_CONTEXT_FULL;
        log(EDGELLM_LOG_INFO, "generation stopped: " + res.stop_reason);
      }
    }
    finish();
  });
}
