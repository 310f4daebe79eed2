// edgellm chat over a pipe: two turns in a row, and the second turn's prefill
// covers only the new tokens (everything from turn 1 is reused from the cache).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "run_cli.h"
#include "test_chat_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

using test::kv_dumps;
using test::KvDump;
using test::count_turns;
using test::template_tokens;

TEST(Chat, TwoTurnsOverAPipeReuseTheCache) {
  const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml", "-n",
                                    "16", "--temp", "0", "--system", "You tell stories."},
                                   "Hello there\nTell me a story about a cat\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::regex turn_re(
      "turn (\\d+) \\| prefill (\\d+) new tokens \\((\\d+) reused from cache\\).*generated (\\d+) tokens.*context (\\d+)/");
  std::vector<std::smatch> turns;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), turn_re); it != std::sregex_iterator(); ++it)
    turns.push_back(*it);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  const long prefill1 = std::stol(turns[0][2]), reused1 = std::stol(turns[0][3]), ctx1 = std::stol(turns[0][5]);
  const long prefill2 = std::stol(turns[1][2]), reused2 = std::stol(turns[1][3]), gen2 = std::stol(turns[1][4]),
             ctx2 = std::stol(turns[1][5]);
  EXPECT_EQ(reused1, 0);
  EXPECT_GT(prefill1, 0);
  // Turn 2 reuses all of turn 1 (prompt and reply) and prefills only its new text.
  EXPECT_EQ(reused2, ctx1) << r.err;
  EXPECT_GT(prefill2, 0);
  EXPECT_EQ(ctx2, ctx1 + prefill2 + gen2) << r.err;
  // Two replies were printed (one line each at least).
  EXPECT_GE(std::count(r.out.begin(), r.out.end(), '\n'), 2);
}

// Issue 13 item 6: each turn's suffix used to be tokenized on its own and
// gained SentencePiece's dummy-prefix "▁" (103 ids after turn 2 where the
// conversation has 102). After every turn the cache holds exactly the whole
// conversation's ids (as `template --tokens` gives them) and then the reply's.
TEST(Chat, KvCacheHoldsTheWholeConversationsTokensAfterEveryTurn) {
  const std::string M = test::stories260k();
  for (const char* tmpl : {"chatml", "llama2", "zephyr"}) {
    const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", M, "--chat-template", tmpl, "-n", "8", "--temp", "0",
                                      "--system", "You tell stories.", "--dump-kv-tokens"},
                                     "hello there\nagain\nand a third  time, with feeling\n");
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    const std::vector<KvDump> turns = kv_dumps(r.err);
    ASSERT_EQ(turns.size(), 3u) << r.err;
    for (size_t t = 0; t < turns.size(); ++t) {
      const KvDump& d = turns[t];
      ASSERT_EQ(d.ids.size(), d.n) << tmpl << " turn " << t + 1;
      ASSERT_EQ(d.n, d.prompt + d.reply) << tmpl << " turn " << t + 1;
      const std::vector<int32_t> want = template_tokens(M, tmpl, d.messages);
      EXPECT_EQ(std::vector<int32_t>(d.ids.begin(), d.ids.begin() + long(d.prompt)), want)
          << tmpl << " turn " << t + 1 << ": " << d.messages;
    }
  }
}

// The issue's reproduction: 102 prompt ids after turn 2, not 103.
TEST(Chat, IssueReproductionHolds102PromptTokens) {
  const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml", "-n",
                                    "8", "--temp", "0", "--dump-kv-tokens"},
                                   "hello there\nagain\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::vector<KvDump> turns = kv_dumps(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  EXPECT_EQ(turns[1].prompt, 102u) << r.err;
  EXPECT_EQ(turns[1].prompt, template_tokens(test::stories260k(), "chatml", turns[1].messages).size());
}

