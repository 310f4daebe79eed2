// Bad command-line input gets one clear "error:" line and a non-zero exit,
// never a crash; good input works end to end (inspect, eval, synth).
#include <gtest/gtest.h>

#include <fstream>

#include "run_cli.h"
#include "test_models.h"

namespace edgellm {
namespace {

using test::run_command;

void expect_clean_error(const std::vector<std::string>& args, const std::string& needle) {
  std::vector<std::string> argv = {EDGELLM_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_command(argv);
  EXPECT_TRUE(r.exited && r.exit_code != 0) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.describe();
}

TEST(Cli, RejectsBadInput) {
  const std::string m = test::stories260k();
  expect_clean_error({"run", "-m", "/no/such/model.gguf", "-p", "hi"}, "cannot open");
  expect_clean_error({"run", "-m", m, "--bogus-flag"}, "unknown option '--bogus-flag'");
  expect_clean_error({"run", "-m", m, "-n", "-5"}, "-n: -5 is out of range");
  expect_clean_error({"run", "-m", m, "-n", "ten"}, "not an integer");
  expect_clean_error({"run", "-m", m, "-c", "100000"}, "larger than the model supports");
  expect_clean_error({"run", "-m", m, "--temp", "nan"}, "--temp: nan is not a finite number");
  expect_clean_error({"run", "-m", m, "--temp", "-1"}, "out of range");
  expect_clean_error({"run", "-m", m, "-t", "0", "-t", "-3"}, "-t: -3 is out of range");
  expect_clean_error({"run", "-m", m, "--top-p", "1.5"}, "--top-p");
  expect_clean_error({"run", "-m", m, "--tokens", "1,99999"}, "out of range");
  expect_clean_error({"run", "-m", m, "--tokens", "1,x"}, "not a token id");
  expect_clean_error({"run", "-m", m, "-p", "a", "--tokens", "1"}, "only one of");
  expect_clean_error({"run", "-m", m, "-f", "/no/such/prompt.txt"}, "-f /no/such/prompt.txt: cannot open: No such file");
  expect_clean_error({"run", "-m", m, "-p"}, "needs a value");
  expect_clean_error({"inspect"}, "no file given");
  expect_clean_error({"eval", "-m", m, "--tokens", "1,2"}, "--dump-logits");
  expect_clean_error({"synth", "--arch", "gpt5", "-o", "/tmp/x.gguf", "--vocab-from", m}, "unknown --arch");
  expect_clean_error({"synth", "--shape", "huge", "-o", "/tmp/x.gguf", "--vocab-from", m}, "unknown --shape");
  expect_clean_error({"bench", "-m", "/no/such/model.gguf", "-r", "1"}, "cannot open");
  expect_clean_error({"bench", "-m", m, "-p", "0", "-n", "0"}, "nothing to measure");
  expect_clean_error({"bench", "-m", m, "-t", "0"}, "-t: 0 is out of range");
  expect_clean_error({"bench", "-m", m, "-o", "xml"}, "unknown output format 'xml'");
  expect_clean_error({"bench", "-p", "8"}, "no model given");
  expect_clean_error({"run", "-m", m, "-t", "512", "--pin", "-p", "hi"}, "use -t");  // more threads than CPUs
  expect_clean_error({"bench", "-m", m, "-t", "512", "--pin", "-r", "1", "--no-probe"}, "use -t");
  expect_clean_error({"probe", "-t", "0"}, "-t: 0 is out of range (1 to 512)");
  expect_clean_error({"probe", "--buffer-mib", "1"}, "out of range");
  const auto r = run_command({EDGELLM_CLI, "frobnicate"});
  EXPECT_TRUE(r.exited && r.exit_code != 0);
  EXPECT_NE(r.err.find("unknown command"), std::string::npos);
}

TEST(Cli, PromptLongerThanContextIsRefused) {
  expect_clean_error({"run", "-m", test::stories260k(), "-c", "4", "--tokens", "1,2,3,4,5,6"}, "does not fit the context");
}

TEST(Cli, InspectShowsArchitectureAndJson) {
  auto r = run_command({EDGELLM_CLI, "inspect", test::stories260k()});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.out.find("architecture: llama"), std::string::npos);
  EXPECT_NE(r.out.find("blk.4.ffn_up.weight"), std::string::npos);
  EXPECT_NE(r.out.find("heads 8 (kv 4, head_dim 8)"), std::string::npos);
  r = run_command({EDGELLM_CLI, "inspect", "--json", test::stories260k()});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out.rfind("{\"file\":", 0), 0u);
  EXPECT_NE(r.out.find("\"n_head_kv\":4"), std::string::npos);
}

TEST(Cli, EvalDumpsRowMajorFloat32Logits) {
  const std::string out = test::temp_dir() + "/logits.bin";
  const auto r = run_command({EDGELLM_CLI, "eval", "-m", test::stories260k(), "--tokens", "1,403,407", "--dump-logits", out});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::ifstream f(out, std::ios::binary | std::ios::ate);
  EXPECT_EQ(int64_t(f.tellg()), int64_t(3 * 512 * sizeof(float)));
  // Greedy after BOS is 403 and after "BOS 403" is 407 (the golden sequence).
  std::vector<float> l(3 * 512);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(l.data()), std::streamsize(l.size() * sizeof(float)));
  EXPECT_EQ(std::max_element(l.begin(), l.begin() + 512) - l.begin(), 403);
  EXPECT_EQ(std::max_element(l.begin() + 512, l.begin() + 1024) - (l.begin() + 512), 407);
}

TEST(Cli, FailedWriteLeavesNoPartialFile) {
  const std::string out = "/no/such/dir/logits.bin";
  const auto r = run_command({EDGELLM_CLI, "eval", "-m", test::stories260k(), "--tokens", "1", "--dump-logits", out});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_NE(r.err.find("cannot create a file in /no/such/dir"), std::string::npos) << r.err;
}

TEST(Cli, BenchReportsPpAndTgRows) {
  const auto r = run_command({EDGELLM_CLI, "bench", "-m", test::stories260k(), "-p", "8", "-n", "4", "-r", "2",
                              "--no-probe", "-o", "json", "-t", "1"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.out.find("\"n_prompt\": 8,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"n_gen\": 4,"), std::string::npos) << r.out;
  const auto md = run_command({EDGELLM_CLI, "bench", "-m", test::stories260k(), "-p", "8", "-n", "0", "-r", "1", "--no-probe"});
  ASSERT_TRUE(md.exited_with(0)) << md.describe();
  EXPECT_NE(md.out.find("| llama ?B (guessed) all F32     |"), std::string::npos) << md.out;  // llama-bench's model column
}

TEST(Cli, ProbeMeasuresBandwidth) {
  const auto r = run_command({EDGELLM_CLI, "probe", "-t", "1", "--buffer-mib", "32", "--json"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.out.find("\"read_gbs_all\":"), std::string::npos) << r.out;
}

TEST(Cli, SeedMakesSamplingReproducible) {
  const std::vector<std::string> args = {EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "Once", "-n", "40",
                                         "--temp", "1.0", "--seed", "42"};
  const auto a = run_command(args), b = run_command(args);
  ASSERT_TRUE(a.exited_with(0)) << a.describe();
  EXPECT_EQ(a.out, b.out);
  auto other = args;
  other.back() = "43";
  EXPECT_NE(run_command(other).out, a.out);
}

}  // namespace
}  // namespace edgellm
