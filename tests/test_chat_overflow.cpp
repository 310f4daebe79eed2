// edgellm chat when the context is full (over a pipe): the chat never ends
// and never loses the conversation. The default policy drops the oldest whole
// turns, before a turn or in the middle of a reply; a message too long for
// the context on its own is refused; --ctx-overflow stop refuses the message
// that does not fit. After every turn the cache holds exactly what the
// template makes of the conversation that is left.
#include <gtest/gtest.h>

#include <regex>

#include "run_cli.h"
#include "test_chat_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

std::vector<std::string> chat_argv(std::vector<std::string> extra) {
  std::vector<std::string> argv = {EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml",
                                   "--temp", "0", "--system", "Be kind.", "--dump-kv-tokens"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::string numbered_lines(int n) {
  std::string in;
  for (int i = 1; i <= n; ++i) in += "hi " + std::to_string(i) + "\n";
  return in;
}

// The user messages of a --dump-kv-tokens conversation, in order.
std::vector<std::string> user_messages(const std::string& json) {
  std::vector<std::string> out;
  const std::regex re("\\{\"role\":\"user\",\"content\":\"([^\"]*)\"\\}");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// 20 turns of ~50 tokens through a 256-token context: every turn runs, old
// turns are dropped (and said so), and what is left is always the system
// prompt and the latest turns, in order.
TEST(Chat, OverflowOverThreeTimesTheContextKeepsTheLastTurns) {
  const auto r = test::run_command(chat_argv({"-c", "256", "-n", "24"}), numbered_lines(20));
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::vector<std::string> turns = test::turn_lines(r.err);
  ASSERT_EQ(turns.size(), 20u) << r.err;
  const std::regex tokens_re("prefill (\\d+) new tokens.*generated (\\d+) tokens");
  long total = 0;
  int drops = 0;
  for (const std::string& t : turns) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(t, m, tokens_re)) << t;
    total += std::stol(m[1]) + std::stol(m[2]);
    if (t.find("oldest turn") != std::string::npos) ++drops;
  }
  EXPECT_GT(total, 3 * 256) << r.err;
  EXPECT_GE(drops, 3) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("\\| dropped \\d+ oldest turns?: \\d+ tokens\n"))) << r.err;
  EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;

  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_EQ(dumps.size(), 20u);
  for (size_t t = 0; t < dumps.size(); ++t) {
    const std::vector<std::string> users = user_messages(dumps[t].messages);
    ASSERT_FALSE(users.empty()) << dumps[t].messages;
    // The last turns, ending with this one, none missing in between.
    for (size_t i = 0; i < users.size(); ++i)
      EXPECT_EQ(users[i], "hi " + std::to_string(t + 1 - (users.size() - 1 - i))) << dumps[t].messages;
    EXPECT_EQ(dumps[t].messages.rfind("[{\"role\":\"system\",\"content\":\"Be kind.\"}", 0), 0u) << dumps[t].messages;
    if (t % 4 == 3 || t == 19)
      test::expect_cache_is_the_conversation(test::stories260k(), "chatml", dumps[t], "turn " + std::to_string(t + 1));
  }
  EXPECT_GE(user_messages(dumps.back().messages).size(), 2u) << dumps.back().messages;
}

// A reply that fills the context in its middle: the oldest turns go, the
// conversation is rendered again with the partial reply after it, and the
// reply goes on. Which -n makes a reply cross the end of the context after
// the turn itself fitted depends on the model's words, so a few are tried;
// the cache must be right after every turn of every one.
TEST(Chat, ContextFullMidReplyDropsTurnsAndTheReplyGoesOn) {
  int mid_reply = 0;
  for (int n = 60; n <= 76; n += 2) {
    const auto r = test::run_command(chat_argv({"-c", "256", "-n", std::to_string(n)}), numbered_lines(4));
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    ASSERT_EQ(test::count_turns(r.err), 4) << r.err;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
    const std::vector<std::string> turns = test::turn_lines(r.err);
    const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
    ASSERT_EQ(dumps.size(), 4u);
    for (size_t t = 0; t < turns.size(); ++t) {
      if (turns[t].find("mid-reply") == std::string::npos) continue;
      ++mid_reply;
      // The reply still got its -n tokens, after the shorter conversation.
      EXPECT_NE(turns[t].find("generated " + std::to_string(n) + " tokens"), std::string::npos) << turns[t];
      EXPECT_EQ(user_messages(dumps[t].messages).size(), 1u) << dumps[t].messages;
      test::expect_cache_is_the_conversation(test::stories260k(), "chatml", dumps[t],
                                             "-n " + std::to_string(n) + " turn " + std::to_string(t + 1));
    }
  }
  EXPECT_GT(mid_reply, 0) << "no -n made a reply fill the context mid-way";
}

// A reply that fills the context on its own ends there (saying so), and the
// next turn goes on without it.
TEST(Chat, ReplyFillingTheContextAloneEndsAndTheChatGoesOn) {
  const auto r = test::run_command(chat_argv({"-c", "128"}), "hi\nagain\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::vector<std::string> turns = test::turn_lines(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  EXPECT_NE(turns[0].find("reply ended: it fills the 128-token context"), std::string::npos) << turns[0];
  EXPECT_NE(turns[1].find("dropped 1 oldest turn"), std::string::npos) << turns[1];
}

// A message longer than the whole context is refused with its size, and the
// conversation goes on where it was.
TEST(Chat, TooLongMessageIsRefusedAndTheChatGoesOn) {
  std::string huge;
  for (int i = 0; i < 150; ++i) huge += "word ";
  const auto r = test::run_command(chat_argv({"-c", "256", "-n", "8"}), "hi\n" + huge + "\nagain\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_TRUE(std::regex_search(r.err, std::regex("error: message of \\d+ tokens does not fit the 256-token context "
                                                  "\\(\\d+ tokens with the system prompt and the template\\)")))
      << r.err;
  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_EQ(dumps.size(), 2u) << r.err;
  EXPECT_EQ(user_messages(dumps[1].messages), (std::vector<std::string>{"hi", "again"}));
  // The second turn reused all of the first from the cache.
  EXPECT_NE(test::turn_lines(r.err)[1].find("(" + std::to_string(dumps[0].n) + " reused from cache)"),
            std::string::npos)
      << r.err;
}

// --ctx-overflow stop: the message that does not fit is refused (saying
// how to go on), the chat does not end, and /reset makes room again.
TEST(Chat, StopPolicyRefusesTheMessageAndTheChatGoesOn) {
  const auto r = test::run_command(chat_argv({"-c", "128", "-n", "30", "--ctx-overflow", "stop"}),
                                   "hi\nhi 2\nhi 3\n/reset\nhi 4\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.err.find("(the message was not sent; /reset starts over)"), std::string::npos) << r.err;
  const std::vector<test::KvDump> dumps = test::kv_dumps(r.err);
  ASSERT_GE(dumps.size(), 2u) << r.err;
  EXPECT_EQ(user_messages(dumps.back().messages), (std::vector<std::string>{"hi 4"}));
}

}  // namespace
}  // namespace edgellm