// Issue 13 item 13: "<s>" typed in a message is BOS by default (as llama.cpp);
// --no-parse-special-in-messages keeps it text.
TEST(Chat, ControlTokensInMessagesFollowTheFlag) {
  const std::string M = test::stories260k();
  auto prompt_ids = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", M, "--chat-template", "chatml", "-n", "2",
                                     "--temp", "0", "--dump-kv-tokens"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = test::run_command(argv, "<s>hi</s> there\n");
    EXPECT_TRUE(r.exited_with(0)) << r.describe();
    const std::vector<KvDump> turns = kv_dumps(r.err);
    EXPECT_EQ(turns.size(), 1u) << r.err;
    return turns.empty() ? std::vector<int32_t>{}
                         : std::vector<int32_t>(turns[0].ids.begin(), turns[0].ids.begin() + long(turns[0].prompt));
  };
  auto count = [](const std::vector<int32_t>& v, int32_t id) { return std::count(v.begin(), v.end(), id); };
  const std::vector<int32_t> dflt = prompt_ids({}), on = prompt_ids({"--parse-special-in-messages"}),
                             off = prompt_ids({"--no-parse-special-in-messages"});
  EXPECT_EQ(dflt, on);
  EXPECT_EQ(count(on, 1), 2);  // BOS, then the message's <s>
  EXPECT_EQ(count(on, 2), 1);  // the message's </s>
  EXPECT_EQ(count(off, 1), 1);  // BOS only
  EXPECT_EQ(count(off, 2), 0);
  EXPECT_EQ(on, template_tokens(M, "chatml", "[{\"role\":\"user\",\"content\":\"<s>hi</s> there\"}]"));

  const auto both = test::run_command({EDGELLM_CLI, "chat", "-m", M, "--chat-template", "chatml",
                                       "--parse-special-in-messages", "--no-parse-special-in-messages"},
                                      "hi\n");
  EXPECT_TRUE(both.exited_with(1)) << both.describe();
  EXPECT_NE(both.err.find("only one of"), std::string::npos) << both.err;
}

// A context policy drops cache contents mid-conversation: later turns still
// prefill only their new text (no error, no re-prefill of the whole
// conversation, which would not fit).
TEST(Chat, AfterAContextShiftTurnsPrefillOnlyTheNewText) {
  for (std::vector<std::string> policy : {std::vector<std::string>{"--ctx-overflow", "shift"},
                                          std::vector<std::string>{"--ctx-overflow", "shift", "--keep", "10"},
                                          std::vector<std::string>{"--ctx-overflow", "window", "--ctx-window", "40"}}) {
    std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml",
                                     "-n", "24", "--temp", "0", "-c", "128"};
    argv.insert(argv.end(), policy.begin(), policy.end());
    const auto r = test::run_command(argv, "hello there\nagain\nthird one here\nfourth\nfifth time\n");
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
    const std::regex turn_re("turn (\\d+) \\| prefill (\\d+) new tokens \\((\\d+) reused from cache\\)");
    int turns = 0;
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), turn_re); it != std::sregex_iterator(); ++it) {
      ++turns;
      EXPECT_LT(std::stol((*it)[2]), 60) << policy[1] << ": " << it->str();  // one user turn's worth
      if (turns > 1) {
        EXPECT_GT(std::stol((*it)[3]), 0) << policy[1] << ": " << it->str();
      }
    }
    EXPECT_EQ(turns, 5) << r.err;
    EXPECT_NE(r.err.find("context "), std::string::npos);
  }
}

// --session: a second chat over the same conversation reuses the saved
// cache (all of the prompt but its last id, which starts the reply).
TEST(Chat, SessionFileIsReusedByTheNextChat) {
  const std::string session = test::temp_dir() + "/chat-kv.session";
  const std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template",
                                         "chatml", "-n", "8", "--temp", "0", "--session", session,
                                         "--dump-kv-tokens"};
  const auto first = test::run_command(argv, "hello there\n");
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  const auto second = test::run_command(argv, "hello there\nagain\n");
  ASSERT_TRUE(second.exited_with(0)) << second.describe();
  const std::vector<KvDump> a = kv_dumps(first.err), b = kv_dumps(second.err);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_NE(second.err.find("(" + std::to_string(a[0].prompt - 1) + " reused from cache)"), std::string::npos)
      << second.err;
  EXPECT_EQ(a[0].ids, b[0].ids);
  EXPECT_EQ(std::vector<int32_t>(b[1].ids.begin(), b[1].ids.begin() + long(b[1].prompt)),
            template_tokens(test::stories260k(), "chatml", b[1].messages));
}

TEST(Chat, ResetAndExitCommands) {
  const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml", "-n",
                                    "4", "--temp", "0"},
                                   "Hi\n/reset\nHi\n/exit\nnot read\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.err.find("(conversation reset)"), std::string::npos);
  // After /reset the second "Hi" starts from an empty cache again; nothing
  // after /exit was read.
  EXPECT_EQ(count_turns(r.err), 2) << r.err;
  EXPECT_NE(r.err.find("turn 2 | prefill"), std::string::npos);
  EXPECT_NE(r.err.find("(0 reused from cache)"), std::string::npos);
}

TEST(Chat, ModelWithoutTemplateNeedsOne) {
  const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k()}, "Hi\n");
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_NE(r.err.find("has no chat template"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edgellm
