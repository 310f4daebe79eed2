// A scenario run as the JSON document of docs/bench-record.md, and as the
// one-line-per-record table `bench --scenario -o md|csv` prints.
#include <cmath>
#include <cstdio>

#include "template/json.h"
#include "tools/scenario.h"

namespace edgellm {

namespace {

using tmpl::Json;

// Numbers that are not finite have no JSON spelling: they are null.
Json num(double v) { return std::isfinite(v) ? Json::number(v) : Json::null(); }
Json str(std::string s) { return Json::string(std::move(s)); }
Json str_or_null(const std::string& s) { return s.empty() ? Json::null() : str(s); }

// Round to keep the file readable: 0.1 µs, 0.001 tok/s are below any noise.
double r3(double v) { return std::round(v * 1000) / 1000; }

Json numbers(const std::vector<double>& v) {
  Json a = Json::array();
  for (double x : v) a.push_back(num(x < 0 ? std::nan("") : r3(x)));
  return a;
}

Json thermal_json(const ThermalReading& t) {
  Json zones = Json::array();
  for (const ThermalZone& z : t.zones)
    zones.push_back(Json::object({{"name", str(z.name)}, {"temp_c", num(r3(z.temp_c))}}));
  return Json::object({{"available", Json::boolean(t.available)}, {"zones", std::move(zones)}, {"note", str(t.note)}});
}

Json freq_json(const FreqReading& f) {
  return Json::object({{"available", Json::boolean(f.available)},
                       {"cur_mhz", f.available ? numbers(f.cur_mhz) : Json::null()},
                       {"max_mhz", f.available ? numbers(f.max_mhz) : Json::null()},
                       {"governor", str_or_null(f.governor)},
                       {"note", str(f.note)}});
}

Json record_json(const BenchRun& b, const ScenarioRecord& r) {
  Json rss = Json::array();
  for (const MemPoint& m : r.rss_samples)
    rss.push_back(Json::object({{"t_ms", num(r3(m.t_ms))}, {"rss_bytes", num(double(m.rss))}, {"anon_bytes", num(double(m.anon))}}));
  Json turns = Json::array();
  for (const TurnStats& t : r.turns)
    turns.push_back(Json::object({{"turn", num(t.turn)},
                                  {"n_prompt", num(double(t.n_prompt))},
                                  {"n_cached", num(double(t.n_cached))},
                                  {"n_gen", num(double(t.n_gen))},
                                  {"ttft_ms", num(r3(t.ttft_ms))},
                                  {"prefill_tps", num(r3(t.prefill_tps))},
                                  {"decode_tps", num(r3(t.decode_tps))},
                                  {"context_tokens", num(double(t.context_tokens))}}));
  return Json::object({
      {"scenario", str(r.scenario)},
      {"run", num(r.run)},
      {"model_sha256", str(b.model_sha256)},
      {"model_type", str(b.model_type)},
      {"version", str(b.version)},
      {"threads", num(b.threads)},
      {"isa", str(b.isa)},
      {"load_mode", str(b.load_mode)},
      {"n_ctx", num(double(r.n_ctx))},
      {"type_k", str(b.type_k)},
      {"type_v", str(b.type_v)},
      {"load_ms", num(r3(b.load_ms))},
      {"n_turns", num(double(r.n_turns))},
      {"n_prompt", num(double(r.n_prompt))},
      {"n_gen", num(double(r.n_gen))},
      {"context_tokens", num(double(r.context_tokens))},
      {"context_limited", Json::boolean(r.context_limited)},
      {"ttft_ms", num(r3(r.ttft_ms))},
      {"prefill_tps", num(r3(r.prefill_tps))},
      {"decode_tps", num(r3(r.decode_tps))},
      {"decode_window_tps", numbers(r.window_tps)},
      {"window_tokens", num(kWindowTokens)},
      {"decode_ceiling_tps", r.ceiling_tps ? num(r3(*r.ceiling_tps)) : Json::null()},
      {"decode_ceiling_share", r.ceiling_share ? num(std::round(*r.ceiling_share * 1e4) / 1e4) : Json::null()},
      {"peak_rss_bytes", num(double(r.peak_rss))},
      {"peak_anon_bytes", num(double(r.peak_anon))},
      {"rss_swing_bytes", num(double(r.rss_swing))},
      {"kv_bytes", num(double(r.kv_bytes))},
      {"rss_samples", std::move(rss)},
      {"turns", std::move(turns)},
      {"output_sha256", str(r.output_sha256)},
      {"output_preview", str(r.output_preview)},
  });
}

Json sustained_json(const SustainedRun& s) {
  Json samples = Json::array();
  for (const SustainedSample& x : s.samples) {
    Json temps = Json::null();
    if (x.thermal.available) {
      temps = Json::object();
      for (const ThermalZone& z : x.thermal.zones) temps.set(z.name, num(r3(z.temp_c)));
    }
    samples.push_back(Json::object({{"t_s", num(r3(x.t_s))},
                                    {"decode_tps", x.decode_tps ? num(r3(*x.decode_tps)) : Json::null()},
                                    {"tokens", num(double(x.tokens))},
                                    {"rss_bytes", num(double(x.rss))},
                                    {"anon_bytes", num(double(x.anon))},
                                    {"temps_c", std::move(temps)},
                                    {"cpu_mhz", x.freq.available ? numbers(x.freq.cur_mhz) : Json::null()}}));
  }
  return Json::object({{"minutes", num(s.minutes)},
                       {"interval_s", num(s.interval_s)},
                       {"chat_runs", num(s.chat_runs)},
                       {"thermal_available", Json::boolean(s.thermal_available)},
                       {"note", str(s.note)},
                       {"samples", std::move(samples)}});
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string bench_run_json(const BenchRun& b) {
  Json host = Json::object({{"cpu_model", str(b.cpu_model)},
                            {"cores", num(b.cores)},
                            {"kernel", str(b.kernel)},
                            {"machine", str(b.machine)},
                            {"read_gbs", b.probe ? num(r3(b.probe->read_gbs_all)) : Json::null()},
                            {"read_gbs_one", b.probe ? num(r3(b.probe->read_gbs_one)) : Json::null()},
                            {"int8_gops", b.probe ? num(r3(b.probe->int8_gops)) : Json::null()},
                            {"isa", str(b.isa)},
                            {"thermal", thermal_json(b.thermal)},
                            {"cpu_freq", freq_json(b.freq)}});
  Json model = Json::object({{"path", str(b.model_path)},
                             {"file_bytes", num(double(b.file_bytes))},
                             {"sha256", str(b.model_sha256)},
                             {"arch", str(b.arch)},
                             {"type", str(b.model_type)},
                             {"quant", str(b.quant)},
                             {"params", num(double(b.params))},
                             {"n_ctx_train", num(double(b.n_ctx_train))},
                             {"weight_bytes_per_token", num(double(b.weight_bytes_per_token))}});
  Json settings = Json::object({{"threads", num(b.threads)},
                                {"isa", str(b.isa)},
                                {"load_mode", str(b.load_mode)},
                                {"n_batch", num(double(b.n_batch))},
                                {"type_k", str(b.type_k)},
                                {"type_v", str(b.type_v)},
                                {"runs", num(b.runs)},
                                {"sampling", str("greedy")},
                                {"chat_template", str(b.chat_template)},
                                {"prompt_file", str_or_null(b.prompt_file)}});
  Json records = Json::array();
  for (const ScenarioRecord& r : b.records) records.push_back(record_json(b, r));
  Json doc = Json::object({{"schema", str("edgellm.bench.run/1")},
                           {"created", str(b.created)},
                           {"version", str(b.version)},
                           {"build", Json::object({{"commit", str(b.build_commit)},
                                                   {"number", num(b.build_number)},
                                                   {"type", str(b.build_type)}})},
                           {"host", std::move(host)},
                           {"model", std::move(model)},
                           {"settings", std::move(settings)},
                           {"load_ms", num(r3(b.load_ms))},
                           {"records", std::move(records)}});
  if (b.sustained) doc.set("sustained", sustained_json(*b.sustained));
  return doc.dump() + "\n";
}

std::string bench_run_table(const BenchRun& b, bool csv) {
  std::string out = csv ? "scenario,run,n_turns,n_prompt,n_gen,ttft_ms,prefill_tps,decode_tps,ceiling_share,peak_rss_bytes,"
                          "peak_anon_bytes,rss_swing_bytes,kv_bytes,context_limited,output_sha256\n"
                        : "| scenario | run | turns | prompt | gen | TTFT ms | prefill t/s | decode t/s | of ceiling | "
                          "peak RSS MiB | peak anon MiB | RSS swing MiB | KV MiB | output |\n"
                          "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
  const double mib = 1024.0 * 1024.0;
  for (const ScenarioRecord& r : b.records) {
    const std::string share = r.ceiling_share ? fixed(100 * *r.ceiling_share, 1) + (csv ? "" : " %") : "";
    if (csv) {
      out += r.scenario + "," + std::to_string(r.run) + "," + std::to_string(r.n_turns) + "," + std::to_string(r.n_prompt) +
             "," + std::to_string(r.n_gen) + "," + fixed(r.ttft_ms, 2) + "," + fixed(r.prefill_tps, 2) + "," +
             fixed(r.decode_tps, 2) + "," + (r.ceiling_share ? fixed(*r.ceiling_share, 4) : "") + "," +
             std::to_string(r.peak_rss) + "," + std::to_string(r.peak_anon) + "," + std::to_string(r.rss_swing) + "," +
             std::to_string(r.kv_bytes) + "," + (r.context_limited ? "true" : "false") + "," + r.output_sha256 + "\n";
    } else {
      out += "| " + r.scenario + (r.context_limited ? " (context-limited)" : "") + " | " + std::to_string(r.run) +
             " | " + std::to_string(r.n_turns) + " | " + std::to_string(r.n_prompt) + " | " + std::to_string(r.n_gen) +
             " | " + fixed(r.ttft_ms, 1) + " | " + fixed(r.prefill_tps, 1) + " | " + fixed(r.decode_tps, 1) + " | " +
             share + " | " + fixed(double(r.peak_rss) / mib, 1) + " | " + fixed(double(r.peak_anon) / mib, 1) + " | " +
             fixed(double(r.rss_swing) / mib, 2) + " | " + fixed(double(r.kv_bytes) / mib, 1) + " | " +
             r.output_sha256.substr(0, 12) + " |\n";
    }
  }
  return out;
}

}  // namespace edgellm
