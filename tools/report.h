// edgellm report: bench run records (docs/bench-record.md, written by
// `edgellm bench --scenario ... --out run.json`) side by side. A markdown
// report -- what differs between the runs' conditions, then one results table
// per scenario -- and one SVG line chart per question a person asks of the
// numbers: does decode slow down as the context fills (<scenario>-decode.svg),
// does memory grow (<scenario>-rss.svg), does the device throttle when hot
// (sustained.svg).
//
// Loading is strict: a file that is not a run record, or lacks a field the
// report uses, fails with the file and the field named ("b.json:
// records[1].decode_tps: expected a number, got a string"), never a blank cell.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edgellm::report {

constexpr const char* kRunSchema = "edgellm.bench.run/1";

struct RssSample {
  double t_ms = 0;
  double rss_bytes = 0, anon_bytes = 0;
};

// One scenario record: one scenario, one repetition.
struct ScenarioRecord {
  std::string scenario;
  int64_t run = 0;  // repetition
  int64_t n_ctx = 0, n_turns = 1, n_prompt = 0, n_gen = 0;
  bool context_limited = false;
  double ttft_ms = 0, prefill_tps = 0, decode_tps = 0;
  std::optional<double> ceiling_share;  // null when the host's bandwidth is unknown
  std::vector<double> window_tps;       // decode tok/s per window of window_tokens
  int64_t window_tokens = 32;
  double peak_rss_bytes = 0, peak_anon_bytes = 0, rss_swing_bytes = 0, kv_bytes = 0;
  std::vector<RssSample> rss_samples;
  std::string output_sha256;
};

struct SustainedSample {
  double t_s = 0;
  std::optional<double> decode_tps;  // null for the first sample
  std::optional<double> hottest_c;   // the hottest zone; null when no zone gave a temperature
  double rss_bytes = 0;
};

struct Sustained {
  double minutes = 0, interval_s = 0;
  int64_t chat_runs = 0;
  bool thermal_available = false;
  std::string note;
  std::vector<SustainedSample> samples;
};

// The conditions of a run: what decides whether two runs are comparable.
struct Conditions {
  std::string created, version, build_type;
  std::string cpu_model, kernel, machine, isa;
  int64_t cores = 0;
  std::optional<double> read_gbs;
  std::string model_path, model_type, quant, sha256;
  int64_t params = 0;
  int64_t threads = 0, n_batch = 0, runs = 0;  // n_ctx is per scenario (ScenarioRecord)
  std::string load_mode, type_k, type_v, chat_template;
  double load_ms = 0;
};

struct RunFile {
  std::string path;   // as given; names the file in messages and the legend
  std::string label;  // "A: qwen2 0.5B Q4_0 · 4t", set by label_runs
  Conditions cond;
  std::vector<ScenarioRecord> records;
  std::optional<Sustained> sustained;
};

// Parses and checks one run record; `source` names it in every message.
RunFile parse_run(const std::string& text, const std::string& source);
// Reads `path` (a regular file) and parses it.
RunFile load_run(const std::string& path);

// Gives each run a short unique label: a letter, the model, and whichever
// conditions differ across the runs (threads, ISA, host, version, ...).
void label_runs(std::vector<RunFile>& runs);

struct ReportFile {
  std::string name;  // a plain file name ("chat-decode.svg"), never a path
  std::string text;
};

struct Report {
  std::string markdown;
  std::vector<ReportFile> charts;
};

// The report over labelled runs. Charts are linked from the markdown as
// chart_prefix + name (e.g. "" when report.md sits next to them).
Report make_report(const std::vector<RunFile>& runs, const std::string& chart_prefix = "");

// Pieces make_report uses, public for tests.
std::string markdown_escape(const std::string& s);
std::string chart_file_stem(const std::string& scenario);  // "chat"; anything unsafe in a file name becomes '_'
// The scenarios in the order first run, each with its (unique) chart file stem.
std::vector<std::pair<std::string, std::string>> scenario_stems(const std::vector<RunFile>& runs);
std::vector<ReportFile> make_charts(const std::vector<RunFile>& runs);

}  // namespace edgellm::report
