// edgellm report (issue 17): the SVG chart writer's ticks, escaping and
// degenerate inputs; the report's reading of run records (docs/bench-record.md)
// and its errors; difference marking, averaging over repetitions and the
// charts it draws. Run records are synthetic documents built here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/run_cli.h"
#include "tools/report.h"
#include "tools/svg_chart.h"

namespace edgellm {
namespace {

using chart::LineChart;
using chart::Series;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

// Well-formed enough for a viewer: one root, balanced elements we use, and no
// number that is not a number.
void expect_clean_svg(const std::string& svg) {
  EXPECT_EQ(count(svg, "<svg"), 1u) << svg;
  EXPECT_EQ(count(svg, "</svg>"), 1u);
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  std::string lower;
  for (char c : svg) lower += char(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_FALSE(contains(lower, "nan")) << svg;
  EXPECT_FALSE(contains(lower, "inf")) << svg;
}

// ---- chart writer ----

TEST(SvgChart, NiceTicksAreOneTwoFiveSteps) {
  chart::Ticks t = chart::nice_ticks(0, 97);
  EXPECT_EQ(t.step, 20);
  EXPECT_EQ(t.lo, 0);
  EXPECT_EQ(t.hi, 100);
  EXPECT_EQ(t.values.size(), 6u);
  t = chart::nice_ticks(0.13, 0.92);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.hi, 1.0);
  t = chart::nice_ticks(380, 415);
  EXPECT_EQ(t.step, 10);
  EXPECT_LE(t.lo, 380);
  EXPECT_GE(t.hi, 415);
  for (double lo : {-3.0, 0.0, 1e-6, 7.0, 1e9})
    for (double span : {1e-3, 1.0, 37.0, 1e6}) {
      const chart::Ticks u = chart::nice_ticks(lo, lo + span);
      const double eps = 1e-9 * std::max(1.0, std::fabs(lo) + span);  // rounding aside
      EXPECT_LE(u.lo, lo + eps);
      EXPECT_GE(u.hi, lo + span - eps);
      EXPECT_GE(u.values.size(), 3u);
      EXPECT_LE(u.values.size(), 12u);
      const double m = u.step / std::pow(10.0, std::floor(std::log10(u.step) + 1e-9));
      EXPECT_TRUE(std::fabs(m - 1) < 1e-9 || std::fabs(m - 2) < 1e-9 || std::fabs(m - 5) < 1e-9) << u.step;
    }
}

TEST(SvgChart, NiceTicksOfDegenerateRanges) {
  chart::Ticks t = chart::nice_ticks(0, 0);
  EXPECT_EQ(t.lo, 0);
  EXPECT_GT(t.hi, 0);
  t = chart::nice_ticks(42, 42);
  EXPECT_LT(t.lo, 42);
  EXPECT_GT(t.hi, 42);
  EXPECT_GE(t.lo, 0);  // a positive value's axis does not go negative
  t = chart::nice_ticks(NAN, INFINITY);
  EXPECT_TRUE(std::isfinite(t.lo) && std::isfinite(t.hi) && t.hi > t.lo);
  t = chart::nice_ticks(5, 1);  // reversed
  EXPECT_LE(t.lo, 1);
  EXPECT_GE(t.hi, 5);
}

TEST(SvgChart, TickLabels) {
  EXPECT_EQ(chart::tick_label(250, 50), "250");
  EXPECT_EQ(chart::tick_label(0.5, 0.5), "0.5");
  EXPECT_EQ(chart::tick_label(0.05, 0.05), "0.05");
  EXPECT_EQ(chart::tick_label(-0.0, 1), "0");
  EXPECT_EQ(chart::tick_label(-1e-17, 0.2), "0.0");
}

TEST(SvgChart, LogTicksRunOneTwoFive) {
  chart::Ticks t = chart::log_ticks(3, 7500);
  EXPECT_TRUE(t.log);
  EXPECT_EQ(t.values, (std::vector<double>{2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}));
  t = chart::log_ticks(0.02, 0.3);
  ASSERT_EQ(t.values.size(), 5u);
  EXPECT_DOUBLE_EQ(t.lo, 0.02);
  EXPECT_DOUBLE_EQ(t.hi, 0.5);
  t = chart::log_ticks(1, 1e9);  // too many 1-2-5 steps: powers of ten
  EXPECT_EQ(t.values.size(), 10u);
  EXPECT_DOUBLE_EQ(t.values[1], 10);
  t = chart::log_ticks(7, 7);  // one value still spans two ticks
  EXPECT_EQ(t.values, (std::vector<double>{5, 10}));
  EXPECT_FALSE(chart::log_ticks(0, 10).log);  // no log of zero: linear
}

// Runs 300x apart share a chart on a log axis; runs 2x apart keep the
// linear one from zero; a zero forces linear (a log axis cannot show it).
TEST(SvgChart, LogAxisOnlyWhenTheRunsDifferByOrdersOfMagnitude) {
  LineChart c;
  c.y_label = "decode tok/s";
  c.y_log_when_wide = true;
  c.series.push_back({"small", {1, 2, 3}, {9000, 8000, 7000}});
  c.series.push_back({"large", {1, 2, 3}, {31, 30, 29}});
  std::string svg = chart::render_svg(c);
  expect_clean_svg(svg);
  EXPECT_TRUE(contains(svg, "decode tok/s (log scale)"));
  EXPECT_TRUE(contains(svg, ">10000</text>"));
  EXPECT_TRUE(contains(svg, ">20</text>"));
  c.series[0].y = {60, 61, 62};
  svg = chart::render_svg(c);
  EXPECT_FALSE(contains(svg, "log scale"));
  c.series[0].y = {9000, 0, 7000};
  EXPECT_FALSE(contains(chart::render_svg(c), "log scale"));
  c.series[0].y = {9000, 8000, 7000};
  c.y_log_when_wide = false;
  EXPECT_FALSE(contains(chart::render_svg(c), "log scale"));
}

TEST(SvgChart, XmlEscape) {
  EXPECT_EQ(chart::xml_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(chart::xml_escape("tab\there\x01"), "tab here ");
  EXPECT_EQ(chart::xml_escape("caf\xC3\xA9 \xC2\xB0"
                              "C"),
            "caf\xC3\xA9 \xC2\xB0"
            "C");                                              // UTF-8 passes
  EXPECT_EQ(chart::xml_escape("bad\xFF"), "bad\xEF\xBF\xBD");  // invalid UTF-8 does not
}

TEST(SvgChart, SeriesNamesAreEscaped) {
  LineChart c;
  c.title = "<title & more>";
  c.series.push_back({"</text><script>alert(1)</script>", {1, 2}, {3, 4}});
  const std::string svg = chart::render_svg(c);
  expect_clean_svg(svg);
  EXPECT_FALSE(contains(svg, "<script>"));
  EXPECT_TRUE(contains(svg, "&lt;script&gt;"));
  EXPECT_TRUE(contains(svg, "&lt;title &amp; more&gt;"));
}

TEST(SvgChart, DegenerateInputs) {
  LineChart empty;
  empty.title = "nothing";
  std::string svg = chart::render_svg(empty);
  expect_clean_svg(svg);
  EXPECT_TRUE(contains(svg, "no data"));

  LineChart no_points;
  no_points.series.push_back({"empty", {}, {}});
  no_points.series.push_back({"all missing", {1, 2, 3}, {NAN, INFINITY, -INFINITY}});
  svg = chart::render_svg(no_points);
  expect_clean_svg(svg);
  EXPECT_TRUE(contains(svg, "no data"));

  LineChart one;
  one.series.push_back({"one", {5}, {7}});
  svg = chart::render_svg(one);
  expect_clean_svg(svg);
  EXPECT_TRUE(contains(svg, "<circle"));  // a lone point is drawn as a dot
  EXPECT_FALSE(contains(svg, "no data"));

  LineChart flat;
  flat.series.push_back({"flat", {0, 0, 0}, {3, 3, 3}});
  flat.series.push_back({"zero", {0, 0}, {0, 0}, 1, false, true});
  svg = chart::render_svg(flat);
  expect_clean_svg(svg);

  LineChart huge;
  huge.series.push_back({"huge", {1, 2, 3}, {1e300, -1e300, 4}});
  huge.series.push_back({"mismatched", {1, 2, 3, 4}, {1}});
  expect_clean_svg(chart::render_svg(huge));
}

TEST(SvgChart, MissingPointsBreakTheLine) {
  LineChart c;
  c.series.push_back({"gappy", {1, 2, 3, 4, 5}, {10, 11, NAN, 12, 13}});
  const std::string svg = chart::render_svg(c);
  expect_clean_svg(svg);
  const size_t path = svg.find("<path d=\"");
  ASSERT_NE(path, std::string::npos);
  const std::string d = svg.substr(path, svg.find('"', path + 9) - path);
  EXPECT_EQ(count(d, "M"), 2u) << d;  // two runs of points, two moves
}

TEST(SvgChart, SecondAxisAndLegend) {
  LineChart c;
  c.y2_label = "temp °C";
  c.series.push_back({"A tok/s", {0, 1, 2}, {90, 85, 80}});
  c.series.push_back({"A °C", {0, 1, 2}, {45, 60, 70}, 0, true, true});
  const std::string svg = chart::render_svg(c);
  expect_clean_svg(svg);
  EXPECT_TRUE(contains(svg, "temp °C"));
  EXPECT_TRUE(contains(svg, "stroke-dasharray"));
  EXPECT_EQ(count(svg, chart::palette_colour(0)), 4u);  // both series and both legend swatches share run A's colour
}

// ---- run records ----

struct RunSpec {
  int threads = 2;
  std::vector<double> decode = {100};  // one record per repetition
  std::string output = std::string(64, 'a');
  bool sustained = false, thermal = true;
  std::string schema = "edgellm.bench.run/1";
};

std::string record_json(const RunSpec& s, int run, double decode) {
  std::string windows, samples;
  for (int i = 0; i < 8; ++i) {
    if (i) windows += ',';  // appended piecewise: GCC 12 warns (-Wrestrict) on "," + std::string
    windows += std::to_string(decode - i);
  }
  for (int i = 0; i < 10; ++i)
    samples += std::string(i ? "," : "") + "{\"t_ms\":" + std::to_string(i * 320) +
               ",\"rss_bytes\":" + std::to_string((400 + i) << 20) +
               ",\"anon_bytes\":" + std::to_string((140 + i) << 20) + "}";
  return "{\"scenario\":\"chat\",\"run\":" + std::to_string(run) + ",\"model_sha256\":\"" + std::string(64, '9') +
         "\",\"model_type\":\"qwen2 0.5B Q4_0\",\"version\":\"v1.0\","
         "\"threads\":" +
         std::to_string(s.threads) +
         ",\"isa\":\"avx2\",\"load_mode\":\"mmap\",\"n_ctx\":4096,"
         "\"type_k\":\"f16\",\"type_v\":\"f16\",\"load_ms\":200,\"n_turns\":1,\"n_prompt\":120,\"n_gen\":256,"
         "\"context_tokens\":376,\"context_limited\":false,\"ttft_ms\":150.5,\"prefill_tps\":800,\"decode_tps\":" +
         std::to_string(decode) + ",\"decode_window_tps\":[" + windows +
         "],\"window_tokens\":32,"
         "\"decode_ceiling_tps\":200,\"decode_ceiling_share\":" +
         std::to_string(decode / 200) +
         ",\"peak_rss_bytes\":440401920,\"peak_anon_bytes\":157286400,\"rss_swing_bytes\":0,\"kv_bytes\":50331648,"
         "\"rss_samples\":[" +
         samples + "],\"turns\":[],\"output_sha256\":\"" + s.output + "\",\"output_preview\":\"Hi\"}";
}

std::string sustained_json(const RunSpec& s) {
  std::string samples;
  for (int i = 0; i < 13; ++i) {
    const std::string temps = s.thermal ? "{\"cpu\":" + std::to_string(45 + 2 * i) + ",\"gpu\":null}" : "null";
    samples += std::string(i ? "," : "") + "{\"t_s\":" + std::to_string(i * 10) +
               ",\"decode_tps\":" + (i == 0 ? "null" : std::to_string(100 - i)) +
               ",\"tokens\":" + std::to_string(i * 1000) +
               ",\"rss_bytes\":419430400,\"anon_bytes\":146800640,\"temps_c\":" + temps + ",\"cpu_mhz\":null}";
  }
  return ",\"sustained\":{\"minutes\":2,\"interval_s\":10,\"chat_runs\":9,\"thermal_available\":" +
         std::string(s.thermal ? "true" : "false") + ",\"note\":\"" + (s.thermal ? "" : "no thermal zones") +
         "\",\"samples\":[" + samples + "]}";
}

std::string run_json(const RunSpec& s) {
  std::string records;
  for (size_t i = 0; i < s.decode.size(); ++i) {
    if (i) records += ',';
    records += record_json(s, int(i), s.decode[i]);
  }
  return "{\"schema\":\"" + s.schema +
         "\",\"created\":\"2026-12-03T20:00:00Z\",\"version\":\"v1.0\","
         "\"build\":{\"commit\":\"abc1234\",\"number\":800,\"type\":\"Release\"},"
         "\"host\":{\"cpu_model\":\"Test CPU\",\"cores\":8,\"kernel\":\"Linux 6.1\",\"machine\":\"x86_64\","
         "\"read_gbs\":20.5,\"read_gbs_one\":10,\"int8_gops\":50,\"isa\":\"avx2\","
         "\"thermal\":{\"available\":true,\"zones\":[],\"note\":\"\"},"
         "\"cpu_freq\":{\"available\":false,\"cur_mhz\":null,\"max_mhz\":null,\"governor\":null,\"note\":\"\"}},"
         "\"model\":{\"path\":\"m.gguf\",\"file_bytes\":1000,\"sha256\":\"" +
         std::string(64, '9') +
         "\","
         "\"arch\":\"qwen2\",\"type\":\"qwen2 0.5B Q4_0\",\"quant\":\"Q4_0\",\"params\":494032768,"
         "\"n_ctx_train\":32768,\"weight_bytes_per_token\":300000000},"
         "\"settings\":{\"threads\":" +
         std::to_string(s.threads) +
         ",\"isa\":\"avx2\",\"load_mode\":\"mmap\","
         "\"n_batch\":512,\"type_k\":\"f16\",\"type_v\":\"f16\",\"runs\":" +
         std::to_string(std::max<size_t>(1, s.decode.size())) +
         ",\"sampling\":\"greedy\",\"chat_template\":\"gguf\",\"prompt_file\":null},"
         "\"load_ms\":200,\"records\":[" +
         records + "]" + (s.sustained ? sustained_json(s) : "") + "}";
}

std::string error_of(const std::string& text, const std::string& source = "b.json") {
  try {
    report::parse_run(text, source);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The first occurrence of `from` replaced: breaks one field of a good document.
std::string with(std::string text, const std::string& from, const std::string& to) {
  const size_t p = text.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) text.replace(p, from.size(), to);
  return text;
}

std::vector<report::RunFile> two_runs(RunSpec a, RunSpec b) {
  std::vector<report::RunFile> runs = {report::parse_run(run_json(a), "a.json"),
                                       report::parse_run(run_json(b), "b.json")};
  report::label_runs(runs);
  return runs;
}

// The markdown line whose first cell starts with `name` (after an optional "**≠ ").
std::string table_row(const std::string& md, const std::string& name) {
  for (const std::string& prefix : {"| " + name + " |", "| **≠ " + name + "** |"}) {
    const size_t p = md.find(prefix);
    if (p != std::string::npos) return md.substr(p, md.find('\n', p) - p);
  }
  return "";
}

TEST(Report, ParsesAGoodRecord) {
  RunSpec s;
  s.sustained = true;
  const report::RunFile r = report::parse_run(run_json(s), "a.json");
  EXPECT_EQ(r.cond.threads, 2);
  EXPECT_EQ(r.cond.model_type, "qwen2 0.5B Q4_0");
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].window_tps.size(), 8u);
  EXPECT_EQ(r.records[0].rss_samples.size(), 10u);
  ASSERT_TRUE(r.sustained.has_value());
  EXPECT_FALSE(r.sustained->samples[0].decode_tps.has_value());
  EXPECT_EQ(r.sustained->samples[1].hottest_c.value_or(-1), 47);  // the hottest zone; a null zone skipped
}

TEST(Report, ErrorsNameTheFileAndTheField) {
  const std::string good = run_json(RunSpec{});
  EXPECT_TRUE(contains(error_of("{\"schema\": "), "b.json")) << error_of("{\"schema\": ");
  EXPECT_TRUE(contains(error_of("{\"schema\": "), "line"));
  EXPECT_TRUE(contains(error_of("[1,2]"), "b.json: expected a JSON object"));
  EXPECT_TRUE(contains(error_of("{}"), "b.json: schema: missing"));
  RunSpec other;
  other.schema = "edgellm.bench.run/2";
  EXPECT_TRUE(contains(error_of(run_json(other)), "schema is \"edgellm.bench.run/2\"")) << error_of(run_json(other));
  EXPECT_EQ(error_of(with(good, "\"decode_tps\":", "\"decode_tpz\":")), "b.json: records[0].decode_tps: missing");
  EXPECT_EQ(error_of(with(good, "\"ttft_ms\":150.5", "\"ttft_ms\":\"fast\"")),
            "b.json: records[0].ttft_ms: expected a number, got a string");
  EXPECT_EQ(error_of(with(good, "\"threads\":2,\"isa\":\"avx2\",\"load_mode\":\"mmap\",\"n_batch\"",
                          "\"threads\":2.5,\"isa\":\"avx2\",\"load_mode\":\"mmap\",\"n_batch\"")),
            "b.json: settings.threads: expected an integer >= 1");
  EXPECT_EQ(error_of(with(good, "\"cores\":8", "\"cores\":null")), "b.json: host.cores: expected a number, got null");
  EXPECT_EQ(error_of(with(good, "\"t_ms\":0,", "\"t_ms\":[],")),
            "b.json: records[0].rss_samples[0].t_ms: expected a number, got an array");
  const size_t records = good.find("\"records\":[");
  EXPECT_EQ(error_of(good.substr(0, records) + "\"records\":[]}"),
            "b.json: records: empty: the run recorded no scenario and no sustained samples");
}

// `bench --sustained` writes only its samples: such a run loads and sits in a
// report beside scenario runs (in the sustained chart, not the scenario tables).
TEST(Report, SustainedOnlyRunLoadsAndJoinsAReport) {
  RunSpec scenario, sustained;
  sustained.decode = {};
  sustained.sustained = true;
  const report::RunFile only = report::parse_run(run_json(sustained), "s.json");
  EXPECT_TRUE(only.records.empty());
  ASSERT_TRUE(only.sustained.has_value());
  EXPECT_EQ(only.sustained->samples.size(), 13u);
  std::vector<report::RunFile> runs = {report::parse_run(run_json(scenario), "a.json"),
                                       report::parse_run(run_json(sustained), "s.json")};
  report::label_runs(runs);
  const report::Report rep = report::make_report(runs, "c/");
  std::vector<std::string> names;
  for (const auto& c : rep.charts) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"chat-decode.svg", "chat-rss.svg", "sustained.svg"}));
  const std::string chat = rep.markdown.substr(rep.markdown.find("## chat"));
  EXPECT_FALSE(contains(chat.substr(0, chat.find("## sustained")), "B: ")) << rep.markdown;
}

