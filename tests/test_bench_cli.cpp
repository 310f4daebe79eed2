// `edgellm bench` as a drop-in for llama-bench: its list and range syntax,
// its JSON field names and types (a script written for llama-bench reads our
// output unchanged), jsonl, csv, its padded markdown table, the model type
// from general.file_type, and the thread default from the CPU affinity.
// Shapes only, never timings: every run is -r 1 on tiny models.
#include <gtest/gtest.h>
#include <sched.h>

#include <sstream>

#include "base/cpu_affinity.h"
#include "base/error.h"
#include "run_cli.h"
#include "template/json.h"
#include "test_models.h"
#include "tools/bench.h"
#include "tools/synth.h"

namespace edgellm {
namespace {

using test::run_command;
using tmpl::Json;

test::RunResult bench(std::vector<std::string> args) {
  std::vector<std::string> argv = {EDGELLM_CLI, "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

// llama-bench's fields (tools/llama-bench/llama-bench.cpp) and their JSON kind.
const std::vector<std::pair<std::string, Json::Type>>& llama_bench_fields() {
  using T = Json::Type;
  static const std::vector<std::pair<std::string, Json::Type>> f = {
      {"build_commit", T::String}, {"build_number", T::Number}, {"cpu_info", T::String},
      {"gpu_info", T::String}, {"backends", T::String}, {"model_filename", T::String},
      {"model_type", T::String}, {"model_size", T::Number}, {"model_n_params", T::Number},
      {"n_batch", T::Number}, {"n_ubatch", T::Number}, {"n_threads", T::Number},
      {"cpu_mask", T::String}, {"cpu_strict", T::Bool}, {"poll", T::Number},
      {"type_k", T::String}, {"type_v", T::String}, {"n_gpu_layers", T::Number},
      {"n_cpu_moe", T::Number}, {"split_mode", T::String}, {"main_gpu", T::Number},
      {"no_kv_offload", T::Bool}, {"flash_attn", T::Number}, {"devices", T::String},
      {"tensor_split", T::String}, {"tensor_buft_overrides", T::String}, {"load_mode", T::String},
      {"lazy_mode", T::String}, {"use_mmap", T::Bool}, {"embeddings", T::Bool},
      {"no_op_offload", T::Number}, {"no_host", T::Bool}, {"fit_target", T::Number},
      {"fit_min_ctx", T::Number}, {"n_prompt", T::Number}, {"n_gen", T::Number},
      {"n_depth", T::Number}, {"test_time", T::String}, {"avg_ns", T::Number},
      {"stddev_ns", T::Number}, {"avg_ts", T::Number}, {"stddev_ts", T::Number},
      {"samples_ns", T::Array}, {"samples_ts", T::Array},
  };
  return f;
}

double number(const Json& o, const char* key) {
  const Json* v = o.find(key);
  return v && v->is_number() ? v->as_number() : -1;
}

void expect_clean_error(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = bench(args);
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.describe();
}

// The acceptance command of issue 14.
TEST(BenchCli, JsonIsAnArrayWithLlamaBenchFields) {
  const std::string m = test::stories260k();
  const auto r = bench({"-m", m, "-p", "64,128", "-n", "16", "-t", "1,2", "-r", "1", "-o", "json"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const Json doc = Json::parse(r.out, "bench -o json");
  ASSERT_TRUE(doc.is_array()) << r.out;
  // llama-bench's order: threads outer, then pp tests, then tg tests.
  const std::vector<std::tuple<int, int, int>> want = {{1, 64, 0}, {1, 128, 0}, {1, 0, 16},
                                                       {2, 64, 0}, {2, 128, 0}, {2, 0, 16}};
  ASSERT_EQ(doc.items().size(), want.size()) << r.out;
  for (size_t i = 0; i < want.size(); ++i) {
    const Json& t = doc.items()[i];
    ASSERT_TRUE(t.is_object());
    for (const auto& [name, type] : llama_bench_fields()) {
      const Json* v = t.find(name);
      ASSERT_NE(v, nullptr) << "no field " << name << " in " << t.dump();
      EXPECT_EQ(int(v->type()), int(type)) << name << " in " << t.dump();
    }
    const auto [threads, pp, tg] = want[i];
    EXPECT_EQ(number(t, "n_threads"), threads);
    EXPECT_EQ(number(t, "n_prompt"), pp);
    EXPECT_EQ(number(t, "n_gen"), tg);
    EXPECT_EQ(number(t, "n_depth"), 0);
    EXPECT_EQ(t.find("model_filename")->as_string(), m);
    // llama.cpp's own description of this file (no general.file_type in it).
    EXPECT_EQ(t.find("model_type")->as_string(), "llama ?B (guessed) all F32");
    EXPECT_EQ(number(t, "model_n_params"), 292800);
    EXPECT_EQ(t.find("backends")->as_string(), "CPU");
    EXPECT_EQ(t.find("samples_ns")->items().size(), 1u);
    EXPECT_EQ(t.find("samples_ts")->items().size(), 1u);
    EXPECT_GT(number(t, "avg_ts"), 0);
    EXPECT_GT(number(t, "avg_ns"), 0);
    // Ours: present, null where they do not apply.
    for (const char* key : {"isa", "gbs", "bw_share", "load_ms", "peak_rss_bytes", "peak_anon_bytes", "probe"})
      EXPECT_NE(t.find(key), nullptr) << key;
    EXPECT_EQ(t.find("gbs")->is_null(), tg == 0) << t.dump();
    EXPECT_EQ(t.find("bw_share")->is_null(), tg == 0) << t.dump();  // the probe ran
    EXPECT_TRUE(t.find("probe")->is_object());
    // 1 MiB of weights: the cache, not the bus, so no read around the test;
    // the share is against the start-up probe.
    EXPECT_TRUE(t.find("read_gbs_before")->is_null()) << t.dump();
    EXPECT_TRUE(t.find("read_gbs_after")->is_null()) << t.dump();
    if (tg > 0)
      EXPECT_NEAR(number(t, "bw_share"), number(t, "gbs") / number(*t.find("probe"), "read_gbs_all"), 1e-3)
          << t.dump();
  }
}

// A model of 64 MiB and more: each tg test's share is against the bus read
// over its weights right before and right after the test, the larger of two.
TEST(BenchCli, ShareIsAgainstTheBusReadAroundTheTest) {
  SynthOptions o;
  o.arch = "llama";
  o.shape = "smollm2-135m";  // 139 MiB at q4_0
  o.type = "q4_0";
  o.vocab_from = test::shared_dir() + "/testdata/vocab/ggml-vocab-llama-bpe.gguf";
  const std::string m = test::temp_dir() + "/bench-135m-q4_0.gguf";
  synth_model(o, m);
  const auto r = bench({"-m", m, "-p", "8", "-n", "4", "-r", "1", "-t", "1", "--no-warmup", "-o", "json"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const Json doc = Json::parse(r.out, "bench -o json");
  ASSERT_EQ(doc.items().size(), 2u) << r.out;
  const Json& pp = doc.items()[0];
  EXPECT_TRUE(pp.find("read_gbs_before")->is_null()) << pp.dump();  // tg tests only
  const Json& tg = doc.items()[1];
  const double before = number(tg, "read_gbs_before"), after = number(tg, "read_gbs_after");
  EXPECT_GT(before, 0) << tg.dump();
  EXPECT_GT(after, 0) << tg.dump();
  EXPECT_NEAR(number(tg, "bw_share"), number(tg, "gbs") / std::max(before, after), 1e-3) << tg.dump();
  // --no-probe: no read at all.
  const auto q = bench({"-m", m, "-p", "0", "-n", "4", "-r", "1", "-t", "1", "--no-warmup", "--no-probe", "-o", "json"});
  ASSERT_TRUE(q.exited_with(0)) << q.describe();
  const Json quiet = Json::parse(q.out, "bench -o json");
  ASSERT_EQ(quiet.items().size(), 1u) << q.out;
  const Json& t = quiet.items()[0];
  EXPECT_TRUE(t.find("read_gbs_before")->is_null()) << t.dump();
  EXPECT_TRUE(t.find("bw_share")->is_null()) << t.dump();
}

// What a llama-bench user's script does with its JSON (bench/compare-llamacpp.sh
// reads llama-bench this way), run on ours.
TEST(BenchCli, LlamaBenchScriptReadsOurJson) {
  if (!test::run_shell("command -v python3").exited_with(0)) GTEST_SKIP() << "no python3";
  const auto r = bench({"-m", test::stories260k(), "-p", "16", "-n", "4", "-r", "1", "-t", "1", "--no-probe", "-o", "json"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const auto py = test::run_shell(
      "python3 -c \"import json, sys\n"
      "for t in json.load(sys.stdin):\n"
      "    test = ('pp%d' % t['n_prompt']) if t['n_prompt'] else ('tg%d' % t['n_gen'])\n"
      "    print(t['model_type'], t['n_threads'], test, '%.0f' % (t['avg_ts'] * 0), len(t['samples_ts']))\"",
      r.out);
  ASSERT_TRUE(py.exited_with(0)) << py.describe();
  EXPECT_EQ(py.out, "llama ?B (guessed) all F32 1 pp16 0 1\nllama ?B (guessed) all F32 1 tg4 0 1\n");
}

TEST(BenchCli, JsonlCsvAndDepth) {
  const std::string m = test::stories260k();
  // -d and -pg: every depth runs every test; pp+tg is one test.
  auto r = bench({"-m", m, "-p", "16", "-n", "4", "-pg", "8,4", "-d", "0,8", "-r", "1", "-t", "1", "--no-probe", "-o", "jsonl"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::istringstream lines(r.out);
  std::vector<std::tuple<int, int, int>> got;
  for (std::string line; std::getline(lines, line);) {
    const Json t = Json::parse(line, "jsonl line");
    ASSERT_TRUE(t.is_object());
    for (const auto& f : llama_bench_fields()) EXPECT_NE(t.find(f.first), nullptr) << f.first;
    EXPECT_TRUE(t.find("probe")->is_null());
    EXPECT_TRUE(t.find("bw_share")->is_null());
    got.push_back({int(number(t, "n_prompt")), int(number(t, "n_gen")), int(number(t, "n_depth"))});
  }
  const std::vector<std::tuple<int, int, int>> want = {{16, 0, 0}, {0, 4, 0}, {8, 4, 0},
                                                       {16, 0, 8}, {0, 4, 8}, {8, 4, 8}};
  EXPECT_EQ(got, want) << r.out;

  r = bench({"-m", m, "-p", "16", "-n", "0", "-b", "4,16", "-r", "1", "-t", "1", "--no-probe", "-o", "csv"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::istringstream csv(r.out);
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,", 0), 0u)
      << header;
  EXPECT_NE(header.find(",n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts"), std::string::npos);
  int rows = 0;
  while (std::getline(csv, row)) {
    ++rows;
    EXPECT_EQ(row.front(), '"');
    EXPECT_EQ(std::count(row.begin(), row.end(), '"'), 2 * (std::count(header.begin(), header.end(), ',') + 1)) << row;
  }
  EXPECT_EQ(rows, 2);  // one per batch size
}

// The table llama-bench prints, column for column, with ours after t/s.
TEST(BenchCli, MarkdownIsLlamaBenchsTable) {
  const auto r = bench({"-m", test::stories260k(), "-p", "16", "-n", "4", "-d", "0,8", "-r", "1", "-t", "1", "--no-probe"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::istringstream in(r.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 8u) << r.out;
  EXPECT_EQ(lines[0].rfind("| model                          |       size |     params | backend    | threads |"
                           "            test |                  t/s |", 0), 0u) << r.out;
  EXPECT_EQ(lines[1].rfind("| ------------------------------ | ---------: | ---------: | ---------- | ------: |"
                           " --------------: | -------------------: |", 0), 0u) << r.out;
  // Padded: every table line has the same width on screen ("±" is one column).
  auto columns = [](const std::string& s) {
    return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  };
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(columns(lines[i]), columns(lines[0])) << lines[i];
  const std::vector<std::string> tests = {"pp16", "tg4", "pp16 @ d8", "tg4 @ d8"};
  for (size_t i = 0; i < tests.size(); ++i) {
    EXPECT_EQ(lines[2 + i].rfind("| llama ?B (guessed) all F32     |   1.12 MiB |     0.29 M | CPU        |       1 |", 0), 0u)
        << lines[2 + i];
    EXPECT_NE(lines[2 + i].find(" " + tests[i] + " |"), std::string::npos) << lines[2 + i];
  }
  EXPECT_EQ(lines[7].rfind("build: ", 0), 0u) << r.out;
}

// general.file_type names the file, as llama.cpp does: a Q4_K_M file mixes
// q4_K, q6_K and f32 tensors, and no one tensor type says "Q4_K - Medium".
TEST(BenchCli, ModelTypeComesFromFileType) {
  for (const auto& [type, name] : std::vector<std::pair<std::string, std::string>>{
           {"q4_k_m", "Q4_K - Medium"}, {"q8_0", "Q8_0"}, {"f16", "F16"}}) {
    const auto r = bench({"-m", test::synth_tiny("qwen2", type), "-p", "8", "-n", "0", "-r", "1", "-t", "1",
                          "--no-probe", "--no-warmup", "-o", "jsonl"});
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    const Json t = Json::parse(r.out.substr(0, r.out.find('\n')), "jsonl");
    EXPECT_EQ(t.find("model_type")->as_string(), "qwen2 ?B " + name) << type;
  }
}

// With no -t, one thread per CPU the process may run on (not per CPU of the machine).
TEST(BenchCli, DefaultThreadsFollowTheAffinity) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(allowed_cpu_count(), CPU_COUNT(&set));
  const std::string args = " bench -m " + test::stories260k() + " -p 8 -n 0 -r 1 --no-probe --no-warmup -o jsonl";
  auto r = test::run_shell(std::string(EDGELLM_CLI) + args);
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(number(Json::parse(r.out, "jsonl"), "n_threads"), CPU_COUNT(&set));
  if (!test::run_shell("command -v taskset").exited_with(0)) GTEST_SKIP() << "no taskset";
  int first = 0;
  while (!CPU_ISSET(first, &set)) ++first;
  r = test::run_shell("taskset -c " + std::to_string(first) + " " + EDGELLM_CLI + args);
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(number(Json::parse(r.out, "jsonl"), "n_threads"), 1);
}

TEST(BenchCli, RejectsBadListsWithOneLine) {
  const std::string m = test::stories260k();
  expect_clean_error({"-m", m, "-p", "64,,128"}, "-p: '64,,128' is not a list");
  expect_clean_error({"-m", m, "-t", "0-"}, "-t: '0-' is not a list");
  expect_clean_error({"-m", m, "-n", "-5"}, "-n: '-5' is not a list");
  expect_clean_error({"-m", m, "-p", "64,"}, "is not a list");
  expect_clean_error({"-m", m, "-p", ""}, "is not a list");
  expect_clean_error({"-m", m, "-t", "0"}, "-t: 0 is out of range (1 to 512)");
  expect_clean_error({"-m", m, "-b", "0,8"}, "-b: 0 is out of range");
  expect_clean_error({"-m", m, "-d", "8-0"}, "runs backwards");
  expect_clean_error({"-m", m, "-p", "8-64*1"}, "does not advance");
  expect_clean_error({"-m", m, "-p", "0-64*2"}, "does not advance");
  expect_clean_error({"-m", m, "-p", "1-100000"}, "more than 4096 values");
  expect_clean_error({"-m", m, "-pg", "512"}, "-pg: '512' is not a pair");
  expect_clean_error({"-m", m, "-o", "xml"}, "unknown output format 'xml' (md, json, jsonl, csv)");
  expect_clean_error({"-m", m, "-d", "100000", "--no-probe"}, "the largest test needs");
  expect_clean_error({"-m", m, "-t", "1,512", "--pin", "-r", "1", "--no-probe"}, "use -t");
  // A bad model anywhere in the list fails before anything is measured or printed.
  expect_clean_error({"-m", m, "-m", "/no/such/model.gguf", "-r", "1", "--no-probe"}, "cannot open");
}

TEST(BenchList, LlamaBenchSyntax) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(parse_bench_list("64,128,512", "-p", 0, 1 << 20), (V{64, 128, 512}));
  EXPECT_EQ(parse_bench_list("1-4", "-t", 1, 512), (V{1, 2, 3, 4}));
  EXPECT_EQ(parse_bench_list("64-256+64", "-p", 0, 1 << 20), (V{64, 128, 192, 256}));
  EXPECT_EQ(parse_bench_list("128-1024*2", "-p", 0, 1 << 20), (V{128, 256, 512, 1024}));
  EXPECT_EQ(parse_bench_list("1-10*3,0", "-d", 0, 1 << 20), (V{1, 3, 9, 0}));
  EXPECT_EQ(parse_bench_list("7", "-n", 0, 1 << 20), (V{7}));
  EXPECT_EQ(parse_bench_list("5-5+9", "-n", 0, 1 << 20), (V{5}));
  EXPECT_THROW(parse_bench_list("1,2,", "-p", 0, 100), Error);
  EXPECT_THROW(parse_bench_list("1 ,2", "-p", 0, 100), Error);
  EXPECT_THROW(parse_bench_list("99999999999999999999", "-p", 0, 100), Error);
}

}  // namespace
}  // namespace edgellm
