#include "server/completion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "base/error.h"
#include "runtime/chat_prompt.h"
#include "runtime/sampler.h"
#include "server/api_error.h"
#include "server/stop_text.h"

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

TokenLogprob logprob_of(const float* logits, int32_t n_vocab, int32_t id, int k) {
  float mx = -INFINITY;
  for (int32_t i = 0; i < n_vocab; ++i) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int32_t i = 0; i < n_vocab; ++i) sum += std::exp(double(logits[i]) - mx);
  const double lse = double(mx) + std::log(sum);
  TokenLogprob out;
  out.id = id;
  out.logprob = float(double(logits[id]) - lse);
  if (k > 0) {
    // k <= 20: a sorted insertion list beats sorting the vocabulary.
    auto& top = out.top;
    for (int32_t i = 0; i < n_vocab; ++i) {
      const float l = logits[i];
      if (int(top.size()) == k && !(l > top.back().second)) continue;
      auto at = std::find_if(top.begin(), top.end(), [&](const auto& e) { return l > e.second; });
      top.insert(at, {i, l});
      if (int(top.size()) > k) top.pop_back();
    }
    for (auto& [tid, v] : top) v = float(double(v) - lse);
  }
  return out;
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
  const int32_t n_vocab = int32_t(m.model->hparams().n_vocab);
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

  auto check = [&] {
    const Interrupt why = hooks.interrupted ? hooks.interrupted() : Interrupt::None;
    if (why == Interrupt::ClientGone) res.client_gone = true;
    else if (why != Interrupt::None) interrupted_error(why);
    return why == Interrupt::None;
  };
  auto forward = [&](const int32_t* ids, int64_t n) {
    SlotPool::StepLock lock(pool);
    const float* out = s.decode(ids, n);
    slot.cells.store(s.n_past(), std::memory_order_relaxed);
    return out;
  };

  // Prefill. Echo with log-probabilities needs the logits after every prompt
  // token: the prompt then goes one token per pass from an empty cache.
  const bool prompt_logprobs = r.echo && r.logprobs;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  const float* out = nullptr;
  if (prompt_logprobs) {
    s.truncate(0);
    res.prompt_logprobs.reserve(prompt.size());
    for (size_t i = 0; i < prompt.size(); ++i) {
      if (!check()) return res;
      if (i > 0) res.prompt_logprobs.push_back(logprob_of(out, n_vocab, prompt[i], r.top_logprobs));
      out = forward(&prompt[i], 1);
    }
  } else {
    PrefillPlan plan = plan_prefill(s.tokens(), prompt);
    res.n_cached = s.keep_prefix(int64_t(plan.keep), plan.feed);
    for (size_t i = 0; i < plan.feed.size(); i += size_t(s.n_batch())) {
      if (!check()) return res;
      const int64_t n = std::min<int64_t>(s.n_batch(), int64_t(plan.feed.size() - i));
      out = forward(plan.feed.data() + i, n);
    }
  }
  if (r.echo) {
    const std::string echoed = r.prompt_text ? *r.prompt_text : detokenize(*m.tok, prompt);
    res.text += echoed;
    if (!hooks.emit(echoed, {})) { res.client_gone = true; return res; }
  }

  SamplerParams sp = r.sampling;
  if (!r.seeded) sp.seed = std::random_device{}() ^ uint64_t(Clock::now().time_since_epoch().count());
  Sampler sampler(sp, n_vocab);
  std::vector<int32_t> history(prompt);
  history.reserve(prompt.size() + size_t(budget) + 1);
  Detokenizer detok(*m.tok);
  for (int32_t id : prompt) detok.push(id);  // the context SPM's leading-space rule needs
  StopText stop(r.stop);
  const std::vector<int32_t>& eog = m.tok->vocab().eog_ids;

  // Log-probabilities wait with their text: an entry goes out once the text
  // up to its token's end has, and never for a token wholly inside the text
  // a stop string cut off.
  struct Pending {
    TokenLogprob lp;
    size_t begin, end;  // the token's bytes in the detokenized stream
  };
  std::vector<Pending> pending;
  size_t produced = 0, sent = 0;  // detokenized bytes so far / released to the client
  std::vector<TokenLogprob> batch;
  // Sends text; with `cut` (a stop string or the end), the pending entries of
  // tokens that begin before the end of what is sent go too.
  auto release = [&](const std::string& text, bool cut) {
    sent += text.size();
    batch.clear();
    size_t n = 0;
    while (n < pending.size() && (pending[n].end <= sent || (cut && pending[n].begin < sent))) batch.push_back(pending[n++].lp);
    pending.erase(pending.begin(), pending.begin() + long(n));
    res.text += text;
    res.logprobs.insert(res.logprobs.end(), batch.begin(), batch.end());
    if (text.empty() && batch.empty()) return true;
    return hooks.emit(text, batch);
  };

  Clock::time_point last = Clock::now();
  while (res.n_generated < budget) {
    std::memcpy(logits.data(), out, sizeof(float) * size_t(n_vocab));
    const int32_t id = sampler.sample(logits.data(), history.data(), history.size());
    ++res.n_generated;
    const Clock::time_point now = Clock::now();
    if (res.n_generated == 1) metrics.ttft(std::chrono::duration<double>(now - arrival).count());
    else metrics.inter_token(std::chrono::duration<double>(now - last).count());
    last = now;
    if (std::find(eog.begin(), eog.end(), id) != eog.end()) {
      res.finish_reason = "stop";
      break;
    }
    history.push_back(id);
    const std::string piece = detok.push(id);
    if (r.logprobs) pending.push_back({logprob_of(out, n_vocab, id, r.top_logprobs), produced, produced + piece.size()});
    produced += piece.size();
    const std::string text = stop.push(piece);
    if (stop.stopped()) {
      if (!release(text, true)) res.client_gone = true;
      res.finish_reason = "stop";
      break;
    }
    if (!release(text, false)) { res.client_gone = true; break; }
    if (res.n_generated >= budget) break;
    if (!check()) break;
    out = forward(&id, 1);
  }
  if (!stop.stopped() && !res.client_gone) {
    std::string rest = stop.push(detok.flush());
    if (stop.stopped()) res.finish_reason = "stop";
    else rest += stop.flush();
    if (!release(rest, true)) res.client_gone = true;
  }
  metrics.tokens(res.n_prompt, res.n_cached, res.n_generated);
  if (res.client_gone) metrics.cancelled();
  return res;
}

}  // namespace edgellm::server
