// edgellm bench / edgellm probe.
#include <cstdio>
#include <thread>

#include "apps/edgellm/common.h"
#include "base/cpu_affinity.h"
#include "base/error.h"
#include "tools/bench.h"
#include "tools/device_profile.h"

namespace edgellm::cli {

namespace {

// Values of a list flag, llama-bench style: comma lists and ranges, the flag
// repeatable (each occurrence adds its values); `def` when not given.
std::vector<int64_t> list_flag(const std::vector<std::string>& given, std::vector<int64_t> def, const char* flag,
                               int64_t min, int64_t max) {
  if (given.empty()) return def;
  std::vector<int64_t> all;
  for (const std::string& g : given) {
    const std::vector<int64_t> v = parse_bench_list(g, flag, min, max);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args("bench", "Measure prefill (pp) and decode (tg) speed: llama-bench's tests, flags and output.\n"
                     "-p -n -d -b -t take lists and ranges as llama-bench does: 64,128,512 | 1-4 | 64-512+64 | 128-1024*2;\n"
                     "every combination is one test, each run -r times.");
  BenchParams p;
  std::vector<std::string> n_prompt, n_gen, n_pg, n_depth, n_batch, threads;
  int64_t reps = 5;
  std::string format = "md";
  bool no_warmup = false, no_probe = false;
  args.add_multi({"-m", "--model"}, &p.models, "GGUF model (repeat for several)");
  args.add_multi({"-p", "--n-prompt"}, &n_prompt, "prompt tokens of the pp tests (default 512; 0 = none)");
  args.add_multi({"-n", "--n-gen"}, &n_gen, "generated tokens of the tg tests (default 128; 0 = none)");
  args.add_multi({"-pg"}, &n_pg, "pp+tg tests, as PP,TG pairs (e.g. -pg 512,128; repeatable)");
  args.add_multi({"-d", "--n-depth"}, &n_depth, "tokens already in the context before each test (default 0)");
  args.add_multi({"-b", "--batch-size"}, &n_batch, "prompt tokens per forward pass (default 512)");
  args.add_multi({"-t", "--threads"}, &threads, "threads (default: the performance cores this process may run on)");
  CpuFlags cpu;
  cpu.add_to(args);
  args.add({"-r", "--repetitions"}, &reps, "repetitions of each test (default 5)", 1, 1000);
  args.add({"-o", "--output"}, &format, "md | json | jsonl | csv (default md)");
  args.add_flag({"--pin"}, &p.pin, "bind thread i to the i-th fastest CPU this process may run on (Linux, Android)");
  args.add_flag({"--no-warmup"}, &no_warmup, "skip the warm-up run of each test");
  args.add_flag({"--no-probe"}, &no_probe, "do not measure host bandwidth (no share column)");
  std::string load_mode = "auto", ctk = "f16", ctv = "f16", mem_limit;
  args.add({"--load-mode"}, &load_mode, "auto | mmap | hugepages (see edgellm run --help)");
  args.add({"-ctk", "--cache-type-k"}, &ctk, "KV cache type for keys: f16, q8_0, q4_0, f32");
  args.add({"-ctv", "--cache-type-v"}, &ctv, "KV cache type for values: f16, q8_0, q4_0, f32");
  args.add({"--mem-limit"}, &mem_limit, "refuse a model whose planned footprint exceeds this (e.g. 1.5G)");
  if (!args.parse(argc, argv)) return 0;
  p.n_prompt = list_flag(n_prompt, {512}, "-p", 0, 1 << 20);
  p.n_gen = list_flag(n_gen, {128}, "-n", 0, 1 << 20);
  p.n_depth = list_flag(n_depth, {0}, "-d", 0, 1 << 20);
  p.n_batch = list_flag(n_batch, {512}, "-b", 1, 1 << 16);
  cpu.apply();
  p.n_threads = list_flag(threads, {default_thread_count()}, "-t", 1, 512);
  for (const std::string& pg : n_pg) {
    // One value on each side of the comma (a range would be ambiguous here).
    auto one = [&](const std::string& part) {
      const std::vector<int64_t> v = parse_bench_list(part, "-pg", 0, 1 << 20);
      if (v.size() != 1) fail("-pg: '", pg, "' is not a pair like 512,128 (prompt tokens, generated tokens)");
      return v[0];
    };
    const size_t comma = pg.find(',');
    if (comma == std::string::npos || pg.find(',', comma + 1) != std::string::npos)
      fail("-pg: '", pg, "' is not a pair like 512,128 (prompt tokens, generated tokens)");
    p.n_pg.push_back({one(pg.substr(0, comma)), one(pg.substr(comma + 1))});
  }
  p.type_k = parse_kv_type(ctk, "-ctk");
  p.type_v = parse_kv_type(ctv, "-ctv");
  if (!mem_limit.empty()) {
    try {
      p.mem_limit = parse_size(mem_limit);
    } catch (const Error& e) {
      fail("--mem-limit: ", e.what());
    }
  }
  p.reps = int(reps);
  p.warmup = !no_warmup;
  p.probe = !no_probe;
  p.residency = gguf::parse_residency(load_mode);
  const std::unique_ptr<BenchPrinter> out = make_bench_printer(format, p, stdout);
  if (!out) fail("bench: unknown output format '", format, "' (", bench_formats(), ")");
  if (p.models.empty()) fail("bench: no model given (-m FILE, repeatable)");
  run_bench(p, *out);
  return 0;
}

int cmd_probe(int argc, char** argv) {
  Args args("probe", "Measure memory read bandwidth (all threads, one thread) and int8 dot throughput.");
  int64_t threads = 0, mib = 512;
  bool json = false;
  std::string format = "table";
  args.add({"-t", "--threads"}, &threads, "threads (default: every CPU this process may run on)", 1, 512);
  args.add({"--buffer-mib"}, &mib, "size of the streamed buffer in MiB", 16, 65536);
  args.add_flag({"--json"}, &json, "machine-readable output (the probe's numbers)");
  args.add({"-o", "--output"}, &format,
           "table, or json: this host as a device profile (edgellm plan --device FILE.json reads it)");
  if (!args.parse(argc, argv)) return 0;
  if (format != "table" && format != "json") fail("-o ", format, ": use table or json");
  // Bandwidth needs every core that may run, little ones included.
  const int n = threads > 0 ? int(threads) : allowed_cpu_count();
  if (format == "json") {
    std::printf("%s", device_profile_json(host_device_profile(n, double(mib))).c_str());
    return 0;
  }
  const ProbeResult r = probe_host(n, double(mib));
  if (json) {
    std::printf("%s\n", probe_to_json(r).c_str());
  } else {
    std::printf("cores %d | isa %s | read %.1f GB/s (%d threads), %.1f GB/s (1 thread) over %.0f MiB | int8 dot %.1f GOP/s\n",
                r.cores, r.isa.c_str(), r.read_gbs_all, r.threads, r.read_gbs_one, r.buffer_mib, r.int8_gops);
  }
  return 0;
}

}  // namespace edgellm::cli
