// The measuring half of `edgellm bench` (tools/bench.h); the printers are in
// bench_printers.cpp, the list syntax in bench_list.cpp.
#include "tools/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/cpu_affinity.h"
#include "base/error.h"
#include "base/mem_stats.h"
#include "kernels/dispatch.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "runtime/memory_plan.h"
#include "runtime/session.h"
#include "tools/device_plan.h"
#include "tools/host_state.h"

namespace edgellm {

// --- statistics, as llama-bench computes them ------------------------------

namespace {

// The model's tensor data as one range to stream for the bandwidth read
// around each tg test: the longest run of tensors that lie back to back
// (the file's data section, or its resident copy; a tensor copied elsewhere
// at load is not in it, and nothing between two allocations is ever read),
// at most its first 1 GiB (enough to leave every cache), nothing below
// 64 MiB (a range the last-level cache could hold would read the cache, not
// the bus; such models keep the start-up probe).
struct WeightRange {
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};
WeightRange probe_range(const Model& m) {
  std::vector<std::pair<const uint8_t*, const uint8_t*>> spans;
  for (const gguf::TensorInfo& t : m.file().tensors())
    if (t.data && t.nbytes > 0) spans.push_back({t.data, t.data + t.nbytes});
  std::sort(spans.begin(), spans.end());
  constexpr size_t kGap = 4096;  // more than any alignment padding between tensors
  WeightRange best;
  for (size_t i = 0; i < spans.size();) {
    const uint8_t* lo = spans[i].first;
    const uint8_t* hi = spans[i].second;
    for (++i; i < spans.size() && spans[i].first >= lo && spans[i].first <= hi + kGap; ++i)
      hi = std::max(hi, spans[i].second);
    if (size_t(hi - lo) > best.bytes) best = {lo, size_t(hi - lo)};
  }
  constexpr size_t kMin = size_t(64) << 20, kMax = size_t(1) << 30;
  if (best.bytes < kMin) return {};
  return {best.data, std::min(best.bytes, kMax)};
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

// Sample standard deviation (Bessel's correction); 0 for fewer than two.
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

std::vector<double> as_doubles(const std::vector<uint64_t>& v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

// Depth tokens are context, not work done by the test: llama-bench leaves them out.
std::vector<double> BenchResult::samples_ts() const {
  std::vector<double> ts;
  for (uint64_t ns : samples_ns) ts.push_back(1e9 * double(n_prompt + n_gen) / double(std::max<uint64_t>(ns, 1)));
  return ts;
}
double BenchResult::avg_ns() const { return mean(as_doubles(samples_ns)); }
double BenchResult::stddev_ns() const { return stddev(as_doubles(samples_ns)); }
double BenchResult::avg_ts() const { return mean(samples_ts()); }
double BenchResult::stddev_ts() const { return stddev(samples_ts()); }

std::string BenchResult::test_name() const {
  std::string s = n_gen == 0 ? "pp" + std::to_string(n_prompt)
                  : n_prompt == 0 ? "tg" + std::to_string(n_gen)
                                  : "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
  return n_depth > 0 ? s + " @ d" + std::to_string(n_depth) : s;
}

// --- running the tests -------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;
uint64_t ns_since(Clock::time_point t0) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

// Same LCG on every platform, so runs see the same tokens everywhere.
struct TokenStream {
  uint64_t s = 0x5eed;
  int32_t next(int64_t n_vocab) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return int32_t((s >> 33) % uint64_t(n_vocab));
  }
};

std::string base_name(const std::string& p) {
  const size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}


template <class T>
T max_of(const std::vector<T>& v) {
  return v.empty() ? T(0) : *std::max_element(v.begin(), v.end());
}

// The most context any test asks for: its depth, prompt and generation together.
int64_t context_needed(const BenchParams& p) {
  int64_t most = std::max(max_of(p.n_prompt), max_of(p.n_gen));
  for (const auto& [pp, tg] : p.n_pg) most = std::max(most, pp + tg);
  return most + max_of(p.n_depth);
}

SessionConfig session_config(const BenchParams& p, const HParams& hp, int64_t n_batch, int64_t n_threads) {
  SessionConfig cfg;
  cfg.n_ctx = std::min<int64_t>(hp.n_ctx_train, context_needed(p));
  // No forward pass is ever longer than the longest prefill (prompt or depth).
  int64_t longest = std::max(max_of(p.n_prompt), max_of(p.n_depth));
  for (const auto& pg : p.n_pg) longest = std::max(longest, pg.first);
  cfg.n_batch = std::min<int64_t>(n_batch, std::max<int64_t>(longest, 1));
  cfg.n_threads = int(n_threads);
  cfg.pin_threads = p.pin;
  cfg.type_k = p.type_k;
  cfg.type_v = p.type_v;
  cfg.swa_full = p.swa_full;
  return cfg;
}

// Opens each model's header (no weights read), checks the tests fit its
// context and, with --mem-limit, the plan fits the limit; returns where each
// model's weights will live.
std::vector<gguf::Residency> check_models(const BenchParams& p) {
  std::vector<gguf::Residency> where;
  for (const std::string& path : p.models) {
    auto probe = Model::load(path, gguf::Residency::Mmap, false);
    const HParams& hp = probe->hparams();
    if (context_needed(p) > hp.n_ctx_train)
      fail("bench: ", base_name(path), " supports ", hp.n_ctx_train, " tokens of context; the largest test needs ",
           context_needed(p), " (-d + -p + -n): lower them");
    gguf::Residency residency = p.residency;
    if (p.mem_limit > 0) {
      PlanSettings ps = session_config(p, hp, max_of(p.n_batch), max_of(p.n_threads)).plan_settings(*probe);
      ps.load_mode = residency == gguf::Residency::Auto ? resolve_auto_residency(probe->weight_bytes()) : residency;
      MemoryPlan plan = plan_memory(*probe, ps);
      if (plan.footprint_bytes > p.mem_limit && plan.weights_resident_bytes > 0 && p.residency == gguf::Residency::Auto) {
        ps.load_mode = residency = gguf::Residency::Mmap;  // footprint first: keep the weights file-backed
        plan = plan_memory(*probe, ps);
      }
      if (plan.footprint_bytes > p.mem_limit)
        fail("bench: ", base_name(path), " needs a footprint of ", format_mib(plan.footprint_bytes),
             " for its largest test (context ", ps.n_ctx, "), over the --mem-limit of ", format_mib(p.mem_limit),
             " by ", format_mib(plan.footprint_bytes - p.mem_limit), " (see edgellm plan -m ", path, ")");
    }
    where.push_back(residency);
  }
  return where;
}

// Brings the session to exactly `depth` tokens of context. Any prefix is as
// good as another (the tokens are random), so a longer one is cut and a
// shorter one extended: a depth is prefilled once, not once per repetition.
void set_depth(Session& s, int64_t depth, TokenStream& ts, int64_t n_vocab) {
  s.truncate(std::min(s.n_past(), depth));
  std::vector<int32_t> toks(size_t(s.n_batch()));
  while (s.n_past() < depth) {
    const int64_t n = std::min(s.n_batch(), depth - s.n_past());
    for (int64_t i = 0; i < n; ++i) toks[size_t(i)] = ts.next(n_vocab);
    s.decode(toks.data(), n);
  }
}

void prefill(Session& s, int64_t n_prompt, TokenStream& ts, int64_t n_vocab) {
  std::vector<int32_t> toks(size_t(s.n_batch()));
  for (int64_t done = 0; done < n_prompt;) {
    const int64_t n = std::min(s.n_batch(), n_prompt - done);
    for (int64_t i = 0; i < n; ++i) toks[size_t(i)] = ts.next(n_vocab);
    s.decode(toks.data(), n);
    done += n;
  }
}

void generate(Session& s, int64_t n_gen, TokenStream& ts, int64_t n_vocab) {
  for (int64_t i = 0; i < n_gen; ++i) {
    const int32_t tok = ts.next(n_vocab);
    s.decode(&tok, 1);
  }
}

}  // namespace

void run_bench(const BenchParams& p_in, BenchPrinter& out) {
  BenchParams p = p_in;
  if (p.n_threads.empty()) p.n_threads = {allowed_cpu_count()};
  if (p.models.empty()) fail("bench: no model given (-m FILE, repeatable)");
  if (p.reps < 1) fail("bench: -r must be at least 1");
  if (p.n_batch.empty() || p.n_depth.empty()) fail("bench: -b and -d need at least one value");
  for (int64_t t : p.n_threads)
    if (t < 1) fail("bench: -t must be at least 1");
  const bool any_test = std::any_of(p.n_prompt.begin(), p.n_prompt.end(), [](int64_t n) { return n > 0; }) ||
                        std::any_of(p.n_gen.begin(), p.n_gen.end(), [](int64_t n) { return n > 0; }) ||
                        std::any_of(p.n_pg.begin(), p.n_pg.end(), [](const auto& pg) { return pg.first + pg.second > 0; });
  if (!any_test) fail("bench: -p 0 -n 0 leaves nothing to measure");
  // Checked here too (the thread pool would refuse it) so that a sweep like
  // -t 1,64 --pin fails before it measures anything, not halfway.
  if (p.pin && max_of(p.n_threads) > allowed_cpu_count())
    fail("--pin: ", max_of(p.n_threads), " threads but this process may run on only ", allowed_cpu_count(),
         " CPUs; use -t ", allowed_cpu_count(), " or less, or drop --pin");

  const std::vector<gguf::Residency> residency = check_models(p);
  BenchHost host;
  host.cpu_info = cpu_model_name();
  if (p.probe) host.probe = probe_host(int(max_of(p.n_threads)), 256);
  out.host(host);

  for (size_t mi = 0; mi < p.models.size(); ++mi) {
    const std::string& path = p.models[mi];
    PeakSampler mem;  // this model's peaks (the previous one is freed)
    const auto t0 = Clock::now();
    auto m = Model::load(path, residency[mi]);
    const double load_ms = double(ns_since(t0)) / 1e6;
    const HParams& hp = m->hparams();

    BenchResult proto;
    proto.model_filename = path;
    proto.model_type = model_desc(*m);
    proto.model_size = m->weight_bytes();
    proto.model_n_params = m->n_params();
    proto.cpu_strict = p.pin;
    proto.type_k = p.type_k;
    proto.type_v = p.type_v;
    proto.isa = kernels().isa;
    proto.load_mode = gguf::residency_name(m->file().residency());
    proto.load_ms = load_ms;
    const double weight_bytes = double(weight_bytes_read_per_token(*m));
    const WeightRange weights = probe_range(*m);
    TokenStream ts;

    // The tests of one combination, in llama-bench's order: pp, tg, pp+tg.
    std::vector<std::pair<int64_t, int64_t>> tests;
    for (int64_t n : p.n_prompt)
      if (n > 0) tests.push_back({n, 0});
    for (int64_t n : p.n_gen)
      if (n > 0) tests.push_back({0, n});
    for (const auto& pg : p.n_pg)
      if (pg.first + pg.second > 0) tests.push_back(pg);

    // Loops ordered as llama-bench's, so a session (its thread pool and KV
    // cache) is rebuilt only when the batch or thread count changes.
    for (int64_t nb : p.n_batch) {
      for (int64_t nt : p.n_threads) {
        auto s = std::make_unique<Session>(*m, session_config(p, hp, nb, nt));
        for (int64_t nd : p.n_depth) {
          for (const auto& [n_prompt, n_gen] : tests) {
            BenchResult r = proto;
            r.n_batch = nb;
            r.n_threads = nt;
            r.n_prompt = n_prompt;
            r.n_gen = n_gen;
            r.n_depth = nd;
            r.test_time = utc_now_rfc3339();
            // The warm-up (rep -1) is llama-bench's: the whole prompt, one
            // generated token. It runs at the test's depth, so it also warms
            // the cache rows the timed runs read and leaves the depth ready.
            const bool around = p.probe && n_prompt == 0 && weights.bytes > 0;
            for (int rep = p.warmup ? -1 : 0; rep < p.reps; ++rep) {
              if (rep == 0 && around) r.read_gbs_before = read_bandwidth_over(weights.data, weights.bytes, int(nt), 3);
              set_depth(*s, nd, ts, hp.n_vocab);
              const auto t1 = Clock::now();
              prefill(*s, n_prompt, ts, hp.n_vocab);
              generate(*s, rep < 0 ? std::min<int64_t>(n_gen, 1) : n_gen, ts, hp.n_vocab);
              if (rep >= 0) r.samples_ns.push_back(std::max<uint64_t>(ns_since(t1), 1));
            }
            if (around) r.read_gbs_after = read_bandwidth_over(weights.data, weights.bytes, int(nt), 3);
            if (n_prompt == 0) {
              // Per generated token: the weights, plus the K and V rows of
              // every layer for the positions so far (on average the depth
              // and half the generated tokens; a sliding layer's window).
              r.bytes_per_token = weight_bytes + double(s->plan().kv_bytes_read_at(nd + n_gen / 2));
              r.gbs = *r.bytes_per_token * r.avg_ts() / 1e9;
              const double bus = around ? std::max(*r.read_gbs_before, *r.read_gbs_after)
                                 : host.probe ? host.probe->read_gbs_all
                                              : 0;
              if (bus > 0) r.bw_share = *r.gbs / bus;
            }
            mem.sample();
            r.peak_rss_bytes = mem.peak_rss();
            r.peak_anon_bytes = mem.peak_anon();
            out.row(r);
          }
        }
        s.reset();  // a pinned pool restores this thread's affinity before the next one pins it
      }
    }
  }
  out.finish();
}

}  // namespace edgellm
