// Prefill and generation. The loop is runtime/generate.cpp's, step for step
// (the same sampler on the same logits, the same history for the penalty,
// the same context policy), so a stream through the C API is exactly what
// `edgellm run` prints for that prompt and seed. What differs is where it
// can stop: between any two tokens (cancel, the callback), with the last
// token handed out kept as `pending` and evaluated by whichever call comes
// next, so an interrupted generation costs no wasted forward pass and the
// conversation can go on from it.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "capi/context_ops.h"
#include "runtime/sampler.h"

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
    std::vector<int32_t> feed;
    feed.reserve(size_t(n_tokens) + 1);
    if (c.pending >= 0) feed.push_back(c.pending);
    feed.insert(feed.end(), tokens, tokens + n_tokens);
    Session& s = *c.session;
    const int64_t n = int64_t(feed.size());
    std::string why;
    if (s.n_past() + n > s.n_ctx() && !make_room_for(c, n, &why))
      refuse(EDGELLM_ERR_CONTEXT_FULL, "the tokens (", n, ") do not fit the context (", s.n_ctx() - s.n_past(),
             " free of ", s.n_ctx(), "): ", why);
    const auto t0 = std::chrono::steady_clock::now();
    c.logits_ready = false;
    c.pending = -1;
    for (int64_t i = 0; i < n; i += s.n_batch()) {
      if (c.cancel.exchange(false)) {
        c.prefill_ms += ms_since(t0);
        refuse(EDGELLM_ERR_CANCELLED, "cancelled after ", i, " of ", n, " tokens (those stay in the context)");
      }
      const int64_t b = std::min<int64_t>(s.n_batch(), n - i);
      const float* out = s.decode(feed.data() + i, b);
      c.n_prefilled += b;
      if (i + b == n) std::memcpy(c.logits.data(), out, c.logits.size() * sizeof(float));
    }
    c.logits_ready = true;
    c.prefill_ms += ms_since(t0);
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
    Sampler sampler(sampler_params(sp), int32_t(c.model->hparams().n_vocab));
    apply_thermal(c);
    make_resident(c);
    const std::vector<int32_t>& stop_ids = c.model->tokenizer()->vocab().eog_ids;
    load_history(c);

    const auto t0 = std::chrono::steady_clock::now();
    int32_t n_generated = 0, stop = EDGELLM_STOP_N_PREDICT;
    while (true) {
      if (sp.n_predict >= 0 && n_generated >= sp.n_predict) {
        stop = EDGELLM_STOP_N_PREDICT;
        break;
      }
      if (c.cancel.exchange(false)) {
        stop = EDGELLM_STOP_CANCELLED;
        break;
      }
      if (!ensure_logits(c, &stop)) break;
      std::memcpy(c.scratch.data(), c.logits.data(), c.logits.size() * sizeof(float));
      const int32_t id = sampler.sample(c.scratch.data(), c.history.data(), c.history.size());
      if (std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end()) {
        stop = EDGELLM_STOP_EOG;
        break;
      }
      // Handed out: the next call that needs logits evaluates it.
      c.pending = id;
      c.logits_ready = false;
      push_history(c, id);
      ++n_generated;
      ++c.n_generated;
      const std::string piece = c.detok->push(id);
      if (callback && callback(id, piece.c_str(), int32_t(piece.size()), user_data) != 0) {
        stop = EDGELLM_STOP_CALLBACK;
        break;
      }
    }
    const double ms = ms_since(t0);
    c.generate_ms += ms;
    if (result) {
      result->n_generated = n_generated;
      result->stop_reason = stop;
      result->n_past = int32_t(c.session->n_past() + (c.pending >= 0 ? 1 : 0));
      result->generate_ms = ms;
    }
  });
}
