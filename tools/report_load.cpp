// Reading a bench run record (docs/bench-record.md) into tools/report.h's
// structs. Every field the report shows is checked for presence and type
// here, so the tables never show a blank where a file was wrong, and every
// message names the file and the field's path in it.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "base/error.h"
#include "base/input_file.h"
#include "template/json.h"
#include "tools/report.h"

namespace edgellm::report {

namespace {

using tmpl::Json;

// Where a value sits: the file, and its path inside ("records[2].turns").
struct At {
  const std::string& source;
  std::string path;
  At in(std::string_view key) const {
    return {source, path.empty() ? std::string(key) : path + "." + std::string(key)};
  }
  At at(size_t i) const { return {source, path + "[" + std::to_string(i) + "]"}; }
};

[[noreturn]] void bad(const At& at, std::string_view what) { fail(at.source, ": ", at.path, ": ", what); }

const char* type_phrase(const Json& v) {
  switch (v.type()) {
    case Json::Type::Null:
      return "null";
    case Json::Type::Bool:
      return "a boolean";
    case Json::Type::Number:
      return "a number";
    case Json::Type::String:
      return "a string";
    case Json::Type::Array:
      return "an array";
    case Json::Type::Object:
      return "an object";
  }
  return "something else";
}

[[noreturn]] void wrong_type(const At& at, const char* expected, const Json& v) {
  bad(at, std::string("expected ") + expected + ", got " + type_phrase(v));
}

// obj[key], which must be there (null counts as there: the callers decide).
const Json& get(const Json& obj, std::string_view key, const At& at) {
  const Json* v = obj.find(key);
  if (!v) bad(at.in(key), "missing");
  return *v;
}

const Json& object(const Json& obj, std::string_view key, const At& at) {
  const Json& v = get(obj, key, at);
  if (!v.is_object()) wrong_type(at.in(key), "an object", v);
  return v;
}

const std::vector<Json>& array(const Json& obj, std::string_view key, const At& at) {
  const Json& v = get(obj, key, at);
  if (!v.is_array()) wrong_type(at.in(key), "an array", v);
  return v.items();
}

std::string string(const Json& obj, std::string_view key, const At& at) {
  const Json& v = get(obj, key, at);
  if (!v.is_string()) wrong_type(at.in(key), "a string", v);
  return v.as_string();
}

bool boolean(const Json& obj, std::string_view key, const At& at) {
  const Json& v = get(obj, key, at);
  if (!v.is_bool()) wrong_type(at.in(key), "true or false", v);
  return v.as_bool();
}

double number_value(const Json& v, const At& at) {
  if (!v.is_number()) wrong_type(at, "a number", v);
  if (!std::isfinite(v.as_number())) bad(at, "not a finite number");
  return v.as_number();
}

double number(const Json& obj, std::string_view key, const At& at) {
  return number_value(get(obj, key, at), at.in(key));
}

std::optional<double> number_or_null(const Json& obj, std::string_view key, const At& at) {
  const Json& v = get(obj, key, at);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) wrong_type(at.in(key), "a number or null", v);
  return number_value(v, at.in(key));
}

int64_t integer(const Json& obj, std::string_view key, const At& at, int64_t min = 0) {
  const double d = number(obj, key, at);
  if (d != std::floor(d) || d < double(min) || d > 9e15) {
    bad(at.in(key), "expected an integer" + std::string(min == 0 ? " >= 0" : min == 1 ? " >= 1" : ""));
  }
  return int64_t(d);
}

Conditions read_conditions(const Json& doc, const At& top) {
  Conditions c;
  c.created = string(doc, "created", top);
  c.version = string(doc, "version", top);
  c.build_type = string(object(doc, "build", top), "type", top.in("build"));
  c.load_ms = number(doc, "load_ms", top);

  const At h = top.in("host");
  const Json& host = object(doc, "host", top);
  c.cpu_model = string(host, "cpu_model", h);
  c.cores = integer(host, "cores", h, 1);
  c.kernel = string(host, "kernel", h);
  c.machine = string(host, "machine", h);
  c.read_gbs = number_or_null(host, "read_gbs", h);
  c.isa = string(host, "isa", h);

  const At m = top.in("model");
  const Json& model = object(doc, "model", top);
  c.model_path = string(model, "path", m);
  c.model_type = string(model, "type", m);
  c.quant = string(model, "quant", m);
  c.sha256 = string(model, "sha256", m);
  c.params = integer(model, "params", m);

  const At s = top.in("settings");
  const Json& set = object(doc, "settings", top);
  c.threads = integer(set, "threads", s, 1);
  c.isa = string(set, "isa", s);  // what the run used (host.isa says the same unless overridden)
  c.load_mode = string(set, "load_mode", s);
  c.n_batch = integer(set, "n_batch", s, 1);
  c.type_k = string(set, "type_k", s);
  c.type_v = string(set, "type_v", s);
  c.runs = integer(set, "runs", s, 1);
  c.chat_template = string(set, "chat_template", s);
  return c;
}

ScenarioRecord read_record(const Json& r, const At& at) {
  if (!r.is_object()) wrong_type(at, "an object", r);
  ScenarioRecord rec;
  rec.scenario = string(r, "scenario", at);
  if (rec.scenario.empty()) bad(at.in("scenario"), "empty");
  rec.run = integer(r, "run", at);
  rec.n_ctx = integer(r, "n_ctx", at, 1);  // per scenario: chat 512, summary 2048, multiturn 4096 unless -c
  rec.n_turns = integer(r, "n_turns", at, 1);
  rec.n_prompt = integer(r, "n_prompt", at);
  rec.n_gen = integer(r, "n_gen", at);
  rec.context_limited = boolean(r, "context_limited", at);
  rec.ttft_ms = number(r, "ttft_ms", at);
  rec.prefill_tps = number(r, "prefill_tps", at);
  rec.decode_tps = number(r, "decode_tps", at);
  rec.ceiling_share = number_or_null(r, "decode_ceiling_share", at);
  const auto& windows = array(r, "decode_window_tps", at);
  // A window the writer could not time is null: a gap in the chart, not a zero.
  for (size_t i = 0; i < windows.size(); ++i)
    rec.window_tps.push_back(windows[i].is_null() ? NAN : number_value(windows[i], at.in("decode_window_tps").at(i)));
  rec.window_tokens = integer(r, "window_tokens", at, 1);
  rec.peak_rss_bytes = double(integer(r, "peak_rss_bytes", at));
  rec.peak_anon_bytes = double(integer(r, "peak_anon_bytes", at));
  rec.rss_swing_bytes = double(integer(r, "rss_swing_bytes", at));
  rec.kv_bytes = double(integer(r, "kv_bytes", at));
  const auto& samples = array(r, "rss_samples", at);
  for (size_t i = 0; i < samples.size(); ++i) {
    const At s = at.in("rss_samples").at(i);
    if (!samples[i].is_object()) wrong_type(s, "an object", samples[i]);
    rec.rss_samples.push_back({number(samples[i], "t_ms", s), double(integer(samples[i], "rss_bytes", s)),
                               double(integer(samples[i], "anon_bytes", s))});
  }
  rec.output_sha256 = string(r, "output_sha256", at);
  return rec;
}

// The hottest zone of a sample's temps_c (an object zone -> °C or null, or null).
std::optional<double> hottest(const Json& temps, const At& at) {
  if (temps.is_null()) return std::nullopt;
  if (!temps.is_object()) wrong_type(at, "an object or null", temps);
  std::optional<double> max;
  for (const auto& [zone, v] : temps.entries()) {
    if (v.is_null()) continue;
    const double c = number_value(v, at.in(zone));
    max = max ? std::max(*max, c) : c;
  }
  return max;
}

Sustained read_sustained(const Json& s, const At& at) {
  if (!s.is_object()) wrong_type(at, "an object", s);
  Sustained out;
  out.minutes = number(s, "minutes", at);
  out.interval_s = number(s, "interval_s", at);
  out.chat_runs = integer(s, "chat_runs", at);
  out.thermal_available = boolean(s, "thermal_available", at);
  out.note = string(s, "note", at);
  const auto& samples = array(s, "samples", at);
  for (size_t i = 0; i < samples.size(); ++i) {
    const At p = at.in("samples").at(i);
    const Json& v = samples[i];
    if (!v.is_object()) wrong_type(p, "an object", v);
    SustainedSample x;
    x.t_s = number(v, "t_s", p);
    x.decode_tps = number_or_null(v, "decode_tps", p);
    x.hottest_c = hottest(get(v, "temps_c", p), p.in("temps_c"));
    x.rss_bytes = double(integer(v, "rss_bytes", p));
    out.samples.push_back(x);
  }
  return out;
}

}  // namespace

