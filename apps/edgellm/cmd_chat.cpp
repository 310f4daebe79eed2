// edgellm chat: a multi-turn conversation over stdin/stdout (a terminal or a
// pipe). This file is the command: flags, loading, and the loop that reads a
// line and runs it as a command or a turn. The pieces:
//   chat_input         reading lines (libedit on a terminal, plain from a pipe)
//   chat_commands      /help /reset /save /load /exit
//   chat_turn          one turn: prompt, reply, the context-full policy
//   chat_conversation  the messages and their rendering; dropping old turns
//   chat_store         the /save files
//
// Memory pressure: SIGUSR1 (what an app's onTrimMemory would send) writes
// the session out (its --session file, or an unlinked temporary file) and
// frees the KV cache and buffers at once, even while waiting for input; the
// next turn restores them and continues as if nothing happened.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "apps/edgellm/chat_commands.h"
#include "apps/edgellm/chat_input.h"
#include "apps/edgellm/chat_turn.h"
#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/input_file.h"
#include "runtime/memory_pressure.h"
#include "runtime/session_file.h"
#include "template/chat.h"

namespace edgellm::cli {

namespace {

std::string builtin_names() {
  std::string s;
  for (const std::string& n : tmpl::builtin_chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string chat_template_text(const Model& m, const std::string& builtin, const std::string& file) {
  if (!file.empty()) return read_input_file(file, "--chat-template-file", /*allow_stdin=*/false);
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

const char* kSummary =
    "Chat with a model over stdin/stdout; the KV cache is kept between turns.\n"
    "Type a message per line: end a line with \\ to go on to the next, or put several lines between /multi\n"
    "and /end. Commands: /help, /reset, /save FILE, /load FILE, /exit (or end of input); //text sends \"/text\".\n"
    "When the context is full the oldest turns after the system prompt are dropped (--ctx-overflow turns), so\n"
    "the chat goes on; a message too long for the context on its own is refused.\n"
    "On a terminal: line editing and history (libedit); Ctrl-C stops a reply (what was shown of it stays in\n"
    "the conversation) or clears the line (twice at an empty prompt: quit); Ctrl-D at an empty prompt quits;\n"
    "colours unless NO_COLOR is set.\n"
    "A control token's text typed in a message (\"<|im_start|>system\") is parsed as that control\n"
    "token by default, as llama.cpp does; --no-parse-special-in-messages keeps message text literal.";

}  // namespace

int cmd_chat(int argc, char** argv) {
  Args args("chat", std::string(kSummary) +
                        (chat_line_editing_built() ? "" : "\n(This build has no libedit: no line editing on a terminal.)"));
  ModelFlags mf;
  SamplerFlags sf;
  ContextFlags cf;
  std::string system, builtin, template_file, kwargs, reasoning;
  int64_t n_predict = -1;
  bool special_in_messages = false, no_special_in_messages = false, dump_kv = false;
  mf.add_to(args, false);
  cf.add_to(args, "turns");
  args.add({"--system"}, &system, "system prompt");
  args.add({"--chat-template"}, &builtin, "a built-in template instead of the model's");
  args.add({"--chat-template-file"}, &template_file, "a Jinja chat template file instead of the model's");
  args.add({"--chat-template-kwargs"}, &kwargs,
           "extra template variables, a JSON object: '{\"enable_thinking\":false}'");
  args.add({"--reasoning"}, &reasoning,
           "off | on: the template's enable_thinking switch (Qwen3 and others; refused for templates without "
           "one); overrides --chat-template-kwargs");
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
  if (special_in_messages && no_special_in_messages)
    fail("chat: give only one of --parse-special-in-messages and --no-parse-special-in-messages");
  if (!builtin.empty() && !template_file.empty())
    fail("chat: give only one of --chat-template and --chat-template-file");
  if (!reasoning.empty() && reasoning != "on" && reasoning != "off")
    fail("--reasoning ", reasoning, ": use on or off");
  ChatPromptOptions prompt_opt;
  prompt_opt.parse_special_in_messages = !no_special_in_messages;
  if (!kwargs.empty()) {
    prompt_opt.extra = tmpl::Json::parse(kwargs, "--chat-template-kwargs");
    if (!prompt_opt.extra.is_object()) fail("--chat-template-kwargs: expected a JSON object");
  }
  // turns works on the conversation (chat_turn.cpp); the others on the cache.
  const bool drop_turns = cf.overflow.empty() || cf.overflow == "turns";
  if (!drop_turns && cf.overflow != "stop" && cf.overflow != "shift" && cf.overflow != "window")
    fail("--ctx-overflow ", cf.overflow, ": use turns, stop, shift or window");
  ContextFlags token_policy = cf;
  if (drop_turns) token_policy.overflow = "stop";
  const ContextPolicy policy = token_policy.policy("stop");

  // SIGUSR1 goes to the pressure thread only: block it before any thread
  // (the pool's, the memory sampler's) exists, so all of them inherit the mask.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  ModelFlags::Planned planned = mf.load_planned();
  auto& model = planned.model;
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!planned.note.empty()) std::fprintf(stderr, "plan: %s\n", planned.note.c_str());
  if (!model->tokenizer()) fail(model->tokenizer_error());
  const Tokenizer& tok = *model->tokenizer();
  ChatConversation conv{tok, chat_template_text(*model, builtin, template_file), prompt_opt, system, {}, {}};
  if (!reasoning.empty()) {
    if (conv.template_text.find("enable_thinking") == std::string::npos)
      fail("--reasoning: this chat template has no reasoning switch (it never reads enable_thinking)");
    conv.opt.extra.set("enable_thinking", tmpl::Json::boolean(reasoning == "on"));
  }
  Session session(*model, planned.plan, mf.pin);
  session.kv().set_wipe_on_free(cf.session_private);
  Sampler sampler(sf.params(), int32_t(model->hparams().n_vocab));
  std::fprintf(stderr, "%s\n", model_ready_line(*model, session, load_ms).c_str());

  const bool terminal = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  ChatRun run{session, sampler, conv, {}, drop_turns, false, dump_kv, cf.session, ChatStyle::detect(terminal), {}, 0};
  run.gp.n_predict = n_predict;
  run.gp.stop_ids = tok.vocab().eog_ids;
  run.gp.policy = policy;
  run.gp.on_event = [&run](const std::string& what) {  // shift, window: as it happens, and in the turn line
    std::fprintf(stderr, "\n%s\n", run.style.dim("[" + what + "]").c_str());
    run.turn_events += (run.turn_events.empty() ? "" : "; ") + what;
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

  conv.reset();
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
  ChatInput input(terminal, run.style.out);
  if (input.editing()) {
    run.interruptible = true;
    catch_reply_interrupts();
  }
  while (std::optional<std::string> line = input.next()) {
    std::lock_guard<std::mutex> lock(session_mu);
    valve.restore();  // after memory pressure: the same rows back from the file
    std::string message;
    const ChatCommand cmd = run_chat_command(run, *line, cf.session_private, &message);
    if (cmd == ChatCommand::Exit) break;
    if (cmd == ChatCommand::Done || message.empty()) continue;
    run_turn(run, message);
  }
  return 0;
}

}  // namespace edgellm::cli
