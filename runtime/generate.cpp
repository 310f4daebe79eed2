#include "runtime/generate.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/error.h"

namespace edgellm {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

GenerateStats generate(Session& s, Sampler& sampler, const std::vector<int32_t>& prompt,
                       const GenerateParams& p, const std::function<bool(int32_t)>& on_token) {
  GenerateStats st;
  if (prompt.empty()) fail("the prompt is empty and the model has no BOS token to start from");
  if (p.n_predict < -1) fail("n_predict ", p.n_predict, " is invalid (use -1 for unlimited, or >= 0)");
  auto room = [&](int64_t need) {
    std::string what;
    const int64_t d = make_room(s, p.policy, need, &what);
    if (d > 0) {
      st.n_dropped += d;
      ++st.n_overflows;
      if (p.on_event) p.on_event(what);
    } else if (d < 0) {
      st.stop_reason = what;
    }
    return d >= 0;
  };
  if (s.n_past() + int64_t(prompt.size()) > s.n_ctx() && !room(int64_t(prompt.size())))
    fail("the prompt (", prompt.size(), " tokens) does not fit the context (", s.n_ctx() - s.n_past(),
         " free of ", s.n_ctx(), "): ", st.stop_reason);
  if (p.on_ready) p.on_ready();
  const int64_t n_vocab = s.model().hparams().n_vocab;

  // History for the repetition penalty: prompt + everything generated, sized
  // once so the decode loop below never allocates.
  std::vector<int32_t> history;
  history.reserve(std::max(size_t(s.n_ctx()), prompt.size() + 1));
  history.assign(prompt.begin(), prompt.end());
  std::vector<float> logits(static_cast<size_t>(n_vocab));

  auto t0 = std::chrono::steady_clock::now();
  const float* out = nullptr;
  for (size_t i = 0; i < prompt.size(); i += size_t(s.n_batch())) {
    const int64_t n = std::min<int64_t>(s.n_batch(), int64_t(prompt.size() - i));
    out = s.decode(prompt.data() + i, n);
  }
  st.n_prompt = int64_t(prompt.size());
  st.prompt_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  while (p.n_predict < 0 || st.n_generated < p.n_predict) {
    std::memcpy(logits.data(), out, sizeof(float) * size_t(n_vocab));
    const int32_t id = sampler.sample(logits.data(), history.data(), history.size());
    ++st.n_generated;
    if (std::find(p.stop_ids.begin(), p.stop_ids.end(), id) != p.stop_ids.end()) {
      st.stopped_by_eog = true;
      break;
    }
    if (!on_token(id)) break;
    if (s.n_past() >= s.n_ctx() && !room(1)) {
      st.context_full = true;
      break;
    }
    // Long runs (shift, window) outgrow the history: the penalty only looks
    // back repeat_last_n, so the oldest half goes (in place, no allocation).
    if (history.size() == history.capacity()) history.erase(history.begin(), history.begin() + long(history.size() / 2));
    history.push_back(id);
    out = s.decode(&id, 1);
  }
  st.generate_ms = ms_since(t0);
  return st;
}

}  // namespace edgellm
