// edgellm chat on a real terminal, driven through tmux: turns go on past a
// full context, Ctrl-C stops a reply and the chat goes on, Up recalls earlier
// lines, Ctrl-D / Ctrl-C twice / /exit quit, colours follow NO_COLOR.
// Skipped when tmux is not installed (scripts/setup.sh installs it) or the
// CLI was built without libedit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "run_cli.h"
#include "test_chat_helpers.h"
#include "test_models.h"
#include "tools/synth.h"

namespace edgellm {
namespace {

std::string find_tmux() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((d + "/tmux").c_str(), X_OK) == 0) return d + "/tmux";
  return "";
}

// Why the terminal tests cannot run here ("" when they can).
std::string skip_reason() {
  if (find_tmux().empty()) return "tmux is not installed (scripts/setup.sh installs it)";
  const auto help = test::run_command({EDGELLM_CLI, "chat", "--help"});
  if (help.out.find("no libedit") != std::string::npos) return "the CLI was built without libedit";
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// One chat in a detached tmux session on a private server (-L), killed at
// the end. The pane stays after the chat exits, so its exit status can be read.
class TmuxChat {
 public:
  TmuxChat(const std::vector<std::string>& argv, const std::string& env = "") {
    static int n = 0;
    socket_ = "edgellm-test-" + std::to_string(getpid()) + "-" + std::to_string(++n);
    std::string cmd = "exec env -u NO_COLOR " + env;
    for (const std::string& a : argv) cmd += " " + shell_quote(a);
    tmux({"-f", "/dev/null", "start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";", "set-option", "-g",
          "history-limit", "10000", ";", "new-session", "-d", "-s", "chat", "-x", "160", "-y", "50", cmd});
  }
  ~TmuxChat() { tmux({"kill-server"}); }

  void type(const std::string& text) { tmux({"send-keys", "-t", "chat", "-l", text}); }
  void key(const std::string& name) { tmux({"send-keys", "-t", "chat", name}); }
  void line(const std::string& text) {
    type(text);
    key("Enter");
  }

  // Everything the pane has shown (wrapped lines joined); with escapes: its
  // colours and attributes as escape sequences too.
  std::string screen(bool escapes = false) {
    std::vector<std::string> a = {"capture-pane", "-p", "-J", "-S", "-", "-t", "chat"};
    if (escapes) a.push_back("-e");
    return tmux(a).out;
  }
  // The last line with anything on it.
  std::string last_line() {
    std::istringstream in(screen());
    std::string last;
    for (std::string l; std::getline(in, l);)
      if (l.find_first_not_of(' ') != std::string::npos) last = l;
    return last;
  }

  // Polls the screen until pred holds (true) or the deadline passes (false).
  bool wait_for(const std::function<bool(const std::string&)>& pred, double seconds = 15) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      if (pred(screen())) return true;
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  bool wait_for_text(const std::string& s, double seconds = 15) {
    return wait_for([&](const std::string& sc) { return sc.find(s) != std::string::npos; }, seconds);
  }
  bool wait_for_turn(int n) { return wait_for_text("timings: turn " + std::to_string(n) + " |"); }
  bool wait_for_prompt(const std::string& typed = "") {
    return wait_for([&](const std::string&) { return last_line() == "> " + typed || last_line() == ">" + typed; });
  }

  // The chat's exit status once it ended; nullopt if it is still running at the deadline.
  std::optional<int> exit_status(double seconds = 15) {
    std::optional<int> status;
    wait_for([&](const std::string&) {
      const std::string s = tmux({"display-message", "-p", "-t", "chat", "#{pane_dead} #{pane_dead_status}"}).out;
      if (s.rfind("1 ", 0) == 0) status = std::atoi(s.c_str() + 2);
      return status.has_value();
    }, seconds);
    return status;
  }

 private:
  test::RunResult tmux(std::vector<std::string> args) {
    args.insert(args.begin(), {find_tmux(), "-L", socket_});
    return test::run_command(args, "", 30);
  }
  std::string socket_;
};

#define SKIP_WITHOUT_TTY_TOOLS()                               \
  do {                                                         \
    const std::string why = skip_reason();                     \
    if (!why.empty()) GTEST_SKIP() << why;                     \
  } while (0)

// 12 turns through a 256-token context on a terminal: all run, the oldest
// turns are dropped and the last ones kept (/save shows the conversation);
// Up recalls the lines typed before; /exit quits cleanly.
TEST(ChatTty, OverflowHistoryAndExit) {
  SKIP_WITHOUT_TTY_TOOLS();
  const std::string saved = test::temp_dir() + "/tty-chat.json";
  TmuxChat t({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml", "-c", "256", "-n", "24",
              "--temp", "0", "--system", "Be kind."});
  ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
  for (int i = 1; i <= 12; ++i) {
    t.line("hi " + std::to_string(i));
    ASSERT_TRUE(t.wait_for_turn(i)) << t.screen();
  }
  const std::string sc = t.screen();
  EXPECT_NE(sc.find("oldest turns: "), std::string::npos) << sc;
  EXPECT_EQ(sc.find("error"), std::string::npos) << sc;

  ASSERT_TRUE(t.wait_for_prompt());
  t.key("Up");
  EXPECT_TRUE(t.wait_for_prompt("hi 12")) << t.screen();
  t.key("Up");
  EXPECT_TRUE(t.wait_for_prompt("hi 11")) << t.screen();
  t.key("C-c");  // clears the recalled line: nothing is sent
  ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
  EXPECT_EQ(t.screen().find("timings: turn 13"), std::string::npos);

  t.line("/save " + saved);
  ASSERT_TRUE(t.wait_for_text("(saved ")) << t.screen();
  std::ifstream f(saved);
  const std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find(R"({"role":"system","content":"Be kind."})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"role":"user","content":"hi 12"})"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"({"role":"user","content":"hi 1"})"), std::string::npos) << json;

  t.line("/exit");
  EXPECT_EQ(t.exit_status(), 0) << t.screen();
}

