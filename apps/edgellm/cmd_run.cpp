// edgellm run: load a model, stream a completion of the prompt to stdout, and
// print one timings line to stderr.
#include <chrono>
#include <cstdio>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "kernels/dispatch.h"
#include "runtime/generate.h"
#include "runtime/session_file.h"
#include "tokenizer/tokenizer.h"

#include <sys/stat.h>

namespace edgellm::cli {

namespace {
// Whether anything is at p (never opens it: a FIFO there must not block);
// load_session then refuses what is not a session file.
bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// ", copy 812 ms": the part of the load time spent reading into huge pages.
std::string copy_note(const gguf::File& f) {
  if (f.residency() != gguf::Residency::HugePages) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, ", copy %.0f ms", f.copy_ms());
  return buf;
}
}  // namespace

int cmd_run(int argc, char** argv) {
  Args args("run", "Generate text from a prompt, streamed to stdout.");
  ModelFlags mf;
  SamplerFlags sf;
  ContextFlags cf;
  int64_t n_predict = -1;
  bool show_ids = false;
  mf.add_to(args, true);
  cf.add_to(args, "stop");
  args.add({"-n", "--n-predict"}, &n_predict, "tokens to generate (-1 = until end of text or a full context)", -1,
           int64_t(1) << 30);
  sf.add_to(args);
  args.add_flag({"--ids"}, &show_ids, "print generated token ids (one line) instead of text");
  if (!args.parse(argc, argv)) return 0;

  const ContextPolicy policy = cf.policy("stop");
  const auto t0 = std::chrono::steady_clock::now();
  ModelFlags::Planned planned = mf.load_planned();
  auto& model = planned.model;
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!planned.note.empty()) std::fprintf(stderr, "plan: %s\n", planned.note.c_str());
  std::vector<int32_t> prompt = mf.prompt_tokens(*model);
  Session session(*model, planned.plan, mf.pin);
  session.kv().set_wipe_on_free(cf.session_private);
  Sampler sampler(sf.params(), int32_t(model->hparams().n_vocab));

  // --session: restore what the file holds, keep the longest prefix it shares
  // with this prompt (at least one prompt token is evaluated, for logits).
  int64_t reused = 0;
  if (!cf.session.empty() && path_exists(cf.session)) {
    load_session(session, cf.session);
    const std::vector<int32_t>& held = session.tokens();
    while (reused < int64_t(held.size()) && reused + 1 < int64_t(prompt.size()) && held[size_t(reused)] == prompt[size_t(reused)])
      ++reused;
    reused = session.truncate(reused);  // less (0) when a sliding window's ring lost what that needs
  }
  const std::vector<int32_t> fresh(prompt.begin() + reused, prompt.end());

  GenerateParams gp;
  gp.n_predict = n_predict;
  gp.policy = policy;
  gp.on_event = [](const std::string& what) { std::fprintf(stderr, "\n[%s]\n", what.c_str()); };
  gp.on_ready = [&] { std::fprintf(stderr, "%s\n", model_ready_line(*model, session, load_ms).c_str()); };
  if (model->tokenizer()) gp.stop_ids = model->tokenizer()->vocab().eog_ids;
  // Text through the engine's detokenizer (it saw the prompt: e.g. SPM
  // drops the dummy-prefix space only right after BOS); --ids prints ids.
  const bool text_mode = model->tokenizer() && !show_ids;
  if (text_mode)
    gp.on_text = [](const std::string& text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      flush_stdout_or_fail();
      return true;
    };
  bool first = true;
  const GenerateStats st = generate(session, sampler, fresh, gp, [&](int32_t id) {
    if (!text_mode) {
      std::printf(first ? "%d" : ",%d", id);
      flush_stdout_or_fail();
    }
    first = false;
    return true;
  });
  std::fputc('\n', stdout);
  flush_stdout_or_fail();
  if (st.context_full) std::fprintf(stderr, "generation stopped: %s\n", st.stop_reason.c_str());
  if (!cf.session.empty()) save_session(session, cf.session);
  std::string policy_note;
  if (st.n_overflows > 0)
    policy_note = " | " + std::string(ctx_overflow_name(policy.mode)) + " x" + std::to_string(st.n_overflows) +
                  " (" + std::to_string(st.n_dropped) + " tokens dropped)";
  std::fprintf(stderr,
               "timings: load %.1f ms (weights %s%s) | prompt %lld tokens (%lld reused from the session), %.1f ms, "
               "%.1f tok/s | generated %lld tokens, %.1f ms, %.1f tok/s | threads %s | isa %s | KV %s %s | %s%s%s\n",
               load_ms, gguf::residency_name(model->file().residency()), copy_note(model->file()).c_str(),
               (long long)st.n_prompt, (long long)reused, st.prompt_ms,
               st.n_prompt * 1000.0 / std::max(st.prompt_ms, 1e-9), (long long)st.n_generated, st.generate_ms,
               st.n_generated * 1000.0 / std::max(st.generate_ms, 1e-9), threads_summary(session.pool()).c_str(), kernels().isa,
               type_name(uint32_t(session.kv().type_k())).c_str(), format_mib(session.kv_bytes()).c_str(),
               memory_summary().c_str(), policy_note.c_str(), st.context_full ? " | context full" : "");
  return 0;
}

}  // namespace edgellm::cli