TEST(Report, MarksTheConditionsThatDiffer) {
  RunSpec a, b;
  b.threads = 4;
  const auto runs = two_runs(a, b);
  EXPECT_EQ(runs[0].label, "A: qwen2 0.5B Q4_0, 2t");
  EXPECT_EQ(runs[1].label, "B: qwen2 0.5B Q4_0, 4t");
  const std::string md = report::make_report(runs).markdown;
  const std::string threads = table_row(md, "threads");
  EXPECT_TRUE(contains(threads, "**≠ threads**")) << md;
  EXPECT_TRUE(contains(threads, "| **2** | **4** |")) << threads;
  const std::string model = table_row(md, "model");
  ASSERT_FALSE(model.empty()) << md;
  EXPECT_FALSE(contains(model, "≠"));
  EXPECT_FALSE(contains(model, "**"));
  EXPECT_FALSE(contains(table_row(md, "created"), "≠"));  // a timestamp always differs; not a condition
}

TEST(Report, BandwidthDiffersOnlyBeyondNoise) {
  RunSpec a;
  std::vector<report::RunFile> runs = {
      report::parse_run(run_json(a), "a.json"),
      report::parse_run(with(run_json(a), "\"read_gbs\":20.5", "\"read_gbs\":21"), "b.json")};
  report::label_runs(runs);
  EXPECT_FALSE(contains(table_row(report::make_report(runs).markdown, "read GB/s"), "≠"));
  runs[1] = report::parse_run(with(run_json(a), "\"read_gbs\":20.5", "\"read_gbs\":35"), "b.json");
  EXPECT_TRUE(contains(table_row(report::make_report(runs).markdown, "read GB/s"), "≠"));
}

