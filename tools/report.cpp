// The markdown half of `edgellm report`: the runs' labels, a conditions table
// that marks what differs (the first thing to check before comparing
// numbers), one results table per scenario and a sustained table. The charts
// are in report_charts.cpp, the reading of files in report_load.cpp.
#include "tools/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>

#include "base/text_escape.h"

namespace edgellm::report {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr const char* kDiffers = "≠";
constexpr const char* kNone = "—";  // a value the host could not give

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string letter(size_t i) {
  std::string s;
  for (size_t n = i + 1; n > 0; n = (n - 1) / 26) s.insert(s.begin(), char('A' + (n - 1) % 26));
  return s;  // A..Z, AA, AB, ...
}

// 494.0M, 7.24B: parameter counts as people say them.
std::string params_text(int64_t n) {
  if (n >= 1000000000) return fixed(double(n) / 1e9, 2) + "B";
  if (n >= 1000000) return fixed(double(n) / 1e6, 1) + "M";
  if (n >= 1000) return fixed(double(n) / 1e3, 1) + "K";
  return std::to_string(n);
}

// One condition: its row name, its text for a run, and whether differing
// texts mean the runs are not comparable (a timestamp always differs; a
// measured bandwidth a little).
struct Condition {
  const char* name;
  std::function<std::string(const Conditions&)> text;
  enum Compare { Exact, Measured, Never } compare = Exact;
  std::function<std::string(const Conditions&)> label_part = nullptr;  // in run labels when it differs
};

std::string short_cpu(const std::string& cpu) {
  std::string s = cpu;
  for (const char* noise : {"(R)", "(TM)", "(tm)", " CPU", " Processor"})
    for (size_t p; (p = s.find(noise)) != std::string::npos;) s.erase(p, std::string(noise).size());
  if (size_t at = s.find(" @ "); at != std::string::npos) s.resize(at);
  if (s.size() > 20) {
    size_t n = s.rfind(' ', 20);  // whole words
    if (n == std::string::npos || n == 0) {
      n = 20;
      while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
    }
    s.resize(n);
    while (!s.empty() && (s.back() == ' ' || s.back() == ',')) s.pop_back();
  }
  return s;
}

const std::vector<Condition>& conditions() {
  static const std::vector<Condition> rows = {
      {"model", [](const Conditions& c) { return c.model_type; }, Condition::Exact,
       [](const Conditions& c) { return c.model_type; }},
      {"quant", [](const Conditions& c) { return c.quant; }},
      {"sha256", [](const Conditions& c) { return c.sha256.substr(0, 12); }, Condition::Exact,
       [](const Conditions& c) { return "sha " + c.sha256.substr(0, 6); }},
      {"params", [](const Conditions& c) { return params_text(c.params); }},
      {"host CPU", [](const Conditions& c) { return c.cpu_model; }, Condition::Exact,
       [](const Conditions& c) { return short_cpu(c.cpu_model); }},
      {"cores", [](const Conditions& c) { return std::to_string(c.cores); }},
      {"machine", [](const Conditions& c) { return c.machine; }},
      {"kernel", [](const Conditions& c) { return c.kernel; }},
      {"read GB/s", [](const Conditions& c) { return c.read_gbs ? fixed(*c.read_gbs, 1) : kNone; },
       Condition::Measured},
      {"ISA", [](const Conditions& c) { return c.isa; }, Condition::Exact, [](const Conditions& c) { return c.isa; }},
      {"threads", [](const Conditions& c) { return std::to_string(c.threads); }, Condition::Exact,
       [](const Conditions& c) { return std::to_string(c.threads) + "t"; }},
      {"load mode", [](const Conditions& c) { return c.load_mode; }, Condition::Exact,
       [](const Conditions& c) { return c.load_mode; }},
      {"KV types (K / V)", [](const Conditions& c) { return c.type_k + " / " + c.type_v; }, Condition::Exact,
       [](const Conditions& c) { return "kv " + c.type_k + "/" + c.type_v; }},
      {"n_batch", [](const Conditions& c) { return std::to_string(c.n_batch); }},
      {"chat template", [](const Conditions& c) { return c.chat_template; }},
      {"repetitions", [](const Conditions& c) { return std::to_string(c.runs); }, Condition::Never},
      {"version", [](const Conditions& c) { return c.version; }, Condition::Exact,
       [](const Conditions& c) { return c.version; }},
      {"build type", [](const Conditions& c) { return c.build_type; }, Condition::Exact,
       [](const Conditions& c) { return c.build_type; }},
      {"load ms", [](const Conditions& c) { return fixed(c.load_ms, 0); }, Condition::Never},
      {"created", [](const Conditions& c) { return c.created; }, Condition::Never},
  };
  return rows;
}

// Bandwidth measured twice on one host differs by a few percent; more than
// 10% means a different machine or a busy one.
bool measured_differs(const std::vector<RunFile>& runs) {
  double lo = INFINITY, hi = -INFINITY;
  size_t known = 0;
  for (const RunFile& r : runs)
    if (r.cond.read_gbs) lo = std::min(lo, *r.cond.read_gbs), hi = std::max(hi, *r.cond.read_gbs), ++known;
  if (known != 0 && known != runs.size()) return true;
  return known > 1 && hi > lo * 1.1;
}

bool differs(const Condition& c, const std::vector<RunFile>& runs) {
  if (c.compare == Condition::Never || runs.size() < 2) return false;
  if (c.compare == Condition::Measured) return measured_differs(runs);
  for (const RunFile& r : runs)
    if (c.text(r.cond) != c.text(runs.front().cond)) return true;
  return false;
}

// mean, and min-max when repetitions differ: "101.2 (98.1–104.0)".
struct Stat {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  int n = 0;
  void add(double v) { sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++n; }
  double mean() const { return n ? sum / n : 0; }
  std::string text(int decimals, const char* unit = "") const {
    if (n == 0) return kNone;
    std::string s = fixed(mean(), decimals) + unit;
    if (n > 1 && fixed(lo, decimals) != fixed(hi, decimals))
      s += " (" + fixed(lo, decimals) + "–" + fixed(hi, decimals) + ")";
    return s;
  }
};

std::string row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const std::string& c : cells) s += " " + c + " |";
  return s + "\n";
}

