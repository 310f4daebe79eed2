// edgellm bench / edgellm probe.
#include <cstdio>
#include <thread>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "tools/bench.h"

namespace edgellm::cli {

int cmd_bench(int argc, char** argv) {
  Args args("bench", "Measure prefill (pp) and decode (tg) speed, llama-bench style.");
  BenchParams p;
  int64_t threads = 2, reps = 5;
  std::string format = "md";
  bool no_warmup = false, no_probe = false;
  args.add_multi({"-m", "--model"}, &p.models, "GGUF model (repeat for several)");
  args.add({"-p", "--n-prompt"}, &p.n_prompt, "prompt tokens for the pp test (0 = skip)", 0, 1 << 20);
  args.add({"-n", "--n-gen"}, &p.n_gen, "generated tokens for the tg test (0 = skip)", 0, 1 << 20);
  args.add({"-b", "--batch-size"}, &p.n_batch, "prompt tokens per forward pass", 1, 1 << 16);
  args.add({"-t", "--threads"}, &threads, "threads", 1, 512);
  args.add({"-r", "--repetitions"}, &reps, "repetitions of each test", 1, 1000);
  args.add({"-o", "--output"}, &format, "md | json | csv");
  args.add_flag({"--pin"}, &p.pin, "bind thread i to the i-th CPU this process may run on (Linux, Android)");
  args.add_flag({"--no-warmup"}, &no_warmup, "skip the warm-up run of each test");
  args.add_flag({"--no-probe"}, &no_probe, "do not measure host bandwidth (no share column)");
  std::string load_mode = "auto", ctk = "f16", ctv = "f16", mem_limit;
  args.add({"--load-mode"}, &load_mode, "auto | mmap | hugepages (see edgellm run --help)");
  args.add({"-ctk", "--cache-type-k"}, &ctk, "KV cache type for keys: f16, q8_0, q4_0, f32");
  args.add({"-ctv", "--cache-type-v"}, &ctv, "KV cache type for values: f16, q8_0, q4_0, f32");
  args.add({"--mem-limit"}, &mem_limit, "refuse a model whose planned footprint exceeds this (e.g. 1.5G)");
  if (!args.parse(argc, argv)) return 0;
  p.type_k = parse_kv_type(ctk, "-ctk");
  p.type_v = parse_kv_type(ctv, "-ctv");
  if (!mem_limit.empty()) {
    try {
      p.mem_limit = parse_size(mem_limit);
    } catch (const Error& e) {
      fail("--mem-limit: ", e.what());
    }
  }
  if (format != "md" && format != "json" && format != "csv")
    fail("bench: unknown output format '", format, "' (md, json, csv)");
  if (p.models.empty()) fail("bench: no model given (-m FILE, repeatable)");
  if (p.n_prompt == 0 && p.n_gen == 0) fail("bench: -p 0 -n 0 leaves nothing to measure");
  p.n_threads = int(threads);
  p.reps = int(reps);
  p.warmup = !no_warmup;
  p.probe = !no_probe;
  p.residency = gguf::parse_residency(load_mode);
  const std::string out = format_bench(run_bench(p), format);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int cmd_probe(int argc, char** argv) {
  Args args("probe", "Measure memory read bandwidth (all threads, one thread) and int8 dot throughput.");
  int64_t threads = 0, mib = 512;
  bool json = false;
  args.add({"-t", "--threads"}, &threads, "threads (0 = all cores)", 0, 512);
  args.add({"--buffer-mib"}, &mib, "size of the streamed buffer in MiB", 16, 65536);
  args.add_flag({"--json"}, &json, "machine-readable output");
  if (!args.parse(argc, argv)) return 0;
  if (args.given("-t") && threads == 0) fail("probe: -t 0 is not a thread count (omit -t to use all cores)");
  const int n = threads > 0 ? int(threads) : int(std::max(1u, std::thread::hardware_concurrency()));
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
