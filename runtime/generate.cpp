#include "runtime/generate.h"

#include "runtime/scheduler.h"

namespace edgellm {

GenerateStats generate(Session& s, Sampler& sampler, const std::vector<int32_t>& prompt, const GenerateParams& p,
                       const std::function<bool(int32_t)>& on_token) {
  GenerationRequest r;
  r.prompt = prompt;
  r.sampler = &sampler;
  r.max_tokens = p.n_predict;
  r.stop_ids = p.stop_ids;
  r.policy = p.policy;
  r.evaluate_last = true;  // the session holds every id it handed out
  r.on_event = p.on_event;
  r.on_ready = p.on_ready;
  r.on_token = on_token;
  if (p.on_text) r.on_text = [&p](const std::string& text, std::span<const TokenLogprob>) { return p.on_text(text); };
  Scheduler one(s.executor());
  const GenerationResult res = one.run(s, std::move(r));
  GenerateStats st;
  st.n_prompt = res.n_prompt;
  st.n_generated = res.n_generated;
  st.prompt_ms = res.prompt_ms;
  st.generate_ms = res.generate_ms;
  st.stopped_by_eog = res.stopped_by_eog;
  st.context_full = res.context_full;
  st.n_dropped = res.n_dropped;
  st.n_overflows = res.n_overflows;
  st.stop_reason = res.stop_reason;
  return st;
}

}  // namespace edgellm