TEST(Report, AveragesOverRepetitions) {
  RunSpec a, b;
  a.decode = {90, 100, 110};
  b.decode = {50};
  const std::string md = report::make_report(two_runs(a, b)).markdown;
  const std::string chat = md.substr(md.find("## chat"));
  const std::string row_a = table_row(chat, "A: qwen2 0.5B Q4_0");
  EXPECT_TRUE(contains(row_a, "| 3 | 4096 |")) << row_a;  // repetitions, the scenario's n_ctx
  EXPECT_TRUE(contains(row_a, "100.0 (90.0–110.0)")) << row_a;  // decode tok/s
  EXPECT_TRUE(contains(row_a, "50% (45–55)")) << row_a;         // share of the ceiling
  EXPECT_TRUE(contains(row_a, "150.5 |")) << row_a;             // equal values: no range
  const std::string row_b = table_row(chat, "B: qwen2 0.5B Q4_0");
  EXPECT_TRUE(contains(row_b, "| 50.0 |")) << row_b;
}

TEST(Report, FlagsDifferentOutputsOfTheSameModel) {
  RunSpec a, b;
  b.threads = 4;
  std::string md = report::make_report(two_runs(a, b)).markdown;
  EXPECT_FALSE(contains(md, "⚠"));
  b.output = std::string(64, 'b');
  md = report::make_report(two_runs(a, b)).markdown;
  EXPECT_TRUE(contains(table_row(md.substr(md.find("## chat")), "B: qwen2 0.5B Q4_0, 4t"), "⚠ bbbbbbbb")) << md;
  EXPECT_TRUE(contains(md, "same model file"));
}

