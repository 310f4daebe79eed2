// edgellm tokenize and run --parse-special, through the CLI: the ids printed
// are the library tokenizer's, and bad invocations fail with one clear line.
#include <gtest/gtest.h>

#include <algorithm>

#include "format/gguf.h"
#include "run_cli.h"
#include "test_models.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {
namespace {

std::string id_line(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "\n";
}

const char* kQwen2Vocab = EDGELLM_SHARED_DIR "/testdata/vocab/ggml-vocab-qwen2.gguf";

TEST(TokenizeCli, IdsMatchTheLibraryTokenizer) {
  const std::string text = "Hello world, 你好世界! 123456 \n\n  code(){}";
  const auto f = gguf::File::open(kQwen2Vocab);
  const auto tok = make_tokenizer(*f);
  const auto r = test::run_command({EDGELLM_CLI, "tokenize", "--vocab", kQwen2Vocab, "-p", text, "--ids"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, id_line(tok->encode(text, true)));
}

TEST(TokenizeCli, PiecesListAndStats) {
  const auto r = test::run_command(
      {EDGELLM_CLI, "tokenize", "--vocab", test::stories260k(), "-p", "Once upon a time", "--stats"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.out.find("     1 -> ''"), std::string::npos) << r.out;  // BOS prints as nothing
  EXPECT_NE(r.out.find(" upon'"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("MB/s"), std::string::npos) << r.err;
}

TEST(TokenizeCli, ParseSpecialReadsControlTokens) {
  const std::string text = "<|im_start|>user\nhi<|im_end|>";
  const auto f = gguf::File::open(kQwen2Vocab);
  const auto tok = make_tokenizer(*f);
  const int32_t im_start = tok->vocab().find("<|im_start|>");
  ASSERT_GE(im_start, 0);
  const auto plain = test::run_command({EDGELLM_CLI, "tokenize", "--vocab", kQwen2Vocab, "-p", text, "--ids"});
  const auto special =
      test::run_command({EDGELLM_CLI, "tokenize", "--vocab", kQwen2Vocab, "-p", text, "--ids", "--parse-special"});
  ASSERT_TRUE(plain.exited_with(0) && special.exited_with(0)) << plain.describe() << special.describe();
  EXPECT_EQ(special.out, id_line(tok->encode(text, true, true)));
  EXPECT_EQ(special.out.rfind(std::to_string(im_start) + ",", 0), 0u) << special.out;
  EXPECT_NE(plain.out, special.out);
}

TEST(TokenizeCli, BadInvocationsFailClearly) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"-p", "x"}, "no vocabulary given"},
      {{"--vocab", kQwen2Vocab}, "exactly one of -p TEXT and -f FILE"},
      {{"--vocab", kQwen2Vocab, "-p", "x", "-f", "y"}, "exactly one of -p TEXT and -f FILE"},
      {{"--vocab", kQwen2Vocab, "-f", "/nonexistent/text.txt"}, "cannot open"},
      {{"--vocab", "/nonexistent/v.gguf", "-p", "x"}, "/nonexistent/v.gguf"},
      {{"--vocab", kQwen2Vocab, "-p", "x", "--bogus"}, "unknown option"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {EDGELLM_CLI, "tokenize"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = test::run_command(argv);
    EXPECT_FALSE(r.exited_with(0)) << r.describe();
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(RunCli, ParseSpecialTurnsControlTextIntoTokens) {
  // stories260K's BOS is "<s>" (id 1): by default (as llama-completion) and
  // with --parse-special a "<s>" in the prompt is that token; with
  // --no-parse-special the characters are text.
  const auto with = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "<s>Once", "--no-bos",
                                       "--parse-special", "-n", "1", "--temp", "0"});
  const auto by_default = test::run_command(
      {EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "<s>Once", "--no-bos", "-n", "1", "--temp", "0"});
  const auto without = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "<s>Once", "--no-bos",
                                          "--no-parse-special", "-n", "1", "--temp", "0"});
  EXPECT_EQ(by_default.out, with.out);
  ASSERT_TRUE(with.exited_with(0) && without.exited_with(0)) << with.describe() << without.describe();
  auto prompt_tokens = [](const std::string& err) {
    const size_t p = err.find("prompt ");
    return p == std::string::npos ? -1 : std::stoi(err.substr(p + 7));
  };
  const auto ids = test::run_command({EDGELLM_CLI, "tokenize", "--vocab", test::stories260k(), "-p", "<s>Once",
                                      "--no-bos", "--parse-special", "--ids"});
  ASSERT_TRUE(ids.exited_with(0)) << ids.describe();
  EXPECT_EQ(ids.out.rfind("1,", 0), 0u) << ids.out;
  const int n_special = int(std::count(ids.out.begin(), ids.out.end(), ',')) + 1;
  EXPECT_EQ(prompt_tokens(with.err), n_special) << with.err;
  EXPECT_GT(prompt_tokens(without.err), n_special) << without.err;
}

}  // namespace
}  // namespace edgellm
