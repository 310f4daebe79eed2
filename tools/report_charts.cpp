// The report's charts: one per question a person asks of a set of runs.
//   <scenario>-decode.svg  does decode slow down as the context fills?
//   <scenario>-rss.svg     does memory grow while it runs (and how much is anonymous)?
//   sustained.svg          does the device throttle once it is hot?
// Each run keeps one colour in every chart (its position among the inputs),
// so "the orange one" means the same run everywhere.
#include <algorithm>
#include <cmath>
#include <utility>

#include "tools/report.h"
#include "tools/svg_chart.h"

namespace edgellm::report {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<std::string> scenarios_in_order(const std::vector<RunFile>& runs) {
  std::vector<std::string> out;
  for (const RunFile& r : runs)
    for (const ScenarioRecord& rec : r.records)
      if (std::find(out.begin(), out.end(), rec.scenario) == out.end()) out.push_back(rec.scenario);
  return out;
}

std::vector<const ScenarioRecord*> records_of(const RunFile& run, const std::string& scenario) {
  std::vector<const ScenarioRecord*> out;
  for (const ScenarioRecord& rec : run.records)
    if (rec.scenario == scenario) out.push_back(&rec);
  return out;
}

// Decode tok/s per window, averaged over repetitions window by window (the
// windows of a scenario fall at the same generated tokens in every repetition).
chart::Series decode_series(const RunFile& run, int colour, const std::vector<const ScenarioRecord*>& recs) {
  chart::Series s;
  s.name = run.label;
  s.colour = colour;
  size_t n = 0;
  for (const ScenarioRecord* r : recs) n = std::max(n, r->window_tps.size());
  const double window = double(recs.front()->window_tokens);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    int count = 0;
    for (const ScenarioRecord* r : recs)
      if (i < r->window_tps.size()) sum += r->window_tps[i], ++count;
    s.x.push_back(window * double(i + 1));  // window i ends at (i+1) x window_tokens decode steps
    s.y.push_back(count ? sum / count : NAN);
  }
  return s;
}

chart::LineChart decode_chart(const std::vector<RunFile>& runs, const std::string& scenario) {
  chart::LineChart c;
  c.title = scenario + ": decode speed as the context fills";
  c.x_label = "decode steps (tokens generated after each turn's first), end of each window";
  c.y_label = "decode tok/s";
  c.y_log_when_wide = true;  // a 260K model and a 1B one on one chart
  int64_t most_reps = 1, window = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto recs = records_of(runs[i], scenario);
    if (recs.empty()) continue;
    most_reps = std::max<int64_t>(most_reps, int64_t(recs.size()));
    window = recs.front()->window_tokens;
    c.series.push_back(decode_series(runs[i], int(i), recs));
  }
  c.subtitle = "tok/s over each " + std::to_string(window) + "-token window";
  if (most_reps > 1) c.subtitle += ", mean over the repetitions";
  return c;
}

// RSS (solid) and anonymous memory (dashed) over the first repetition: the
// repetitions' clocks do not line up, and one shows the shape.
chart::LineChart rss_chart(const std::vector<RunFile>& runs, const std::string& scenario) {
  chart::LineChart c;
  c.title = scenario + ": memory over time";
  c.subtitle = "solid: RSS; dashed: anonymous memory (what Android LMK / iOS jetsam count); first repetition";
  c.x_label = "seconds since the scenario started";
  c.y_label = "MiB";
  c.y_log_when_wide = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto recs = records_of(runs[i], scenario);
    if (recs.empty()) continue;
    const ScenarioRecord* first = *std::min_element(
        recs.begin(), recs.end(), [](const ScenarioRecord* a, const ScenarioRecord* b) { return a->run < b->run; });
    chart::Series rss, anon;
    rss.name = runs[i].label;
    anon.name = runs[i].label + " anon";
    rss.colour = anon.colour = int(i);
    anon.dashed = true;
    anon.in_legend = false;  // the subtitle says what dashed means
    for (const RssSample& p : first->rss_samples) {
      rss.x.push_back(p.t_ms / 1000);
      anon.x.push_back(p.t_ms / 1000);
      rss.y.push_back(p.rss_bytes / kMiB);
      anon.y.push_back(p.anon_bytes / kMiB);
    }
    c.series.push_back(std::move(rss));
    c.series.push_back(std::move(anon));
  }
  return c;
}

// Decode tok/s per interval (left axis) and the hottest zone's °C (right
// axis, dashed). A run whose host gave no temperature is named in the
// subtitle: a line at 0 °C would be a number nobody measured.
chart::LineChart sustained_chart(const std::vector<RunFile>& runs) {
  chart::LineChart c;
  c.title = "sustained: decode speed and temperature";
  c.x_label = "minutes";
  c.y_label = "decode tok/s (solid)";
  c.y_log_when_wide = true;
  c.y2_label = "hottest thermal zone, °C (dashed)";
  std::string no_thermal;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].sustained) continue;
    const Sustained& s = *runs[i].sustained;
    chart::Series tps, temp;
    tps.name = runs[i].label;
    temp.name = runs[i].label + " °C";
    tps.colour = temp.colour = int(i);
    temp.dashed = temp.right_axis = true;
    temp.in_legend = false;  // the axis labels say what dashed means
    bool any_temp = false;
    for (const SustainedSample& p : s.samples) {
      tps.x.push_back(p.t_s / 60);
      temp.x.push_back(p.t_s / 60);
      tps.y.push_back(p.decode_tps.value_or(NAN));
      temp.y.push_back(p.hottest_c.value_or(NAN));
      any_temp |= p.hottest_c.has_value();
    }
    c.series.push_back(std::move(tps));
    if (any_temp) {
      c.series.push_back(std::move(temp));
    } else {
      const std::string letter = runs[i].label.substr(0, runs[i].label.find(':'));
      no_thermal += (no_thermal.empty() ? "" : "; ") + letter + (s.note.empty() ? "" : " (" + s.note + ")");
    }
  }
  if (!no_thermal.empty()) c.subtitle = "no temperature for " + no_thermal;
  return c;
}

}  // namespace

std::string chart_file_stem(const std::string& scenario) {
  std::string s;
  for (char ch : scenario) {
    const bool safe =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    s += safe ? ch : '_';
  }
  if (s.size() > 64) s.resize(64);
  if (s.empty()) s = "scenario";
  return s;
}

std::vector<std::pair<std::string, std::string>> scenario_stems(const std::vector<RunFile>& runs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& sc : scenarios_in_order(runs)) {
    std::string stem = chart_file_stem(sc);
    // Two names that only differ in unsafe characters ("a b", "a/b") must not share a file.
    auto taken = [&](const std::string& s) {
      return std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.second == s; });
    };
    for (int k = 2; taken(stem); ++k) stem = chart_file_stem(sc) + "-" + std::to_string(k);
    out.emplace_back(sc, stem);
  }
  return out;
}

std::vector<ReportFile> make_charts(const std::vector<RunFile>& runs) {
  std::vector<ReportFile> out;
  for (const auto& [sc, stem] : scenario_stems(runs)) {
    out.push_back({stem + "-decode.svg", chart::render_svg(decode_chart(runs, sc))});
    out.push_back({stem + "-rss.svg", chart::render_svg(rss_chart(runs, sc))});
  }
  if (std::any_of(runs.begin(), runs.end(), [](const RunFile& r) { return r.sustained.has_value(); }))
    out.push_back({"sustained.svg", chart::render_svg(sustained_chart(runs))});
  return out;
}

}  // namespace edgellm::report