TEST(Report, ChartsPerScenarioAndSustained) {
  RunSpec a, b;
  b.threads = 4;
  a.sustained = b.sustained = true;
  b.thermal = false;
  const report::Report rep = report::make_report(two_runs(a, b), "charts/");
  std::vector<std::string> names;
  for (const auto& c : rep.charts) {
    names.push_back(c.name);
    expect_clean_svg(c.text);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"chat-decode.svg", "chat-rss.svg", "sustained.svg"}));
  EXPECT_TRUE(contains(rep.markdown, "](charts/chat-decode.svg)"));
  EXPECT_TRUE(contains(rep.markdown, "](charts/sustained.svg)"));
  const std::string& sustained = rep.charts[2].text;
  EXPECT_TRUE(contains(sustained, "no temperature for B (no thermal zones)"));
  EXPECT_EQ(count(sustained, "stroke-dasharray"), 1u);  // A's temperature; none invented for B
}

TEST(Report, ChartFileNamesAreSafe) {
  EXPECT_EQ(report::chart_file_stem("chat"), "chat");
  EXPECT_EQ(report::chart_file_stem("../../etc/passwd"), "______etc_passwd");
  EXPECT_EQ(report::chart_file_stem(""), "scenario");
  EXPECT_EQ(report::markdown_escape("a|b<c>"), "a\\|b\\<c\\>");
  EXPECT_EQ(report::markdown_escape("two\nlines"), "two\\\\nlines");  // escape_control, then the backslash escaped
}

