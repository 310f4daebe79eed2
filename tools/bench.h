// `edgellm bench`: llama-bench-shaped measurements. pp<N>: prefill N random
// tokens into an empty context; tg<N>: generate N tokens one at a time from an
// empty context (each step decodes one random token, as llama-bench does).
// Each test is repeated and reported as mean +- sd tokens/s; tg rows also say
// the weight-streaming bandwidth achieved and its share of the host's
// measured read bandwidth (tools/probe.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "tools/probe.h"

namespace edgellm {

struct BenchParams {
  std::vector<std::string> models;
  int64_t n_prompt = 512;   // 0 = skip pp
  int64_t n_gen = 128;      // 0 = skip tg
  int64_t n_batch = 512;
  int n_threads = 2;
  bool pin = false;         // bind thread i to the i-th allowed CPU (--pin)
  int reps = 5;
  bool warmup = true;
  bool probe = true;        // measure host bandwidth for the share column
  gguf::Residency residency = gguf::Residency::Auto;
  GgmlType type_k = GgmlType::F16, type_v = GgmlType::F16;  // KV cache types (-ctk / -ctv)
  uint64_t mem_limit = 0;  // footprint limit: a model whose plan exceeds it is refused before loading (0 = none)
};

struct BenchRow {
  std::string model, arch, type;
  uint64_t size_bytes = 0, n_params = 0;
  int threads = 0;
  bool pinned = false;
  std::string isa, test;     // "pp512" / "tg128"
  int64_t n_tokens = 0;
  std::vector<double> samples;  // tokens/s per repetition
  double mean = 0, sd = 0;
  double bytes_per_token = 0;   // tg: weights + mean KV read per generated token
  double gbs = 0, bw_share = 0; // tg: achieved GB/s, and share of probe read_gbs_all
  double load_ms = 0;
  // Process peaks while this model was loaded and measured (bytes): RSS and
  // its anonymous part (the footprint a phone's memory killer counts).
  uint64_t peak_rss_bytes = 0, peak_anon_bytes = 0;
};

struct BenchReport {
  std::vector<BenchRow> rows;
  ProbeResult host;
  bool have_probe = false;
};

BenchReport run_bench(const BenchParams& p);
std::string format_bench(const BenchReport& r, const std::string& format);  // md | json | csv

}  // namespace edgellm