// A header's separator row: align is one letter per column, 'l'eft or 'r'ight (numbers).
std::string separator(const std::string& align) {
  std::string s = "|";
  for (char a : align) s += a == 'r' ? "---:|" : "---|";
  return s + "\n";
}

std::string bold(const std::string& s) { return "**" + s + "**"; }

// A path or file name as a markdown link target: spaces and the characters
// markdown would end the link at, percent-encoded.
std::string link_target(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch <= ' ' || ch == '(' || ch == ')' || ch == '<' || ch == '>' || ch == '%' || ch >= 0x7F) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    } else {
      out += char(ch);
    }
  }
  return out;
}

std::string runs_and_conditions(const std::vector<RunFile>& runs) {
  std::string md = "| run | file |\n|---|---|\n";
  for (const RunFile& r : runs) md += row({markdown_escape(r.label), markdown_escape(r.path)});
  md += "\n## Conditions\n\n";
  md += std::string("Rows marked ") + kDiffers +
        " differ between the runs: compare results across them knowing that.\n\n";
  std::vector<std::string> head = {""};
  for (const RunFile& r : runs) head.push_back(markdown_escape(r.label.substr(0, r.label.find(':'))));
  md += row(head) + separator(std::string(head.size(), 'l'));
  for (const Condition& c : conditions()) {
    const bool d = differs(c, runs);
    std::vector<std::string> cells = {d ? bold(std::string(kDiffers) + " " + c.name) : c.name};
    for (const RunFile& r : runs)
      cells.push_back(d ? bold(markdown_escape(c.text(r.cond))) : markdown_escape(c.text(r.cond)));
    md += row(cells);
  }
  return md;
}

std::string scenario_section(const std::vector<RunFile>& runs, const std::string& scenario, const std::string& stem,
                             const std::string& chart_prefix) {
  std::string md = "\n## " + markdown_escape(scenario) + "\n\n";
  md += "![" + markdown_escape(scenario) + ": decode tok/s over generated tokens](" +
        link_target(chart_prefix + stem + "-decode.svg") + ")\n\n";
  md +=
      "![" + markdown_escape(scenario) + ": RSS over time](" + link_target(chart_prefix + stem + "-rss.svg") + ")\n\n";
  const std::vector<std::string> head = {"run", "reps", "n_ctx", "TTFT ms", "prefill tok/s", "decode tok/s",
                                         "of ceiling", "peak RSS MiB", "peak anon MiB", "RSS swing MiB", "KV MiB",
                                         "prompt / gen", "output"};
  md += row(head) + separator("lrrrrrrrrrrrl");
  std::vector<std::string> notes;
  // The first fingerprint seen per model file: the same file should give the same tokens.
  std::vector<std::pair<std::string, std::string>> first_output;  // sha256 -> output
  bool limited_any = false, reps_any = false;
  for (const RunFile& r : runs) {
    Stat n_ctx, ttft, prefill, decode, share, rss, anon, swing, kv, prompt, gen;
    std::set<std::string> outputs;
    bool limited = false;
    for (const ScenarioRecord& rec : r.records) {
      if (rec.scenario != scenario) continue;
      n_ctx.add(double(rec.n_ctx)), ttft.add(rec.ttft_ms), prefill.add(rec.prefill_tps), decode.add(rec.decode_tps);
      if (rec.ceiling_share) share.add(*rec.ceiling_share * 100);
      rss.add(rec.peak_rss_bytes / kMiB), anon.add(rec.peak_anon_bytes / kMiB);
      swing.add(rec.rss_swing_bytes / kMiB), kv.add(rec.kv_bytes / kMiB);
      prompt.add(double(rec.n_prompt)), gen.add(double(rec.n_gen));
      outputs.insert(rec.output_sha256);
      limited |= rec.context_limited;
    }
    if (ttft.n == 0) continue;  // this run did not have the scenario
    reps_any |= ttft.n > 1;
    const std::string short_label = r.label.substr(0, r.label.find(':'));
    std::string out = markdown_escape(outputs.begin()->substr(0, 8));
    if (outputs.size() > 1) {
      out = bold("⚠ " + std::to_string(outputs.size()) + " differ");
      notes.push_back(short_label + "'s repetitions generated different tokens: the numerics are not deterministic");
    } else {
      auto seen = std::find_if(first_output.begin(), first_output.end(),
                               [&](const auto& p) { return p.first == r.cond.sha256; });
      if (seen == first_output.end()) {
        first_output.emplace_back(r.cond.sha256, *outputs.begin());
      } else if (seen->second != *outputs.begin()) {
        out = bold("⚠ " + out);
        notes.push_back(short_label +
                        " generated different tokens than an earlier run of the same model file (sha256 " +
                        r.cond.sha256.substr(0, 12) + "): its numerics differ (ISA, KV type, a kernel change?)");
      }
    }
    std::string tokens = prompt.text(0) + " / " + gen.text(0);
    if (limited) tokens += " †", limited_any = true;
    md += row({markdown_escape(r.label), std::to_string(ttft.n), n_ctx.text(0), ttft.text(1), prefill.text(1),
               decode.text(1), share.text(0, "%"), rss.text(1), anon.text(1), swing.text(1), kv.text(1), tokens, out});
  }
  if (reps_any) md += "\nMeans over the repetitions; (min–max) where they differ.\n";
  if (limited_any)
    md += "\n† cut to fit its context: a shorter message, fewer turns or shorter replies than the built-in "
          "scenario.\n";
  for (const std::string& n : notes) md += "\n⚠ " + markdown_escape(n) + ".\n";
  return md;
}

