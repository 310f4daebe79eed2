// `edgellm bench --scenario`: the record's fields and their meaning on the
// trained stories260K (greedy, deterministic), the multiturn cache reuse,
// context limits, the sustained loop's sampling, the host readings with a
// fake /sys, and clear refusals. Shapes and relations only, never timings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "run_cli.h"
#include "template/json.h"
#include "test_models.h"
#include "tools/host_state.h"
#include "tools/scenario.h"
#include "tools/scenario_prompts.h"

namespace edgellm {
namespace {

using tmpl::Json;

ScenarioParams params(std::vector<std::string> scenarios) {
  ScenarioParams p;
  p.model = test::stories260k();
  p.scenarios = std::move(scenarios);
  p.n_threads = 1;
  p.probe = false;  // no bandwidth probe: fast, and the ceiling is then null
  return p;
}

TEST(BenchScenario, ChatRecordIsDeterministicAndComplete) {
  ScenarioParams p = params({"chat"});
  p.runs = 2;
  int seen = 0;
  const BenchRun run = run_scenarios(p, [&](const BenchRun&, const ScenarioRecord&) { ++seen; });
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_EQ(seen, 2);
  for (const ScenarioRecord& r : run.records) {
    EXPECT_EQ(r.scenario, "chat");
    EXPECT_EQ(r.n_turns, 1);
    EXPECT_EQ(r.n_gen, 128);  // end of generation is never chosen: the whole budget
    EXPECT_GT(r.n_prompt, 20);
    EXPECT_EQ(r.context_tokens, r.n_prompt + r.n_gen - 1);  // the last token is sampled, not yet decoded
    EXPECT_EQ(r.window_tps.size(), size_t(127 / kWindowTokens));
    EXPECT_GT(r.ttft_ms, 0);
    EXPECT_GT(r.decode_tps, 0);
    EXPECT_GT(r.peak_rss, 0u);
    EXPECT_GE(r.peak_rss, r.peak_anon);
    EXPECT_GT(r.kv_bytes, 0u);
    EXPECT_EQ(r.rss_swing, 0u);  // one turn: nothing after it
    EXPECT_FALSE(r.ceiling_tps.has_value());  // no probe, no ceiling
    EXPECT_EQ(r.output_sha256.size(), 64u);
    EXPECT_FALSE(r.output_preview.empty());
  }
  // Greedy on the same session: the same output, run after run.
  EXPECT_EQ(run.records[0].output_sha256, run.records[1].output_sha256);
  EXPECT_EQ(run.model_sha256.size(), 64u);
  EXPECT_GT(run.load_ms, 0);
}

TEST(BenchScenario, MultiturnReusesTheCacheAcrossTurns) {
  const BenchRun run = run_scenarios(params({"multiturn"}), nullptr);
  ASSERT_EQ(run.records.size(), 1u);
  const ScenarioRecord& r = run.records[0];
  ASSERT_GE(r.turns.size(), 3u);
  EXPECT_EQ(r.turns[0].n_cached, 0);
  for (size_t t = 1; t < r.turns.size(); ++t) {
    // Earlier turns are not prefilled again: at least the previous prompt is
    // still cached, and what is fed is far less than the whole context.
    EXPECT_GE(r.turns[t].n_cached, r.turns[t - 1].n_cached + r.turns[t - 1].n_prompt) << "turn " << t + 1;
    EXPECT_LT(r.turns[t].n_prompt, r.turns[t].context_tokens / 2) << "turn " << t + 1;
  }
  int64_t prompt = 0, gen = 0;
  for (const TurnStats& t : r.turns) prompt += t.n_prompt, gen += t.n_gen;
  EXPECT_EQ(r.n_prompt, prompt);
  EXPECT_EQ(r.n_gen, gen);
  EXPECT_EQ(r.n_turns, int64_t(r.turns.size()));
  // Memory sampled every window and at each turn's end.
  EXPECT_GE(r.rss_samples.size(), r.turns.size() + r.window_tps.size());
}

TEST(BenchScenario, SmallContextShortensAndSaysSo) {
  ScenarioParams p = params({"summary", "multiturn"});
  p.n_ctx = 256;
  const BenchRun run = run_scenarios(p, nullptr);
  for (const ScenarioRecord& r : run.records) {
    EXPECT_TRUE(r.context_limited) << r.scenario;
    EXPECT_EQ(r.n_ctx, 256);
    EXPECT_LE(r.context_tokens, 256) << r.scenario;
    EXPECT_EQ(r.turns[0].n_gen, 64) << r.scenario;  // a quarter of the context
  }
  // Not even one sentence and the replies fit: refused, naming the context.
  p.n_ctx = 16;
  try {
    run_scenarios(p, nullptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("context of 16"), std::string::npos) << e.what();
  }
}

TEST(BenchScenario, SustainedSamplesEveryInterval) {
  ScenarioParams p = params({});
  p.sustained_minutes = 0.02;  // 1.2 s
  p.sustained_interval_s = 0.1;
  const BenchRun run = run_scenarios(p, nullptr);
  ASSERT_TRUE(run.sustained.has_value());
  const SustainedRun& s = *run.sustained;
  EXPECT_TRUE(run.records.empty());
  EXPECT_GE(s.chat_runs, 1);
  ASSERT_GE(s.samples.size(), 10u);
  EXPECT_FALSE(s.samples.front().decode_tps.has_value());  // the baseline at t = 0
  for (size_t i = 1; i < s.samples.size(); ++i) {
    EXPECT_GT(s.samples[i].t_s, s.samples[i - 1].t_s);
    EXPECT_GT(s.samples[i].rss, 0u);
  }
  EXPECT_FALSE(s.note.empty());
  // The JSON says null for what this host does not expose, never a number.
  const Json doc = Json::parse(bench_run_json(run), "run");
  for (const Json& x : doc.find("sustained")->find("samples")->items())
    EXPECT_EQ(x.find("temps_c")->is_null(), !s.thermal_available);
}

TEST(BenchScenario, JsonHasTheDocumentedFields) {
  ScenarioParams p = params({"chat"});
  p.probe = true;  // the ceiling and its share need the measured bandwidth
  const Json doc = Json::parse(bench_run_json(run_scenarios(p, nullptr)), "run");
  EXPECT_EQ(doc.find("schema")->as_string(), "edgellm.bench.run/1");
  for (const char* k : {"created", "version", "build", "host", "model", "settings", "load_ms", "records"})
    EXPECT_NE(doc.find(k), nullptr) << k;
  for (const char* k : {"cpu_model", "cores", "kernel", "read_gbs", "isa", "thermal", "cpu_freq"})
    EXPECT_NE(doc.find("host")->find(k), nullptr) << k;
  EXPECT_GT(doc.find("host")->find("read_gbs")->as_number(), 0);
  const Json& r = doc.find("records")->items().at(0);
  for (const char* k : {"scenario", "ttft_ms", "prefill_tps", "decode_tps", "peak_rss_bytes", "peak_anon_bytes",
                        "rss_swing_bytes", "kv_bytes", "model_sha256", "version", "threads", "isa", "load_mode",
                        "decode_window_tps", "decode_ceiling_tps", "decode_ceiling_share", "rss_samples", "turns",
                        "output_sha256"})
    EXPECT_NE(r.find(k), nullptr) << k;
  EXPECT_GT(r.find("decode_ceiling_share")->as_number(), 0);
  EXPECT_EQ(r.find("model_sha256")->as_string(), doc.find("model")->find("sha256")->as_string());
}

TEST(BenchScenario, BuiltinPromptsHaveTheirSizes) {
  // ~800 tokens at ~4.5 characters per token of English in a BPE vocabulary.
  EXPECT_GT(summary_document().size(), 3200u);
  EXPECT_LT(summary_document().size(), 4400u);
  EXPECT_EQ(builtin_scenario("multiturn").turns.size(), 8u);
  EXPECT_THROW(builtin_scenario("poem"), Error);
}

TEST(HostState, ReadsAFakeSysTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(test::temp_dir()) / "fake-sys";
  fs::create_directories(root / "class/thermal/thermal_zone0");
  fs::create_directories(root / "class/thermal/thermal_zone1");
  fs::create_directories(root / "class/thermal/thermal_zone2");
  std::ofstream(root / "class/thermal/thermal_zone0/type") << "cpu-big\n";
  std::ofstream(root / "class/thermal/thermal_zone0/temp") << "61500\n";
  std::ofstream(root / "class/thermal/thermal_zone1/temp") << "44000\n";  // no type: named by its directory
  std::ofstream(root / "class/thermal/thermal_zone2/temp") << "N/A\n";    // unreadable: skipped
  fs::create_directories(root / "devices/system/cpu/cpu0/cpufreq");
  fs::create_directories(root / "devices/system/cpu/cpu1");  // offline or no cpufreq
  std::ofstream(root / "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq") << "1804000\n";
  std::ofstream(root / "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") << "3000000\n";
  std::ofstream(root / "devices/system/cpu/cpu0/cpufreq/scaling_governor") << "schedutil\n";

  const ThermalReading t = read_thermal(root.string());
  ASSERT_TRUE(t.available);
  ASSERT_EQ(t.zones.size(), 2u);
  EXPECT_EQ(t.zones[0].name, "cpu-big");
  EXPECT_DOUBLE_EQ(t.zones[0].temp_c, 61.5);
  EXPECT_EQ(t.zones[1].name, "thermal_zone1");
  EXPECT_DOUBLE_EQ(*t.hottest_c(), 61.5);

  const FreqReading f = read_cpu_freq(root.string());
  ASSERT_TRUE(f.available);
  ASSERT_EQ(f.cur_mhz.size(), 2u);
  EXPECT_DOUBLE_EQ(f.cur_mhz[0], 1804);
  EXPECT_DOUBLE_EQ(f.cur_mhz[1], -1);
  EXPECT_EQ(f.governor, "schedutil");

  const ThermalReading none = read_thermal((root / "nowhere").string());
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.note.find("no "), std::string::npos);
  EXPECT_FALSE(none.hottest_c().has_value());
  EXPECT_FALSE(read_cpu_freq((root / "nowhere").string()).available);
}

test::RunResult bench(std::vector<std::string> args) {
  std::vector<std::string> argv = {EDGELLM_CLI, "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_command(argv);
}

TEST(BenchScenarioCli, WritesTheRecordAndRefusesMistakes) {
  const std::string out = test::temp_dir() + "/scenario-run.json";
  const test::RunResult ok =
      bench({"-m", test::stories260k(), "--scenario", "chat", "-t", "1", "--no-probe", "-o", "csv", "--out", out});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("scenario,run,", 0), 0u) << ok.out;
  std::ifstream f(out);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(Json::parse(text, out).find("records")->items().size(), 1u);

  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::string m = test::stories260k();
  const Case cases[] = {
      {{"-m", m, "--scenario", "poem"}, "unknown scenario 'poem'"},
      {{"-m", m, "--scenario", "chat", "-p", "64"}, "-p belongs to the pp/tg tests"},
      {{"-m", m, "-m", m, "--scenario", "chat"}, "exactly one -m"},
      {{"-m", m, "--scenario", "chat", "-o", "jsonl"}, "use md, csv or json"},
      {{"-m", m, "--out", "x.json"}, "belong to --scenario runs"},
      {{"-m", m, "--scenario", "chat", "--chat-template", "nope"}, "no built-in template 'nope'"},
      {{"-m", m, "--scenario", "chat", "--out", "/nonexistent-dir/run.json"}, "/nonexistent-dir"},
      {{"-m", m, "--scenario", "chat", "--prompt-file", "/nonexistent-prompt.txt"}, "nonexistent-prompt.txt"},
  };
  for (const Case& c : cases) {
    const test::RunResult r = bench(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.says;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << c.says << ": " << r.out;  // refused before anything ran
  }
}

}  // namespace
}  // namespace edgellm
