// edgellm chat over a pipe: two turns in a row, and the second turn's prefill
// covers only the new tokens (everything from turn 1 is reused from the cache).
#include <gtest/gtest.h>

#include <regex>

#include "run_cli.h"
#include "test_models.h"

namespace edgellm {
namespace {

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

TEST(Chat, ResetAndExitCommands) {
  const auto r = test::run_command({EDGELLM_CLI, "chat", "-m", test::stories260k(), "--chat-template", "chatml", "-n",
                                    "4", "--temp", "0"},
                                   "Hi\n/reset\nHi\n/exit\nnot read\n");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.err.find("(conversation reset)"), std::string::npos);
  // After /reset the second "Hi" starts from an empty cache again.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n') - 1, 2) << r.err;
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