// First and last minute of the sustained run: how much speed the heat took.
std::string sustained_section(const std::vector<RunFile>& runs, const std::string& chart_prefix) {
  std::string md = "\n## sustained\n\n![sustained: decode tok/s and temperature over minutes](" +
                   link_target(chart_prefix + "sustained.svg") + ")\n\n";
  const std::vector<std::string> head = {"run", "minutes", "chat runs", "first minute tok/s", "last minute tok/s",
                                         "change", "hottest °C (start → max)", "thermal"};
  md += row(head) + separator("lrrrrrrl");
  for (const RunFile& r : runs) {
    if (!r.sustained) continue;
    const Sustained& s = *r.sustained;
    const double end = s.samples.empty() ? 0 : s.samples.back().t_s;
    Stat first, last, temp;
    std::optional<double> temp_start;
    for (const SustainedSample& p : s.samples) {
      if (p.decode_tps && p.t_s <= 60) first.add(*p.decode_tps);
      if (p.decode_tps && p.t_s >= end - 60) last.add(*p.decode_tps);
      if (p.hottest_c) {
        temp.add(*p.hottest_c);
        if (!temp_start) temp_start = p.hottest_c;
      }
    }
    std::string change = kNone;
    if (first.n && last.n && first.sum > 0) change = fixed((last.mean() / first.mean() - 1) * 100, 1) + "%";
    const std::string temps = temp.n ? fixed(*temp_start, 1) + " → " + fixed(temp.hi, 1) : kNone;
    const std::string thermal = s.thermal_available ? "yes" : "no: " + s.note;
    md += row({markdown_escape(r.label), fixed(s.minutes, 1), std::to_string(s.chat_runs),
               first.n ? fixed(first.mean(), 1) : kNone, last.n ? fixed(last.mean(), 1) : kNone, change, temps,
               markdown_escape(thermal)});
  }
  return md;
}

}  // namespace

std::string markdown_escape(const std::string& s) {
  // One table cell: no line breaks, no control characters, and nothing
  // markdown or HTML would act on (a pipe ends the cell, <...> is HTML).
  std::string out;
  for (char ch : escape_control(s)) {
    if (ch != '\0' && std::strchr("|\\`*[]<>#", ch)) out += '\\';
    out += ch;
  }
  return out;
}

void label_runs(std::vector<RunFile>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string label = letter(i) + ":";
    std::string sep = " ";
    for (const Condition& c : conditions()) {
      if (!c.label_part) continue;
      // The model always names a run; the rest only where the runs differ in it.
      if (std::string(c.name) != "model" && !differs(c, runs)) continue;
      label += sep + c.label_part(runs[i].cond);
      sep = ", ";
    }
    runs[i].label = label;
  }
}

Report make_report(const std::vector<RunFile>& runs, const std::string& chart_prefix) {
  Report rep;
  std::string& md = rep.markdown;
  md = "# edgellm bench report\n\n";
  md += std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") + " (`edgellm bench --scenario`).\n\n";
  md += runs_and_conditions(runs);
  for (const auto& [sc, stem] : scenario_stems(runs)) md += scenario_section(runs, sc, stem, chart_prefix);
  if (std::any_of(runs.begin(), runs.end(), [](const RunFile& r) { return r.sustained.has_value(); }))
    md += sustained_section(runs, chart_prefix);
  rep.charts = make_charts(runs);
  return rep;
}

}  // namespace edgellm::report
