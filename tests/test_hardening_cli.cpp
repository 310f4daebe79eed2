// Issue 13's probe classes, as regression tests: every output path kind
// (regular, device, FIFO, planted symlink, directory), every input path kind,
// stdout on a full device, thread limits, odd tensor alignment, hostile text
// from a file reaching the terminal or JSON, and the flag quirks. Each bad
// case ends with one "error:" line and exit 1; each legitimate one works.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/text_escape.h"
#include "format/gguf.h"
#include "run_cli.h"
#include "session_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

namespace fs = std::filesystem;
using test::run_command;
using test::run_shell;
using test::RunResult;

RunResult cli(std::vector<std::string> args, const std::string& in = "", int timeout_s = 60) {
  args.insert(args.begin(), EDGELLM_CLI);
  return run_command(args, in, timeout_s);
}

void expect_one_error_line(const RunResult& r, const std::string& needle) {
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << r.err;
}

// A fresh directory under the test temp folder.
std::string fresh_dir(const std::string& name) {
  const std::string d = test::temp_dir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// --- output paths -----------------------------------------------------------

TEST(HardeningOutput, PlantedTmpSymlinkIsNeverFollowed) {
  const std::string d = fresh_dir("out-planted");
  const std::string victim = d + "/victim", out = d + "/logits.bin";
  { std::ofstream(victim) << "precious"; }
  fs::create_symlink(victim, out + ".tmp");
  fs::create_symlink(victim, d + "/synth.gguf.tmp");
  const auto before = listing(d);
  auto r = cli({"eval", "-m", test::stories260k(), "--tokens", "1,2", "--dump-logits", out});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  r = cli({"synth", "--shape", "tiny", "-o", d + "/synth.gguf", "--vocab-from", test::stories260k()});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(fs::file_size(out), 2 * 512 * sizeof(float));
  auto after = listing(d);
  after.erase("logits.bin");
  after.erase("synth.gguf");
  EXPECT_EQ(after, before);  // nothing else appeared or went away
}

TEST(HardeningOutput, SymlinkAtTheTargetIsReplacedNotFollowed) {
  const std::string d = fresh_dir("out-link");
  const std::string victim = d + "/victim", out = d + "/out.bin";
  { std::ofstream(victim) << "precious"; }
  fs::create_symlink(victim, out);
  const auto r = cli({"eval", "-m", test::stories260k(), "--tokens", "1", "--dump-logits", out});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out)));
}

TEST(HardeningOutput, FifoIsWrittenThrough) {
  const std::string d = fresh_dir("out-fifo");
  const std::string fifo = d + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  const auto r = cli({"eval", "-m", test::stories260k(), "--tokens", "1,2,3", "--dump-logits", fifo});
  reader.join();
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(got.size(), 3 * 512 * sizeof(float));
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(listing(d), std::set<std::string>{"pipe"});
}

TEST(HardeningOutput, DeviceIsWrittenThroughNotReplaced) {
  // A private copy of /dev/null (needs root to create); /dev/null itself is
  // never risked by a failing test.
  const std::string d = fresh_dir("out-dev");
  const std::string dev = d + "/null";
  if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  auto r = cli({"eval", "-m", test::stories260k(), "--tokens", "1", "--dump-logits", dev});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  r = cli({"synth", "--shape", "tiny", "-o", dev, "--vocab-from", test::stories260k()});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  struct stat st {};
  ASSERT_EQ(lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(listing(d), std::set<std::string>{"null"});
}

TEST(HardeningOutput, DirectoryIsRefused) {
  const std::string d = fresh_dir("out-dir");
  expect_one_error_line(cli({"eval", "-m", test::stories260k(), "--tokens", "1", "--dump-logits", d}),
                        "is a directory");
  expect_one_error_line(cli({"synth", "--shape", "tiny", "-o", d, "--vocab-from", test::stories260k()}),
                        "is a directory");
}

// --- input paths ------------------------------------------------------------

TEST(HardeningInput, DirectoriesFifosAndDevicesAreRefusedWithoutBlocking) {
  const std::string d = fresh_dir("in-kinds");
  const std::string fifo = d + "/fifo", msgs = d + "/msgs.json", m = test::stories260k();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  { std::ofstream(msgs) << R"([{"role":"user","content":"hi"}])"; }
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "-m", m, "-f", d}, "is a directory"},
      {{"run", "-m", m, "-f", fifo}, "FIFO"},
      {{"run", "-m", m, "-f", "/dev/zero"}, "character device"},
      {{"run", "-m", fifo, "-p", "hi"}, "FIFO"},
      {{"run", "-m", d, "-p", "hi"}, "is a directory"},
      {{"inspect", fifo}, "FIFO"},
      {{"template", "--template-file", d, "--messages", msgs}, "is a directory"},
      {{"template", "--chat-template", "chatml", "--messages", fifo}, "FIFO"},
      {{"template", "--chat-template", "chatml", "--messages", d}, "is a directory"},
      {{"tokenize", "--vocab", m, "-f", d}, "is a directory"},
      {{"perplexity", "-m", m, "-f", fifo}, "FIFO"},
      {{"run", "-m", m, "-p", "hi", "--session", d}, "is a directory"},
      {{"run", "-m", m, "-p", "hi", "--session", fifo}, "FIFO"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args[0] + " " + args[args.size() - 2] + " " + args.back());
    const RunResult r = cli(args, "", 30);
    EXPECT_FALSE(r.timed_out) << "blocked";
    expect_one_error_line(r, needle);
  }
}

