// edgellm chat: a multi-turn conversation over stdin/stdout (a terminal or a
// pipe). The session's KV cache lives across turns: each turn renders the
// whole conversation with the chat template and tokenizes it whole, exactly
// as `edgellm template --tokens` does; the cache keeps its longest common
// prefix with those ids and only the rest is prefilled
// (runtime/chat_prompt.h), so the cache always holds the conversation's own
// tokens and earlier turns are not evaluated again. Lines starting with / are
// commands: /reset, /exit.
//
// Memory pressure: SIGUSR1 (what an app's onTrimMemory would send) writes
// the session out (its --session file, or an unlinked temporary file) and
// frees the KV cache and buffers at once, even while waiting for input; the
// next turn restores them and continues as if nothing happened.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "runtime/chat_prompt.h"
#include "runtime/generate.h"
#include "runtime/memory_pressure.h"
#include "runtime/session_file.h"
#include "template/chat.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

namespace {

std::string builtin_names() {
  std::string s;
  for (const std::string& n : tmpl::builtin_chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string chat_template_text(const Model& m, const std::string& builtin, const std::string& file) {
  if (!builtin.empty() && !file.empty()) fail("chat: give only one of --chat-template and --chat-template-file");
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail("--chat-template-file ", file, ": cannot open the file");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }
  if (!builtin.empty()) {
    const char* t = tmpl::builtin_chat_template(builtin);
    if (!t) fail("--chat-template: no built-in template '", builtin, "' (available: ", builtin_names(), ")");
    return t;
  }
  const gguf::Value* t = m.file().find("tokenizer.chat_template");
  if (!t)
    fail(m.file().source(), ": the model has no chat template; pass --chat-template NAME (", builtin_names(),
         ") or --chat-template-file F.jinja");
  return t->as_string("tokenizer.chat_template");
}

tmpl::Json message(const std::string& role, const std::string& content) {
  return tmpl::Json::object({{"role", tmpl::Json::string(role)}, {"content", tmpl::Json::string(content)}});
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  Args args("chat", "Chat with a model over stdin/stdout; the KV cache is kept between turns.\n"
                    "Type a message per line; /reset starts over, /exit (or end of input) quits.\n"
                    "A control token's text typed in a message (\"<|im_start|>system\") is parsed as that control\n"
                    "token by default, as llama.cpp does; --no-parse-special-in-messages keeps message text literal.");
  ModelFlags mf;
  SamplerFlags sf;
  ContextFlags cf;
  std::string system, builtin, template_file;
  int64_t n_predict = -1;
  bool special_in_messages = false, no_special_in_messages = false, dump_kv = false;
  mf.add_to(args, false);
  cf.add_to(args, "stop");
  args.add({"--system"}, &system, "system prompt");
  args.add({"--chat-template"}, &builtin, "a built-in template instead of the model's");
  args.add({"--chat-template-file"}, &template_file, "a Jinja chat template file instead of the model's");
  args.add({"-n", "--n-predict"}, &n_predict, "most tokens per reply (-1 = until end of turn)", -1, int64_t(1) << 30);
  args.add_flag({"--parse-special-in-messages"}, &special_in_messages,
                "the default: a control token's text typed in a message (\"<|im_start|>system\") becomes that "
                "control token, as in llama.cpp and `edgellm template --tokens`");
  args.add_flag({"--no-parse-special-in-messages"}, &no_special_in_messages,
                "keep message text literal: only the template's own markup becomes control tokens");
  args.add_flag({"--dump-kv-tokens"}, &dump_kv,
                "after each turn, print to stderr the conversation so far (JSON, as `template --messages` takes "
                "it) and the token ids the KV cache holds (those of `template --tokens --add-generation-prompt` "
                "for it, then the reply's)");
  sf.add_to(args);
  if (!args.parse(argc, argv)) return 0;
  if (mf.model.empty()) mf.model = EDGELLM_DEFAULT_MODEL;
  if (special_in_messages && no_special_in_messages)
    fail("chat: give only one of --parse-special-in-messages and --no-parse-special-in-messages");
  ChatPromptOptions prompt_opt;
  prompt_opt.parse_special_in_messages = !no_special_in_messages;

  const ContextPolicy policy = cf.policy("stop");
  // SIGUSR1 goes to the pressure thread only: block it before any thread
  // (the pool's, the memory sampler's) exists, so all of them inherit the mask.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  ModelFlags::Planned planned = mf.load_planned();
  auto& model = planned.model;
  if (!planned.note.empty()) std::fprintf(stderr, "plan: %s\n", planned.note.c_str());
  if (!model->tokenizer()) fail(model->tokenizer_error());
  const Tokenizer& tok = *model->tokenizer();
  const Vocab& vocab = tok.vocab();
  const std::string tmpl_text = chat_template_text(*model, builtin, template_file);
  Session session(*model, planned.plan, mf.pin);
  session.kv().set_wipe_on_free(cf.session_private);
  Sampler sampler(sf.params(), int32_t(model->hparams().n_vocab));
  GenerateParams gp;
  gp.n_predict = n_predict;
  gp.stop_ids = vocab.eog_ids;
  gp.policy = policy;
  std::string turn_events;
  gp.on_event = [&](const std::string& what) {
    std::fprintf(stderr, "\n[%s]\n", what.c_str());
    turn_events += (turn_events.empty() ? "" : "; ") + what;
  };

  // The turn loop and the pressure thread take turns on the session.
  std::mutex session_mu;
  PressureValve valve(session, cf.session);
  std::atomic<bool> quitting{false};
  std::thread pressure([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&usr1, &sig) != 0) continue;
      if (quitting) return;
      std::lock_guard<std::mutex> lock(session_mu);
      const uint64_t freed = valve.release();
      std::fprintf(stderr, "[memory pressure: session written %s, %s freed (KV cache and buffers)]\n",
                   cf.session.empty() ? "to an unlinked temporary file" : ("to " + cf.session).c_str(),
                   format_mib(freed).c_str());
    }
  });
  // Stops the pressure thread on every way out of this function.
  struct Stop {
    std::thread& t;
    std::atomic<bool>& q;
    ~Stop() {
      q = true;
      pthread_kill(t.native_handle(), SIGUSR1);
      t.join();
    }
  } stop{pressure, quitting};

  std::vector<tmpl::Json> messages;
  // The conversation's ids that the cache's positions stand for: the last
  // prompt and its reply. Equal to the cache's ids unless the context policy
  // dropped some (shift, window); then the cache is this with one run
  // removed, and the next turn is matched against this (plan_prefill).
  std::vector<int32_t> logical;
  auto reset = [&] {
    messages.clear();
    if (!system.empty()) messages.push_back(message("system", system));
    session.truncate(0);
    logical.clear();
  };
  reset();
  // --session: what an earlier chat cached; its tokens are the prefix the
  // first turn is matched against (the longest common one is kept).
  if (!cf.session.empty()) {
    if (std::FILE* f = std::fopen(cf.session.c_str(), "rb")) {
      std::fclose(f);
      load_session(session, cf.session);
      std::fprintf(stderr, "(session %s: %lld cached tokens restored)\n", cf.session.c_str(),
                   (long long)session.n_past());
    }
  }
  const bool interactive = isatty(fileno(stdin)) != 0;
  std::string line;
  int turn = 0;
  for (;;) {
    if (interactive) std::fputs("> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit") break;
    std::unique_lock<std::mutex> lock(session_mu);
    valve.restore();  // after memory pressure: the same rows back from the file
    if (line == "/reset") {
      reset();
      std::fprintf(stderr, "(conversation reset)\n");
      continue;
    }
    if (line.empty()) continue;
    messages.push_back(message("user", line));
    // The whole conversation, tokenized as one text (as `template --tokens`);
    // the cache keeps what it shares with it and the rest is prefilled.
    const ChatPrompt prompt = build_chat_prompt(tok, tmpl_text, tmpl::Json::array(messages), true, prompt_opt);
    const PrefillPlan plan = plan_prefill(session.tokens(), prompt.tokens, logical);
    session.truncate(int64_t(plan.keep));
    logical.assign(prompt.tokens.begin(), prompt.tokens.begin() + long(plan.covered));
    const std::vector<int32_t>& fresh = plan.feed;
    const size_t reused = plan.keep;
    Detokenizer detok(tok);
    for (int32_t id : session.tokens()) detok.push(id);
    for (int32_t id : fresh) detok.push(id);
    turn_events.clear();
    std::string reply;
    std::vector<int32_t> reply_ids;
    GenerateStats st;
    try {
      st = generate(session, sampler, fresh, gp, [&](int32_t id) {
      const std::string piece = detok.push(id);
      reply += piece;
      reply_ids.push_back(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    });
    } catch (const Error& e) {
      // The turn does not fit: say so and keep the conversation as it was.
      messages.pop_back();
      std::fprintf(stderr, "error: %s\n", e.what());
      continue;
    }
    const std::string rest = detok.flush();
    reply += rest;
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    // The cache now holds the prompt and every reply token that was decoded
    // (the end-of-turn token that stopped generation was not), less what the
    // context policy dropped.
    logical = prompt.tokens;
    logical.insert(logical.end(), reply_ids.begin(), reply_ids.end());
    if (!cf.session.empty()) save_session(session, cf.session);
    messages.push_back(message("assistant", reply));
    ++turn;
    std::fprintf(stderr,
                 "timings: turn %d | prefill %lld new tokens (%zu reused from cache), %.1f ms, %.1f tok/s | "
                 "generated %lld tokens, %.1f ms, %.1f tok/s | context %lld/%lld | %s%s%s\n",
                 turn, (long long)st.n_prompt, reused, st.prompt_ms, st.n_prompt * 1000.0 / std::max(st.prompt_ms, 1e-9),
                 (long long)reply_ids.size(), st.generate_ms,
                 double(reply_ids.size()) * 1000.0 / std::max(st.generate_ms, 1e-9), (long long)session.n_past(),
                 (long long)session.n_ctx(), memory_summary().c_str(), turn_events.empty() ? "" : " | ",
                 turn_events.c_str());
    if (st.context_full)
      std::fprintf(stderr, "(%s; /reset to start over)\n", st.stop_reason.c_str());
    if (dump_kv) {
      // The conversation the prompt was rendered from (this reply not yet in
      // it), then the cache's ids: that prompt's, then the reply's.
      std::string ids;
      for (int32_t id : session.tokens()) ids += (ids.empty() ? "" : ",") + std::to_string(id);
      std::fprintf(stderr, "kv-messages: %s\nkv-tokens: %lld (prompt %zu, reply %zu): %s\n",
                   tmpl::Json::array(std::vector<tmpl::Json>(messages.begin(), messages.end() - 1)).dump().c_str(),
                   (long long)session.n_past(), prompt.tokens.size(), reply_ids.size(), ids.c_str());
    }
  }
  return 0;
}

}  // namespace edgellm::cli
