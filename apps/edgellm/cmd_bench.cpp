// edgellm bench / edgellm probe.
#include <cstdio>
#include <thread>

#include "apps/edgellm/common.h"
#include "base/cpu_affinity.h"
#include "base/error.h"
#include "base/durable_file.h"
#include "tools/bench.h"
#include "tools/device_profile.h"
#include "tools/scenario.h"
#include "tools/scenario_prompts.h"

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

// Splits "chat,summary" and repeated flags into names.
std::vector<std::string> names_of(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& g : given) {
    size_t at = 0;
    while (at <= g.size()) {
      const size_t comma = std::min(g.find(',', at), g.size());
      out.push_back(g.substr(at, comma - at));
      at = comma + 1;
    }
  }
  return out;
}

struct ScenarioFlags {
  std::vector<std::string> scenarios;
  int64_t runs = 1, n_ctx = 0;
  std::string prompt_file, out_path, chat_template;
  float sustained = 0;
  bool given() const { return !scenarios.empty() || sustained > 0; }
};

// `bench --scenario` / `--sustained`: one model, one thread count; the JSON
// record (docs/bench-record.md) to --out, a table or the JSON to stdout.
int run_scenario_bench(const ScenarioFlags& f, const BenchParams& p, const std::vector<std::string>& given_lists,
                       const std::string& format) {
  if (p.models.size() != 1) fail("bench --scenario: give exactly one -m MODEL (", p.models.size(), " given)");
  if (!given_lists.empty())
    fail("bench --scenario: ", given_lists.front(), " belongs to the pp/tg tests; a scenario has its own prompts "
         "(drop it, or run them without --scenario)");
  if (p.n_threads.size() != 1) fail("bench --scenario: give one -t value");
  if (format != "md" && format != "csv" && format != "json")
    fail("bench --scenario: -o ", format, ": use md, csv or json");
  ScenarioParams sp;
  sp.model = p.models[0];
  for (const std::string& n : names_of(f.scenarios)) {
    (void)builtin_scenario(n);  // refuses an unknown name before anything runs
    sp.scenarios.push_back(n);
  }
  sp.n_threads = int(p.n_threads[0]);
  sp.pin = p.pin;
  sp.runs = int(f.runs);
  sp.prompt_file = f.prompt_file;
  sp.chat_template = f.chat_template;
  sp.n_ctx = f.n_ctx;
  sp.n_batch = p.n_batch.size() == 1 ? p.n_batch[0] : 512;
  sp.residency = p.residency;
  sp.type_k = p.type_k;
  sp.type_v = p.type_v;
  sp.swa_full = p.swa_full;
  sp.mem_limit = p.mem_limit;
  sp.sustained_minutes = f.sustained;
  sp.probe = p.probe;
  // Opened (as a temporary beside it) before anything runs, so a path that
  // cannot be written is refused at once, and a failed run leaves no file.
  std::optional<DurableFile> out;
  if (!f.out_path.empty()) out.emplace(f.out_path);
  const BenchRun run = run_scenarios(sp, [](const BenchRun&, const ScenarioRecord& r) {
    std::fprintf(stderr, "%s run %d: TTFT %.1f ms, prefill %.1f t/s, decode %.1f t/s\n", r.scenario.c_str(), r.run,
                 r.ttft_ms, r.prefill_tps, r.decode_tps);
  });
  const std::string json = bench_run_json(run);
  if (out) {
    out->write(json.data(), json.size());
    out->commit();
  }
  const std::string text = format == "json" ? json : bench_run_table(run, format == "csv");
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (run.sustained && format != "json") {
    const SustainedRun& s = *run.sustained;
    std::printf("\nsustained %.1f min: %d chat runs, %zu samples; %s\n", s.minutes, s.chat_runs, s.samples.size(),
                s.note.c_str());
    for (const SustainedSample& x : s.samples) {
      const std::optional<double> hot = x.thermal.hottest_c();
      std::printf("  t=%6.1f s  decode %s t/s  RSS %.1f MiB  hottest %s\n", x.t_s,
                  x.decode_tps ? std::to_string(int(*x.decode_tps + 0.5)).c_str() : "-", double(x.rss) / 1048576.0,
                  hot ? (std::to_string(int(*hot + 0.5)) + " C").c_str() : "n/a");
    }
  }
  flush_stdout_or_fail();
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args("bench", "Measure prefill (pp) and decode (tg) speed: llama-bench's tests, flags and output.\n"
                     "-p -n -d -b -t take lists and ranges as llama-bench does: 64,128,512 | 1-4 | 64-512+64 | 128-1024*2;\n"
                     "every combination is one test, each run -r times.\n"
                     "--scenario chat|summary|multiturn runs fixed conversations instead (TTFT, prefill and decode\n"
                     "speed, memory, a fingerprint of the output; the record: docs/bench-record.md).");
  BenchParams p;
  std::vector<std::string> n_prompt, n_gen, n_pg, n_depth, n_batch, threads;
  int64_t reps = 5;
  std::string format = "md";
  bool no_warmup = false, no_probe = false;
  args.add_multi({"-m", "--model"}, &p.models, "GGUF model (repeat for several)");
  args.add_multi({"-p", "--n-prompt"}, &n_prompt, "prompt tokens of the pp tests (default 512; 0 = none)");
  args.add_multi({"-n", "--n-gen"}, &n_gen, "generated tokens of the tg tests (default 128; 0 = none)");
  args.add_multi({"-pg"}, &n_pg, "pp+tg tests, as PP,TG pairs (e.g. -pg 512,128; repeatable)");
  args.add_multi({"-d", "--n-depth", "--depth"}, &n_depth, "tokens already in the context before each test (default 0)");
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
  args.add_flag({"--swa-full"}, &p.swa_full, "sliding-window layers (gemma2/3/4) keep the whole context, not a ring");
  ScenarioFlags sf;
  args.add_multi({"--scenario"}, &sf.scenarios, "chat | summary | multiturn (comma list or repeated; see docs/bench-record.md)");
  args.add({"--runs"}, &sf.runs, "repetitions of each scenario (default 1)", 1, 1000);
  args.add({"--prompt-file"}, &sf.prompt_file, "a text replacing the scenario's first message");
  args.add({"--chat-template"}, &sf.chat_template, "a built-in chat template for the scenarios instead of the model's");
  args.add({"--out"}, &sf.out_path, "write the scenario run record (JSON) to this file");
  args.add({"-c", "--ctx-size"}, &sf.n_ctx, "scenario context (default: chat 512, summary 2048, multiturn 4096)", 16,
           1 << 24);
  args.add({"--sustained"}, &sf.sustained, "repeat the chat scenario for this many minutes, sampling every 10 s", 0,
           24 * 60);
  if (!args.parse(argc, argv)) return 0;
  // What pp/tg tests and scenarios share.
  p.n_batch = list_flag(n_batch, {512}, "-b", 1, 1 << 16);
  cpu.apply();
  p.n_threads = list_flag(threads, {default_thread_count()}, "-t", 1, 512);
  p.type_k = parse_kv_type(ctk, "-ctk");
  p.type_v = parse_kv_type(ctv, "-ctv");
  if (!mem_limit.empty()) {
    try {
      p.mem_limit = parse_size(mem_limit);
    } catch (const Error& e) {
      fail("--mem-limit: ", e.what());
    }
  }
  p.probe = !no_probe;
  p.residency = gguf::parse_residency(load_mode);
  if (sf.given()) {
    std::vector<std::string> lists;  // pp/tg flags given, which a scenario run does not take
    if (!n_prompt.empty()) lists.push_back("-p");
    if (!n_gen.empty()) lists.push_back("-n");
    if (!n_pg.empty()) lists.push_back("-pg");
    if (!n_depth.empty()) lists.push_back("-d");
    if (reps != 5) lists.push_back("-r");
    return run_scenario_bench(sf, p, lists, format);
  }
  if (!sf.out_path.empty() || !sf.prompt_file.empty() || !sf.chat_template.empty() || sf.runs != 1 || sf.n_ctx != 0)
    fail("bench: --out, --prompt-file, --chat-template, --runs and -c belong to --scenario runs (add --scenario NAME)");
  p.n_prompt = list_flag(n_prompt, {512}, "-p", 0, 1 << 20);
  p.n_gen = list_flag(n_gen, {128}, "-n", 0, 1 << 20);
  p.n_depth = list_flag(n_depth, {0}, "-d", 0, 1 << 20);
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
  p.reps = int(reps);
  p.warmup = !no_warmup;
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