TEST(HardeningInput, DashReadsStdin) {
  const auto a = cli({"run", "-m", test::stories260k(), "-f", "-", "-n", "8", "--temp", "0"}, "Once upon a time");
  const auto b = cli({"run", "-m", test::stories260k(), "-p", "Once upon a time", "-n", "8", "--temp", "0"});
  ASSERT_TRUE(a.exited_with(0)) << a.describe();
  EXPECT_EQ(a.out, b.out);
}

// --- stdout on a full device --------------------------------------------------

TEST(HardeningStdout, WriteErrorsAreErrors) {
  const std::string m = test::stories260k(), e = EDGELLM_CLI;
  const std::string d = fresh_dir("stdout-full");
  { std::ofstream(d + "/msgs.json") << R"([{"role":"user","content":"hi"}])"; }
  for (const std::string& args : std::vector<std::string>{"run -m " + m + " -p hi -n 8", "inspect " + m, "inspect --json " + m, "tokenize --vocab " + m + " -p hello",
        "template --chat-template chatml --messages " + d + "/msgs.json",
        "bench -m " + m + " -p 8 -n 4 -r 1 --no-probe", "plan -m " + m, "--help", "run --help"}) {
    SCOPED_TRACE(args);
    const RunResult r = run_shell(e + " " + args + " > /dev/full");
    EXPECT_TRUE(r.exited_with(1)) << r.describe();
    EXPECT_NE(r.err.find("error: cannot write to standard output"), std::string::npos) << r.describe();
  }
}

// --- thread limits ------------------------------------------------------------

TEST(HardeningThreads, ThreadsThatCannotStartEndWithAnError) {
#ifdef EDGELLM_TEST_ASAN
  GTEST_SKIP() << "ASan reserves terabytes of shadow memory: no address-space limit applies";
#else
  // 512 thread stacks (8 MiB each) do not fit under a 4 GB address-space limit.
  const RunResult r = run_shell("ulimit -v 4000000; exec " + std::string(EDGELLM_CLI) + " run -m " +
                                    test::stories260k() + " -p hi -n 2 -t 512",
                                "", 60);
  EXPECT_FALSE(r.timed_out) << "hung";
  expect_one_error_line(r, "cannot start thread");
#endif
}

// --- tensor alignment -----------------------------------------------------------

// stories260K rewritten with general.alignment 1 and an odd-length key, so its
// tensors sit at odd offsets; it must load (realigned) and generate exactly
// what the original does. Under UBSan a misaligned load would abort.
TEST(HardeningAlignment, OddAlignmentLoadsAndMatches) {
  const auto src = gguf::File::open(test::stories260k());
  gguf::Writer w(1);
  w.set("aaa.odd", gguf::Value::of_string("xyz"));
  for (const auto& [k, v] : src->metadata())
    if (k != "general.alignment") w.set(k, v);
  for (const auto& t : src->tensors())
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  const std::string path = test::temp_dir() + "/stories-align1.gguf";
  w.write(path);
  const auto odd = gguf::File::open(path);
  EXPECT_EQ(odd->alignment(), 1u);
  EXPECT_GT(odd->realigned_bytes(), 0u);
  for (const auto& t : odd->tensors()) EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 8, 0u) << t.name;
  const auto a = cli({"run", "-m", path, "-p", "Once upon a time", "-n", "24", "--temp", "0"});
  const auto b = cli({"run", "-m", test::stories260k(), "-p", "Once upon a time", "-n", "24", "--temp", "0"});
  ASSERT_TRUE(a.exited_with(0)) << a.describe();
  EXPECT_EQ(a.out, b.out);
  const auto plan = cli({"plan", "-m", path});
  ASSERT_TRUE(plan.exited_with(0)) << plan.describe();
  EXPECT_NE(plan.out.find("weights copied to aligned memory (general.alignment 1)"), std::string::npos) << plan.out;
}

// --- hostile text from a file ------------------------------------------------------

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

