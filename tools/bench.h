// `edgellm bench`: llama-bench's tests, flags and output, so its users and
// their scripts can switch engines without changes.
//
// Every combination of the lists (model x batch x threads x depth) runs each
// test: pp<N> prefills N random tokens, tg<N> generates N tokens one at a
// time (each step decodes one random token, as llama-bench does), pp<N>+tg<M>
// does both in one timed run. The depth d is a context of d tokens already in
// the KV cache before the timed run (" @ d<d>" in the test name). Each test
// runs `reps` times; t/s is tokens (depth not counted) over the run's time.
// tg rows also say the weight-streaming bandwidth reached and its share of
// the host's measured read bandwidth (tools/probe.h), read over the weights
// just before and after the test (the host's bandwidth moves from minute to
// minute on shared machines).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/gguf.h"
#include "tools/probe.h"

namespace edgellm {

struct BenchParams {
  std::vector<std::string> models;
  std::vector<int64_t> n_prompt = {512};  // pp tests; a 0 is skipped
  std::vector<int64_t> n_gen = {128};     // tg tests; a 0 is skipped
  std::vector<std::pair<int64_t, int64_t>> n_pg;  // pp+tg tests (-pg)
  std::vector<int64_t> n_depth = {0};
  std::vector<int64_t> n_batch = {512};   // prompt tokens per forward pass
  std::vector<int64_t> n_threads;         // empty: every CPU this process may run on
  bool pin = false;  // bind thread i to the i-th allowed CPU (--pin)
  int reps = 5;
  bool warmup = true;
  bool probe = true;  // measure host bandwidth for the share column
  gguf::Residency residency = gguf::Residency::Auto;
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;  // KV cache types (-ctk / -ctv)
  bool swa_full = false;   // sliding-window layers keep the whole context (--swa-full)
  uint64_t mem_limit = 0;  // footprint limit: a model whose plan exceeds it is refused before loading (0 = none)
};

// One test of one combination, measured. Names follow llama-bench's JSON.
struct BenchResult {
  std::string model_filename;  // the path as given
  std::string model_type;      // "llama 7B Q4_K - Medium" (model/model_desc.h)
  uint64_t model_size = 0, model_n_params = 0;
  int64_t n_batch = 0, n_threads = 0;
  bool cpu_strict = false;     // threads pinned (--pin)
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;
  int64_t n_prompt = 0, n_gen = 0, n_depth = 0;
  std::string test_time;       // RFC 3339, UTC, when the test started
  std::vector<uint64_t> samples_ns;  // one per repetition
  // Ours.
  std::string isa, load_mode;  // active kernels; weights "mmap" or "hugepages"
  double load_ms = 0;
  std::optional<double> bytes_per_token, gbs, bw_share;  // tg tests only; bw_share needs the probe
  // tg tests with the probe on, weights of 64 MiB and more: read bandwidth
  // over the weights right before and right after the timed runs (GB/s);
  // bw_share is against the larger, so it is the share of what the bus gave
  // at that minute, not at the start of the bench.
  std::optional<double> read_gbs_before, read_gbs_after;
  // Process peaks while this model was loaded and measured (bytes): RSS and
  // its anonymous part (the footprint a phone's memory killer counts).
  uint64_t peak_rss_bytes = 0, peak_anon_bytes = 0;

  std::vector<double> samples_ts() const;  // tokens/s per repetition
  double avg_ns() const;
  double stddev_ns() const;
  double avg_ts() const;
  double stddev_ts() const;
  std::string test_name() const;  // "pp512", "tg128", "pp512+tg128", "tg128 @ d512"
};

struct BenchHost {
  std::string cpu_info;  // the CPU's model name
  std::optional<ProbeResult> probe;
};

// Receives results as they complete; the printers print and flush each one.
class BenchPrinter {
 public:
  virtual ~BenchPrinter() = default;
  virtual void host(const BenchHost&) {}
  virtual void row(const BenchResult& r) = 0;
  virtual void finish() {}
};

// "md", "json", "jsonl" or "csv" to out (tools/bench_printers.cpp); nullptr
// for another name.
std::unique_ptr<BenchPrinter> make_bench_printer(std::string_view format, const BenchParams& p, std::FILE* out);
// The formats make_bench_printer knows, for messages: "md, json, jsonl, csv".
const char* bench_formats();

// Checks every model first (opens, context, --mem-limit), so a bad one fails
// before anything is measured; then probes the host and runs the tests,
// handing each result to out.
void run_bench(const BenchParams& p, BenchPrinter& out);

// llama-bench's list syntax: values and ranges separated by commas, a range
// being first-last (step 1), first-last+step or first-last*factor:
// "64,128,512", "1-4", "128-1024*2". Each value must lie in [min, max].
// Throws Error naming the flag on anything else ("64,,128", "0-", "-5").
std::vector<int64_t> parse_bench_list(std::string_view s, std::string_view flag, int64_t min, int64_t max);

}  // namespace edgellm
