// `edgellm bench --scenario`: what a user of an app waits for, measured with
// its conditions pinned and recorded (docs/bench-record.md). A scenario is a
// fixed conversation (tools/scenario_prompts.h) run greedily through the
// model's chat template on one session, turn after turn, the KV cache kept
// between turns as `edgellm chat` keeps it: time to first token, prefill and
// decode speed (overall and per 32-token window), memory over time, and a
// hash of the output ids as a quality fingerprint. `--sustained` repeats the
// chat scenario back to back and samples speed, memory, temperatures and
// clocks every 10 s.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "tools/host_state.h"
#include "tools/probe.h"

namespace edgellm {

struct ScenarioParams {
  std::string model;
  std::vector<std::string> scenarios;  // "chat", "summary", "multiturn"
  int n_threads = 0;                   // 0: default_thread_count()
  bool pin = false;
  int runs = 1;
  std::string prompt_file;             // replaces the first turn's message ("" = built-in)
  std::string chat_template;           // a built-in template's name instead of the model's ("" = the file's)
  int64_t n_ctx = 0;                   // 0: each scenario's own (capped at the model's)
  int64_t n_batch = 512;
  gguf::Residency residency = gguf::Residency::Auto;
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;
  bool swa_full = false;  // --swa-full
  uint64_t mem_limit = 0;              // refuse a plan whose footprint exceeds it (0 = none)
  double sustained_minutes = 0;        // > 0: also the sustained chat loop
  double sustained_interval_s = 10;
  bool probe = true;                   // measure bandwidth (the ceiling needs it)
};

struct TurnStats {
  int turn = 0;
  int64_t n_prompt = 0, n_cached = 0, n_gen = 0, context_tokens = 0;
  double ttft_ms = 0, prefill_tps = 0, decode_tps = 0;
};

struct MemPoint {
  double t_ms = 0;
  uint64_t rss = 0, anon = 0;
};

struct ScenarioRecord {
  std::string scenario;
  int run = 0;
  int64_t n_ctx = 0, n_turns = 0, n_prompt = 0, n_gen = 0, context_tokens = 0;
  bool context_limited = false;
  double ttft_ms = 0, prefill_tps = 0, decode_tps = 0;
  std::vector<double> window_tps;  // per kWindowTokens decode steps
  std::optional<double> ceiling_tps, ceiling_share;
  uint64_t peak_rss = 0, peak_anon = 0, rss_swing = 0, kv_bytes = 0;
  std::vector<MemPoint> rss_samples;
  std::vector<TurnStats> turns;
  std::string output_sha256, output_preview;
};

struct SustainedSample {
  double t_s = 0;
  std::optional<double> decode_tps;  // over the interval since the previous sample
  int64_t tokens = 0;                // generated in that interval
  uint64_t rss = 0, anon = 0;
  ThermalReading thermal;
  FreqReading freq;
};

struct SustainedRun {
  double minutes = 0, interval_s = 10;
  int chat_runs = 0;
  bool thermal_available = false;
  std::string note;
  std::vector<SustainedSample> samples;
};

struct BenchRun {
  std::string created, version, build_commit, build_type;
  int build_number = 0;
  // host
  std::string cpu_model, kernel, machine, isa;
  int cores = 0;
  std::optional<ProbeResult> probe;
  ThermalReading thermal;
  FreqReading freq;
  // model
  std::string model_path, model_sha256, arch, model_type, quant;
  uint64_t file_bytes = 0, params = 0, weight_bytes_per_token = 0;
  int64_t n_ctx_train = 0;
  // settings
  int threads = 0, runs = 1;
  std::string load_mode, type_k, type_v, prompt_file, chat_template;
  int64_t n_batch = 0;
  double load_ms = 0;
  std::vector<ScenarioRecord> records;
  std::optional<SustainedRun> sustained;
};

constexpr int kWindowTokens = 32;

// Runs every scenario `runs` times (then the sustained loop), handing each
// record to on_record as it completes; returns the whole run. Checks the
// model and settings first (tokenizer present, --mem-limit), so a bad one
// fails before anything is measured. Errors are edgellm::Error.
BenchRun run_scenarios(const ScenarioParams& p, const std::function<void(const BenchRun&, const ScenarioRecord&)>& on_record);

// The run as the JSON document of docs/bench-record.md.
std::string bench_run_json(const BenchRun& run);
// One line per record: a markdown table or CSV (header first).
std::string bench_run_table(const BenchRun& run, bool csv);

}  // namespace edgellm