// A random-weight model that never ends its reply (132M params: a few to a
// few hundred tokens a second, up to 2048 of them), so Ctrl-C always comes
// in the middle of it.
std::string endless_model() {
  static const std::string path = [] {
    SynthOptions o;
    o.shape = "smollm2-135m";
    o.type = "q4_0";
    o.seed = 7;
    o.vocab_from = test::shared_dir() + "/testdata/vocab/ggml-vocab-llama-spm.gguf";
    const std::string p = test::temp_dir() + "/endless.gguf";
    synth_model(o, p);
    return p;
  }();
  return path;
}

// Ctrl-C during a reply stops it and returns to the prompt; the partial
// reply stays in the conversation and the next turn continues from it.
TEST(ChatTty, CtrlCStopsTheReplyAndTheChatGoesOn) {
  SKIP_WITHOUT_TTY_TOOLS();
  TmuxChat t({EDGELLM_CLI, "chat", "-m", endless_model(), "--chat-template", "chatml", "-c", "2048", "--temp", "0"});
  ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
  for (int turn = 1; turn <= 2; ++turn) {
    const std::string msg = turn == 1 ? "tell me everything" : "and then?";
    t.line(msg);
    // Wait for reply text on the line after the message, then interrupt.
    ASSERT_TRUE(t.wait_for([&](const std::string& sc) {
      const size_t at = sc.rfind("> " + msg + "\n");
      return at != std::string::npos && sc.find_first_not_of(" \n", at + msg.size() + 3) != std::string::npos;
    })) << t.screen();
    t.key("C-c");
    ASSERT_TRUE(t.wait_for_turn(turn)) << t.screen();
    ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
  }
  const std::vector<std::string> turns = test::turn_lines(t.screen());
  ASSERT_EQ(turns.size(), 2u) << t.screen();
  for (const std::string& l : turns) EXPECT_NE(l.find("reply stopped (Ctrl-C)"), std::string::npos) << l;
  // Turn 2 reused turn 1 from the cache, partial reply and all.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(turns[0], m, std::regex("context (\\d+)/"))) << turns[0];
  EXPECT_NE(turns[1].find("(" + m[1].str() + " reused from cache)"), std::string::npos) << t.screen();
  t.key("Up");
  EXPECT_TRUE(t.wait_for_prompt("and then?")) << t.screen();
  t.key("C-u");
  t.line("/exit");
  EXPECT_EQ(t.exit_status(), 0) << t.screen();
}

TEST(ChatTty, CtrlDAndCtrlCTwiceQuit) {
  SKIP_WITHOUT_TTY_TOOLS();
  const std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml"};
  {
    TmuxChat t(argv);
    ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
    t.type("abc");
    t.key("C-d");  // not empty: deletes nothing, does not quit
    t.key("C-a");
    t.key("C-k");
    t.key("C-d");
    EXPECT_EQ(t.exit_status(), 0) << t.screen();
  }
  {
    TmuxChat t(argv);
    ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
    t.key("C-c");
    ASSERT_TRUE(t.wait_for_text("(Ctrl-C again to quit, or /exit)")) << t.screen();
    t.key("C-c");
    EXPECT_EQ(t.exit_status(), 0) << t.screen();
  }
}

// Colours on a terminal, none with NO_COLOR.
TEST(ChatTty, ColoursFollowNoColor) {
  SKIP_WITHOUT_TTY_TOOLS();
  const std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml",
                                         "-n", "4"};
  for (const bool no_color : {false, true}) {
    TmuxChat t(argv, no_color ? "NO_COLOR=1" : "");
    ASSERT_TRUE(t.wait_for_prompt()) << t.screen();
    t.line("hi");
    ASSERT_TRUE(t.wait_for_turn(1)) << t.screen();
    const std::string sc = t.screen(true);
    EXPECT_EQ(sc.find("\033[") != std::string::npos, !no_color) << (no_color ? "NO_COLOR=1: " : "") << sc;
    t.line("/exit");
    EXPECT_EQ(t.exit_status(), 0) << t.screen();
  }
}

}  // namespace
}  // namespace edgellm