#ifdef EDGELLM_CLI
// The command: inputs refused with one clear line, outputs written whole.
TEST(ReportCli, WritesTheReportAndRefusesBadInput) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("edgellm_report_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  RunSpec a, b;
  b.threads = 4;
  std::ofstream(dir / "a.json") << run_json(a);
  std::ofstream(dir / "b.json") << run_json(b);
  std::ofstream(dir / "bad.json") << "{\"schema\":";
  const std::string out = (dir / "out").string();

  test::RunResult r = test::run_command({EDGELLM_CLI, "report"});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_TRUE(contains(r.err, "no run records given")) << r.err;

  r = test::run_command(
      {EDGELLM_CLI, "report", (dir / "a.json").string(), (dir / "bad.json").string(), "--out-dir", out});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_TRUE(contains(r.err, "bad.json")) << r.err;
  EXPECT_FALSE(fs::exists(out));  // nothing written on error

  r = test::run_command({EDGELLM_CLI, "report", (dir / "a.json").string(), "--out-dir", (dir / "a.json").string()});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_TRUE(contains(r.err, "not a directory")) << r.err;

  r = test::run_command(
      {EDGELLM_CLI, "report", (dir / "a.json").string(), (dir / "b.json").string(), "--out-dir", out});
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_TRUE(fs::exists(dir / "out" / "report.md"));
  EXPECT_TRUE(fs::exists(dir / "out" / "chat-decode.svg"));
  EXPECT_TRUE(fs::exists(dir / "out" / "chat-rss.svg"));

  r = test::run_command({EDGELLM_CLI, "report", (dir / "a.json").string(), "-o", "-", "--out-dir", out});
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_TRUE(contains(r.out, "# edgellm bench report"));
  EXPECT_TRUE(contains(r.out, "](" + out + "/chat-decode.svg)")) << r.out;
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace edgellm
