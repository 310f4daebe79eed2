#include "tools/bench.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/json.h"
#include "kernels/dispatch.h"
#include "model/model.h"
#include "base/mem_stats.h"
#include "runtime/memory_plan.h"
#include "runtime/session.h"

namespace edgellm {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Same LCG on every platform, so pp runs see the same tokens everywhere.
struct TokenStream {
  uint64_t s = 0x5eed;
  int32_t next(int64_t n_vocab) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return int32_t((s >> 33) % uint64_t(n_vocab));
  }
};

std::string dominant_type(const Model& m) {
  std::map<std::string, uint64_t> by_type;
  for (const auto& t : m.file().tensors())
    if (t.n_dims >= 2) by_type[type_name(uint32_t(t.type))] += t.nbytes;
  std::string best;
  uint64_t most = 0;
  for (const auto& [name, b] : by_type)
    if (b > most) most = b, best = name;
  return best;
}

// Bytes one decode step must read: every layer matrix, the output head, one
// embedding row, and (for the KV term) the cache up to the current position.
double weight_bytes_per_token(const Model& m) {
  double b = 0;
  for (const LayerWeights& L : m.layers())
    for (const WeightView* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      b += double(w->row_bytes()) * double(w->rows);
  b += double(m.output().row_bytes()) * double(m.output().rows);
  return b + double(m.token_embd().row_bytes());
}

void finish(BenchRow& r) {
  double s = 0;
  for (double x : r.samples) s += x;
  r.mean = s / double(r.samples.size());
  double v = 0;
  for (double x : r.samples) v += (x - r.mean) * (x - r.mean);
  r.sd = r.samples.size() > 1 ? std::sqrt(v / double(r.samples.size() - 1)) : 0;
}

std::string base_name(const std::string& p) {
  const size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

}  // namespace

BenchReport run_bench(const BenchParams& p) {
  if (p.models.empty()) fail("bench: no model given (-m FILE, repeatable)");
  if (p.n_prompt < 0 || p.n_gen < 0) fail("bench: -p and -n must not be negative");
  if (p.n_prompt == 0 && p.n_gen == 0) fail("bench: -p 0 -n 0 leaves nothing to measure");
  if (p.n_threads < 1) fail("bench: -t must be at least 1");
  if (p.reps < 1) fail("bench: -r must be at least 1");
  BenchReport rep;
  if (p.probe) {
    rep.host = probe_host(p.n_threads, 256);
    rep.have_probe = true;
  }
  // The session settings for one model: a context just large enough for the tests.
  auto config_for = [&](const HParams& hp) {
    SessionConfig cfg;
    cfg.n_ctx = std::min<int64_t>(hp.n_ctx_train, std::max<int64_t>(p.n_prompt, p.n_gen) + 1);
    cfg.n_batch = std::min<int64_t>(p.n_batch, std::max<int64_t>(p.n_prompt, 1));
    cfg.n_threads = p.n_threads;
    cfg.pin_threads = p.pin;
    cfg.type_k = p.type_k;
    cfg.type_v = p.type_v;
    return cfg;
  };
  for (const std::string& path : p.models) {
    PeakSampler mem;  // this model's peaks (the previous one is freed)
    const auto t0 = Clock::now();
    gguf::Residency residency = p.residency;
    if (p.mem_limit > 0) {
      // The plan first, from the header only: refuse before reading weights.
      auto probe = Model::load(path, gguf::Residency::Mmap, false);
      PlanSettings ps = config_for(probe->hparams()).plan_settings(*probe);
      ps.load_mode = residency == gguf::Residency::Auto ? resolve_auto_residency(probe->weight_bytes()) : residency;
      MemoryPlan plan = plan_memory(*probe, ps);
      if (plan.footprint_bytes > p.mem_limit && plan.weights_resident_bytes > 0 && p.residency == gguf::Residency::Auto) {
        ps.load_mode = residency = gguf::Residency::Mmap;  // footprint first: keep the weights file-backed
        plan = plan_memory(*probe, ps);
      }
      if (plan.footprint_bytes > p.mem_limit)
        fail("bench: ", base_name(path), " needs a footprint of ", format_mib(plan.footprint_bytes),
             " at -p ", p.n_prompt, " -n ", p.n_gen, ", over the --mem-limit of ", format_mib(p.mem_limit), " by ",
             format_mib(plan.footprint_bytes - p.mem_limit), " (see edgellm plan -m ", path, ")");
    }
    auto m = Model::load(path, residency);
    const double load_ms = seconds_since(t0) * 1e3;
    const HParams& hp = m->hparams();
    const SessionConfig cfg = config_for(hp);
    if (std::max(p.n_prompt, p.n_gen) > hp.n_ctx_train)
      fail("bench: ", base_name(path), " supports ", hp.n_ctx_train, " tokens of context; lower -p / -n");
    Session s(*m, cfg);
    BenchRow proto;
    proto.model = base_name(path);
    proto.arch = std::string(m->arch().name);
    proto.type = dominant_type(*m);
    proto.size_bytes = m->weight_bytes();
    proto.n_params = m->n_params();
    proto.threads = p.n_threads;
    proto.pinned = p.pin;
    proto.isa = kernels().isa;
    proto.load_ms = load_ms;
    TokenStream ts;

    if (p.n_prompt > 0) {
      BenchRow r = proto;
      r.test = "pp" + std::to_string(p.n_prompt);
      r.n_tokens = p.n_prompt;
      std::vector<int32_t> toks(size_t(p.n_prompt));
      for (int rep_i = -(p.warmup ? 1 : 0); rep_i < p.reps; ++rep_i) {
        for (int32_t& t : toks) t = ts.next(hp.n_vocab);
        s.truncate(0);
        const auto t1 = Clock::now();
        for (int64_t i = 0; i < p.n_prompt; i += s.n_batch())
          s.decode(toks.data() + i, std::min(s.n_batch(), p.n_prompt - i));
        const double sec = seconds_since(t1);
        if (rep_i >= 0) r.samples.push_back(double(p.n_prompt) / sec);
      }
      finish(r);
      mem.sample();
      r.peak_rss_bytes = mem.peak_rss();
      r.peak_anon_bytes = mem.peak_anon();
      rep.rows.push_back(r);
    }
    if (p.n_gen > 0) {
      BenchRow r = proto;
      r.test = "tg" + std::to_string(p.n_gen);
      r.n_tokens = p.n_gen;
      for (int rep_i = -(p.warmup ? 1 : 0); rep_i < p.reps; ++rep_i) {
        s.truncate(0);
        int32_t tok = ts.next(hp.n_vocab);
        const auto t1 = Clock::now();
        for (int64_t i = 0; i < p.n_gen; ++i) {
          s.decode(&tok, 1);
          tok = ts.next(hp.n_vocab);
        }
        const double sec = seconds_since(t1);
        if (rep_i >= 0) r.samples.push_back(double(p.n_gen) / sec);
      }
      finish(r);
      // Mean KV read per step: K and V rows of every layer for the positions
      // so far, on average n_gen/2 of them.
      const double kv_row = double(s.kv_bytes()) / double(s.n_ctx());
      r.bytes_per_token = weight_bytes_per_token(*m) + kv_row * double(p.n_gen) / 2.0;
      r.gbs = r.bytes_per_token * r.mean / 1e9;
      if (rep.have_probe && rep.host.read_gbs_all > 0) r.bw_share = r.gbs / rep.host.read_gbs_all;
      mem.sample();
      r.peak_rss_bytes = mem.peak_rss();
      r.peak_anon_bytes = mem.peak_anon();
      rep.rows.push_back(r);
    }
  }
  return rep;
}

std::string format_bench(const BenchReport& r, const std::string& format) {
  std::ostringstream os;
  char buf[512];
  auto size_str = [](uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.2f MiB", double(b) / 1048576.0);
    return std::string(s);
  };
  auto params_str = [](uint64_t n) {
    char s[32];
    if (n >= 1000000000ull) std::snprintf(s, sizeof s, "%.2f B", double(n) / 1e9);
    else if (n >= 1000000ull) std::snprintf(s, sizeof s, "%.2f M", double(n) / 1e6);
    else std::snprintf(s, sizeof s, "%.2f K", double(n) / 1e3);
    return std::string(s);
  };
  if (format == "md") {
    if (r.have_probe) {
      std::snprintf(buf, sizeof buf, "host: %d cores, isa %s, read %.1f GB/s (%d threads), %.1f GB/s (1 thread), int8 dot %.1f GOP/s\n\n",
                    r.host.cores, r.host.isa.c_str(), r.host.read_gbs_all, r.host.threads, r.host.read_gbs_one,
                    r.host.int8_gops);
      os << buf;
    }
    os << "| model | arch | type | size | params | threads | isa | test | t/s | GB/s | share of read BW | peak RSS | peak anon |\n"
       << "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const BenchRow& x : r.rows) {
      std::string gbs = "", share = "";
      if (x.test[0] == 't') {
        std::snprintf(buf, sizeof buf, "%.2f", x.gbs);
        gbs = buf;
        if (x.bw_share > 0) {
          std::snprintf(buf, sizeof buf, "%.0f%%", x.bw_share * 100);
          share = buf;
        }
      }
      std::snprintf(buf, sizeof buf, "| %s | %s | %s | %s | %s | %d%s | %s | %s | %.2f ± %.2f | %s | %s | %s | %s |\n",
                    x.model.c_str(), x.arch.c_str(), x.type.c_str(), size_str(x.size_bytes).c_str(),
                    params_str(x.n_params).c_str(), x.threads, x.pinned ? " pinned" : "", x.isa.c_str(), x.test.c_str(),
                    x.mean, x.sd, gbs.c_str(), share.c_str(), size_str(x.peak_rss_bytes).c_str(),
                    size_str(x.peak_anon_bytes).c_str());
      os << buf;
    }
  } else if (format == "json") {
    os << "{\"host\":" << (r.have_probe ? probe_to_json(r.host) : "null") << ",\"results\":[";
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const BenchRow& x = r.rows[i];
      std::snprintf(buf, sizeof buf,
                    "%s{\"model\":%s,\"arch\":%s,\"type\":%s,\"size_bytes\":%llu,\"n_params\":%llu,\"threads\":%d,"
                    "\"pinned\":%s,\"isa\":%s,\"test\":%s,\"n_tokens\":%lld,\"avg_ts\":%.4f,\"stddev_ts\":%.4f,\"gbs\":%.4f,"
                    "\"bw_share\":%.4f,\"load_ms\":%.2f,\"peak_rss_bytes\":%llu,\"peak_anon_bytes\":%llu,\"samples_ts\":[",
                    i ? "," : "", json_quote(x.model).c_str(), json_quote(x.arch).c_str(), json_quote(x.type).c_str(),
                    (unsigned long long)x.size_bytes, (unsigned long long)x.n_params, x.threads,
                    x.pinned ? "true" : "false", json_quote(x.isa).c_str(), json_quote(x.test).c_str(), (long long)x.n_tokens, x.mean, x.sd, x.gbs,
                    x.bw_share, x.load_ms, (unsigned long long)x.peak_rss_bytes, (unsigned long long)x.peak_anon_bytes);
      os << buf;
      for (size_t k = 0; k < x.samples.size(); ++k) os << (k ? "," : "") << x.samples[k];
      os << "]}";
    }
    os << "]}\n";
  } else if (format == "csv") {
    os << "model,arch,type,size_bytes,n_params,threads,isa,test,avg_ts,stddev_ts,gbs,bw_share,peak_rss_bytes,peak_anon_bytes\n";
    for (const BenchRow& x : r.rows) {
      std::snprintf(buf, sizeof buf, "%s,%s,%s,%llu,%llu,%d,%s,%s,%.4f,%.4f,%.4f,%.4f,%llu,%llu\n", x.model.c_str(),
                    x.arch.c_str(), x.type.c_str(), (unsigned long long)x.size_bytes, (unsigned long long)x.n_params,
                    x.threads, x.isa.c_str(), x.test.c_str(), x.mean, x.sd, x.gbs, x.bw_share,
                    (unsigned long long)x.peak_rss_bytes, (unsigned long long)x.peak_anon_bytes);
      os << buf;
    }
  } else {
    fail("bench: unknown output format '", format, "' (md, json, csv)");
  }
  return os.str();
}

}  // namespace edgellm
