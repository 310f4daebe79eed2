// edgellm chat's input and commands over a pipe: slash commands (unknown
// ones refused, never sent to the model), multi-line messages, /save and
// /load, template options (--chat-template-kwargs, --reasoning), and the
// command line's own checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "run_cli.h"
#include "test_chat_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

std::vector<std::string> chat_argv(std::vector<std::string> extra) {
  std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml",
                                   "--temp", "0", "-n", "6", "--dump-kv-tokens"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::string qwen3_template() { return test::shared_dir() + "/testdata/templates/Qwen-Qwen3-0.6B.jinja"; }

TEST(Chat, UnknownCommandsAreRefusedAndNeverSentToTheModel) {
  const auto r = test::run_command(chat_argv({}), "/foo bar\n/\n/help\n//hi there\n/exit\nnot read\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.err.find("unknown command /foo (not sent to the model); /help lists the commands"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("unknown command / (not sent"), std::string::npos) << r.err;
  for (const char* c : {"/reset", "/save FILE", "/load FILE", "/multi", "/exit"})
    EXPECT_NE(r.err.find(c), std::string::npos) << "/help lacks " << c << ": " << r.err;
  // Only "//hi there" reached the model, as "/hi there".
  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_EQ(dumps.size(), 1u) << r.err;
  EXPECT_EQ(dumps[0].messages, R"([{"role":"user","content":"/hi there"}])");
}

// A trailing \ continues a line; /multi ... /end takes lines as they are.
TEST(Chat, MultiLineMessages) {
  const auto r = test::run_command(chat_argv({}), "first \\\nsecond\n/multi\na\n\n/help\nb\\\n/end\nlast\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_EQ(dumps.size(), 3u) << r.err;
  EXPECT_NE(dumps[2].messages.find(R"({"role":"user","content":"first \nsecond"})"), std::string::npos)
      << dumps[2].messages;
  EXPECT_NE(dumps[2].messages.find(R"({"role":"user","content":"a\n\n/help\nb\\"})"), std::string::npos)
      << dumps[2].messages;
  EXPECT_NE(dumps[2].messages.find(R"({"role":"user","content":"last"}])"), std::string::npos) << dumps[2].messages;
  EXPECT_EQ(r.err.find("commands:"), std::string::npos) << "/help inside /multi is text: " << r.err;
}

// /save writes the conversation and its cache; a new chat /loads them and
// continues: the whole conversation is there, and the cache is reused.
TEST(Chat, SaveAndLoadContinueTheConversation) {
  const std::string file = test::temp_dir() + "/saved chat.json";
  const auto first = test::run_command(chat_argv({"--system", "Be kind."}), "hello\nagain\n/save " + file + "\n");
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  EXPECT_NE(first.err.find("(saved 5 messages to " + file + " and the KV cache"), std::string::npos) << first.err;
  ASSERT_TRUE(std::filesystem::exists(file + ".kv"));
  const std::vector<test::KvDump> a = test::kv_dumps(first.err);
  ASSERT_EQ(a.size(), 2u);

  const auto second = test::run_command(chat_argv({}), "/load " + file + "\nthird\n");
  ASSERT_TRUE(second.exited_with(0)) << second.describe();
  EXPECT_NE(second.err.find("(loaded 5 messages from " + file + "; KV cache of " + std::to_string(a[1].n) +
                            " tokens restored"),
            std::string::npos)
      << second.err;
  const std::vector<test::KvDump> b = test::kv_dumps(second.err);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].messages.rfind(a[1].messages.substr(0, a[1].messages.size() - 1), 0), 0u) << b[0].messages;
  EXPECT_NE(b[0].messages.find(R"({"role":"user","content":"third"}])"), std::string::npos) << b[0].messages;
  EXPECT_NE(second.err.find("(" + std::to_string(a[1].n) + " reused from cache)"), std::string::npos) << second.err;
  test::expect_cache_is_the_conversation(test::stories260k(), "chatml", b[0], "after /load");
  // The saved file is a conversation `edgellm template --messages` reads too.
  const auto t = test::run_command(
      {EDGELLM_CLI, "template", "--chat-template", "chatml", "--messages", file});
  EXPECT_TRUE(t.exited_with(0)) << t.describe();
  EXPECT_NE(t.out.find("<|im_start|>system\nBe kind.<|im_end|>"), std::string::npos) << t.out;
}

// A bad /load is one line and changes nothing; a bad KV cache file next to a
// good conversation loses only the cache (the next turn prefills it all).
TEST(Chat, BadLoadsAreOneErrorAndTheChatGoesOn) {
  const std::string dir = test::temp_dir();
  std::ofstream(dir + "/not-json.txt") << "hello";
  std::ofstream(dir + "/wrong-shape.json") << R"({"a": 1})";
  std::ofstream(dir + "/good.json") << R"({"messages":[{"role":"user","content":"hi"},)"
                                       R"({"role":"assistant","content":"Once"}]})";
  std::ofstream(dir + "/good.json.kv") << "not a session file";
  const std::string in = "hello\n/load " + dir + "/missing.json\n/load " + dir + "\n/load " + dir +
                         "/not-json.txt\n/load " + dir + "/wrong-shape.json\n/load\nagain\n/load " + dir +
                         "/good.json\nmore\n";
  const auto r = test::run_command(chat_argv({}), in);
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::regex err_re("error: /load[^\n]*\n|error: [^\n]*(not-json|wrong-shape)[^\n]*\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.err.begin(), r.err.end(), err_re), std::sregex_iterator()), 5)
      << r.err;
  EXPECT_NE(r.err.find("KV cache not restored ("), std::string::npos) << r.err;
  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_EQ(dumps.size(), 3u) << r.err;
  // The failed loads left the conversation alone.
  EXPECT_NE(dumps[1].messages.find(R"([{"role":"user","content":"hello"},)"), std::string::npos)
      << dumps[1].messages;
  // The good one replaced it; its cache file was refused, so all was prefilled.
  EXPECT_EQ(dumps[2].messages, R"([{"role":"user","content":"hi"},{"role":"assistant","content":"Once"},)"
                               R"({"role":"user","content":"more"}])");
  EXPECT_NE(test::turn_lines(r.err)[2].find("(0 reused from cache)"), std::string::npos) << r.err;
  test::expect_cache_is_the_conversation(test::stories260k(), "chatml", dumps[2], "after the good /load");
}

// --reasoning off|on sets enable_thinking, exactly as the same
// --chat-template-kwargs would for `template --tokens`; templates without
// the switch refuse it.
TEST(Chat, ReasoningSwitchAndTemplateKwargs) {
  const std::string M = test::stories260k(), T = qwen3_template();
  for (const char* mode : {"off", "on"}) {
    const std::string kwargs = std::string("{\"enable_thinking\":") + (mode == std::string("off") ? "false" : "true") + "}";
    for (const std::vector<std::string>& flag : {std::vector<std::string>{"--reasoning", mode},
                                                 std::vector<std::string>{"--chat-template-kwargs", kwargs}}) {
      const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", M, "--chat-template-file", T, "-n", "2", "--temp",
                                        "0", "--dump-kv-tokens", flag[0], flag[1]},
                                       "hi\n");
      ASSERT_TRUE(r.exited_with(0)) << r.describe();
      const std::vector<test::KvDump> d = test::kv_dumps(r.err);
      ASSERT_EQ(d.size(), 1u) << r.err;
      test::expect_cache_is_the_conversation(M, "", d[0], flag[0] + " " + flag[1],
                                             {"--template-file", T, "--chat-template-kwargs", kwargs});
    }
  }
  const auto none = test::run_command({EDGELLM_CLI, "chat", "-m", M, "--chat-template", "chatml", "--reasoning", "off"},
                                      "hi\n");
  EXPECT_TRUE(none.exited_with(1)) << none.describe();
  EXPECT_NE(none.err.find("error: --reasoning: this chat template has no reasoning switch"), std::string::npos)
      << none.err;
  const auto bad = test::run_command({EDGELLM_CLI, "chat", "-m", M, "--chat-template", "chatml", "--reasoning", "maybe"});
  EXPECT_TRUE(bad.exited_with(1)) << bad.describe();
  EXPECT_NE(bad.err.find("--reasoning maybe: use on or off"), std::string::npos) << bad.err;
  const auto kw = test::run_command(
      {EDGELLM_CLI, "chat", "-m", M, "--chat-template", "chatml", "--chat-template-kwargs", "[1]"});
  EXPECT_TRUE(kw.exited_with(1)) << kw.describe();
  EXPECT_NE(kw.err.find("--chat-template-kwargs: expected a JSON object"), std::string::npos) << kw.err;
}

TEST(Chat, CommandLineChecks) {
  const auto no_model = test::run_command({EDGELLM_CLI, "chat", "--chat-template", "chatml"}, "hi\n");
  EXPECT_TRUE(no_model.exited_with(1)) << no_model.describe();
  EXPECT_NE(no_model.err.find("no model given; pass one with -m"), std::string::npos) << no_model.err;
  const auto dir = test::run_command(
      {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template-file", test::temp_dir()}, "hi\n");
  EXPECT_TRUE(dir.exited_with(1)) << dir.describe();
  EXPECT_NE(dir.err.find("--chat-template-file"), std::string::npos) << dir.err;
  EXPECT_NE(dir.err.find("directory"), std::string::npos) << dir.err;
  const auto policy = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--ctx-overflow", "bogus"});
  EXPECT_TRUE(policy.exited_with(1)) << policy.describe();
  EXPECT_NE(policy.err.find("use turns, stop, shift or window"), std::string::npos) << policy.err;
  const auto help = test::run_command({EDGELLM_CLI, "chat", "--help"});
  EXPECT_NE(help.out.find("turns (drop the oldest whole turns"), std::string::npos) << help.out;
}

// The model's summary comes once, before the first turn; a dead stdout ends
// the chat with one error.
TEST(Chat, ReadyLineAndDeadStdout) {
  const auto r = test::run_command(chat_argv({}), "hi\nagain\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.err.rfind("ready: llama | ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("ready:", 1), std::string::npos) << r.err;
  const auto full = test::run_shell("printf 'hi\\nagain\\n' | " + std::string(EDGELLM_CLI) + " chat -m " +
                                    test::stories260k() + " --chat-template chatml -n 8 > /dev/full");
  EXPECT_TRUE(full.exited_with(1)) << full.describe();
  const std::regex err_re("error: cannot write to standard output");
  EXPECT_EQ(std::distance(std::sregex_iterator(full.err.begin(), full.err.end(), err_re), std::sregex_iterator()), 1)
      << full.err;
  EXPECT_EQ(test::count_turns(full.err), 0) << full.err;
}

}  // namespace
}  // namespace edgellm
