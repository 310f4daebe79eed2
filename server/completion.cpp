#include "server/completion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "base/error.h"
#include "runtime/chat_prompt.h"
#include "runtime/sampler.h"
#include "server/api_error.h"
#include "runtime/scheduler.h"

namespace edgellm::server {

std::vector<int32_t> prompt_ids(const ServedModel& m, const CompletionRequest& r) {
  try {
    if (r.chat) {
      ChatPromptOptions opt;
      opt.parse_special_in_messages = false;  // a client's text never becomes a control token
      opt.extra = r.template_extra;
      return build_chat_prompt(*m.tok, m.template_text, r.messages, true, opt).tokens;
    }
    if (r.prompt_text) {
      const Vocab& v = m.tok->vocab();
      return m.tok->encode(*r.prompt_text, v.add_bos, /*parse_special=*/true);
    }
    return r.prompt_ids;
  } catch (const Error& e) {
    throw ApiError(400, std::string(r.chat ? "cannot apply the chat template: " : "cannot tokenize the prompt: ") + e.what(),
                   r.chat ? "messages" : "prompt");
  }
}

namespace {

[[noreturn]] void interrupted_error(Interrupt why) {
  if (why == Interrupt::TimedOut)
    throw ApiError(503, "the request took longer than the server's --timeout; ask for fewer tokens or raise --timeout",
                   "", "timeout_error", "timeout");
  throw ApiError(503, "the server is shutting down", "", "unavailable_error", "shutting_down");
}

}  // namespace

CompletionResult run_completion(SlotPool& pool, Slot& slot, const ServedModel& m, const CompletionRequest& r,
                                const std::vector<int32_t>& prompt, Clock::time_point arrival,
                                const CompletionHooks& hooks, Metrics& metrics) {
  Session& s = *slot.session;
  const int64_t n_ctx = s.n_ctx();
  CompletionResult res;
  res.n_prompt = int64_t(prompt.size());
  if (prompt.empty()) throw ApiError(400, "the prompt is empty", r.chat ? "messages" : "prompt");
  if (res.n_prompt >= n_ctx)
    throw ApiError(400, "the prompt is " + std::to_string(prompt.size()) + " tokens and the context is " +
                            std::to_string(n_ctx) + " (room for the prompt and at least one generated token is "
                            "needed); shorten the prompt or start the server with a larger -c",
                   r.chat ? "messages" : "prompt", "", "context_length_exceeded");
  int64_t budget = n_ctx - res.n_prompt;
  if (r.max_tokens) budget = std::min(budget, *r.max_tokens);
  if (m.max_tokens_cap > 0) budget = std::min(budget, m.max_tokens_cap);

  if (r.echo) {
    const std::string echoed = r.prompt_text ? *r.prompt_text : detokenize(*m.tok, prompt);
    res.text += echoed;
    if (!hooks.emit(echoed, {})) {
      res.client_gone = true;
      return res;
    }
  }

  GenerationRequest g;
  g.prompt = prompt;
  g.reuse_prefix = true;
  g.prompt_logprobs = r.echo && r.logprobs;
  g.sampling = r.sampling;
  if (!r.seeded) g.sampling.seed = std::random_device{}() ^ uint64_t(Clock::now().time_since_epoch().count());
  g.max_tokens = budget;
  g.stop_ids = m.tok->vocab().eog_ids;
  g.stop_strings = r.stop;
  g.logprobs = r.logprobs ? r.top_logprobs : -1;
  g.evaluate_last = false;  // the slot's cache need not hold the reply's last id
  // Polled by whichever thread steps the batch: a client that went away, a
  // timeout or the shutdown ends this sequence, and only this one.
  std::atomic<int> why{int(Interrupt::None)};
  g.cancelled = [&] {
    const Interrupt i = hooks.interrupted ? hooks.interrupted() : Interrupt::None;
    if (i != Interrupt::None) why.store(int(i));
    return i != Interrupt::None;
  };
  Clock::time_point last = arrival;
  int64_t n_tokens = 0;
  g.on_token = [&](int32_t) {
    const Clock::time_point now = Clock::now();
    if (++n_tokens == 1) metrics.ttft(std::chrono::duration<double>(now - arrival).count());
    else metrics.inter_token(std::chrono::duration<double>(now - last).count());
    last = now;
    return true;
  };
  bool gone = false;
  g.on_text = [&](const std::string& text, std::span<const TokenLogprob> lps) {
    if (hooks.emit(text, lps)) return true;
    gone = true;
    return false;
  };
  GenerationResult out;
  try {
    out = pool.scheduler().run(s, std::move(g));
  } catch (const Error& e) {
    slot.cells.store(s.n_past(), std::memory_order_relaxed);
    throw ApiError(400, e.what(), r.chat ? "messages" : "prompt");
  }
  slot.cells.store(s.n_past(), std::memory_order_relaxed);
  res.n_cached = out.n_cached;
  res.n_generated = out.n_generated;
  res.text += out.text;
  res.finish_reason = out.finish_reason == "stop" ? "stop" : "length";
  res.logprobs = std::move(out.logprobs);
  res.prompt_logprobs = std::move(out.prompt_logprobs);
  if (gone) res.client_gone = true;
  if (out.cancelled && !gone) {
    const Interrupt i = Interrupt(why.load());
    if (i == Interrupt::ClientGone) res.client_gone = true;
    else if (i != Interrupt::None) interrupted_error(i);
  }
  metrics.tokens(res.n_prompt, res.n_cached, res.n_generated);
  if (res.client_gone) metrics.cancelled();
  return res;
}

}  // namespace edgellm::server