TEST(HardeningText, FileTextIsEscapedOnTheTerminalAndValidInJson) {
  const std::string evil = "ev\x1b[31mil\nsecond line\xff\xc2\x9b";
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::of_string(evil));
  w.set(std::string("key.") + evil, gguf::Value::of_string(evil));
  const float x[4] = {1, 2, 3, 4};
  w.add_tensor("t\x1b]0;title\x07", GgmlType::F32, {4}, x, sizeof x);
  const std::string path = test::temp_dir() + "/evil.gguf";
  w.write(path);

  // The load error names the architecture: one line, no raw escape byte.
  auto r = cli({"run", "-m", path, "-p", "hi"});
  expect_one_error_line(r, "ev\\e[31mil\\nsecond line\\xff\\u009b");
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);

  r = cli({"inspect", path});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x07"), std::string::npos);
  EXPECT_TRUE(valid_utf8(r.out));
  EXPECT_NE(r.out.find("ev\\e[31mil"), std::string::npos) << r.out;

  r = cli({"inspect", "--json", path});
  EXPECT_TRUE(valid_utf8(r.out)) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("\\u001b[31mil\\nsecond line\xef\xbf\xbd"), std::string::npos) << r.out;
}

TEST(HardeningText, EscapeControlAndJsonQuote) {
  EXPECT_EQ(escape_control("plain ü 字 🙂"), "plain ü 字 🙂");
  EXPECT_EQ(escape_control("a\nb\tc\rd\x1b" "e\x7f"), "a\\nb\\tc\\rd\\ee\\x7f");
  EXPECT_EQ(escape_control("\xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80"), "\\xc0\\x80 \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80");
  EXPECT_EQ(escape_control("\xc2\x85"), "\\u0085");
  EXPECT_EQ(escape_control("cut \xe5\xad"), "cut \\xe5\\xad");
}

// --- flag quirks ---------------------------------------------------------------------

TEST(HardeningFlags, BooleanFlagsHonourTheirValue) {
  const std::string m = test::stories260k();
  const auto ids = cli({"run", "-m", m, "-p", "Once", "-n", "4", "--temp", "0", "--ids"});
  const auto ids_false = cli({"run", "-m", m, "-p", "Once", "-n", "4", "--temp", "0", "--ids=false"});
  const auto text = cli({"run", "-m", m, "-p", "Once", "-n", "4", "--temp", "0"});
  ASSERT_TRUE(ids.exited_with(0) && ids_false.exited_with(0)) << ids.describe() << ids_false.describe();
  EXPECT_EQ(ids_false.out, text.out);
  EXPECT_NE(ids.out, text.out);
  EXPECT_EQ(cli({"run", "-m", m, "-p", "Once", "-n", "4", "--temp", "0", "--ids=1"}).out, ids.out);
  EXPECT_EQ(cli({"run", "-m", m, "-p", "Once", "-n", "4", "--temp", "0", "--no-bos=0"}).out, text.out);
  expect_one_error_line(cli({"run", "-m", m, "-p", "Once", "--pin=maybe"}), "--pin is a switch");
}

TEST(HardeningFlags, ClearMessagesAndExitOne) {
  const std::string m = test::stories260k();
  auto r = cli({});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  expect_one_error_line(cli({"frobnicate"}), "unknown command 'frobnicate'");
  expect_one_error_line(cli({"run", "-m", m, "--tokens", ""}), "--tokens: the list is empty");
  expect_one_error_line(cli({"run", "-m", m, "-n", "99999999999999999999"}), "-n: 99999999999999999999 is out of range");
  expect_one_error_line(cli({"run", "-m", m, "--no-bos"}), "--no-bos leaves nothing to evaluate");
  expect_one_error_line(cli({"run", "-m", m, "-ngl", "99"}), "CPU only");
  expect_one_error_line(cli({"run", "-m", m, "-cnv"}), "edgellm chat");
  expect_one_error_line(cli({"run", "-m", m, "--tmep", "1"}), "did you mean --temp?");
  expect_one_error_line(cli({"run", "-m", m, "--ctx", "64"}), "did you mean --ctx-size?");
  expect_one_error_line(cli({"run", "-p", "hi"}), "no model given; pass one with -m");
  // No prompt: generation from BOS alone, said on stderr.
  r = cli({"run", "-m", m, "-n", "4"});
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_NE(r.err.find("generating from BOS alone"), std::string::npos) << r.err;
}

TEST(HardeningFlags, PromptEscapesAsLlamaCpp) {
  const std::string m = test::stories260k();
  const auto escaped = cli({"run", "-m", m, "-p", "Tim\\nsaid", "-n", "12", "--temp", "0"});
  const auto real = cli({"run", "-m", m, "-p", "Tim\nsaid", "-n", "12", "--temp", "0", "--no-escape"});
  const auto literal = cli({"run", "-m", m, "-p", "Tim\\nsaid", "-n", "12", "--temp", "0", "--no-escape"});
  ASSERT_TRUE(escaped.exited_with(0)) << escaped.describe();
  EXPECT_EQ(escaped.out, real.out);
  EXPECT_NE(escaped.out, literal.out);
  EXPECT_EQ(cli({"run", "-m", m, "-p", "\\x54im", "-n", "6", "--temp", "0"}).out,
            cli({"run", "-m", m, "-p", "Tim", "-n", "6", "--temp", "0"}).out);
}

}  // namespace
}  // namespace edgellm