RunFile parse_run(const std::string& text, const std::string& source) {
  const Json doc = Json::parse(text, source);
  if (!doc.is_object()) fail(source, ": expected a JSON object (an edgellm bench run record), got ", type_phrase(doc));
  const At top{source, ""};
  const Json* schema = doc.find("schema");
  if (!schema)
    fail(source, ": schema: missing; not an edgellm bench run record (edgellm bench --scenario ... --out FILE)");
  if (!schema->is_string() || schema->as_string() != kRunSchema)
    fail(source, ": schema is ", schema->is_string() ? "\"" + schema->as_string() + "\"" : type_phrase(*schema),
         "; this edgellm reads \"", kRunSchema, "\"");
  RunFile run;
  run.path = source;
  run.cond = read_conditions(doc, top);
  const auto& records = array(doc, "records", top);
  for (size_t i = 0; i < records.size(); ++i) run.records.push_back(read_record(records[i], top.in("records").at(i)));
  if (const Json* s = doc.find("sustained"); s && !s->is_null())
    run.sustained = read_sustained(*s, top.in("sustained"));
  // A --sustained run holds only its samples; a run with neither is empty.
  if (records.empty() && !run.sustained)
    bad(top.in("records"), "empty: the run recorded no scenario and no sustained samples");
  return run;
}

RunFile load_run(const std::string& path) {
  return parse_run(read_input_file(path, "run record", /*allow_stdin=*/false), path);
}

}  // namespace edgellm::report
