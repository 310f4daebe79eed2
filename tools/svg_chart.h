// A small line-chart writer: standalone SVG 1.1 text a browser, an image
// viewer or rsvg-convert shows as is (no script, no external font or style).
// Made for the bench report (tools/report.h) but knows nothing of it: a title,
// axis labels with units, "nice" ticks, light grid lines, several series each
// in its own colour-blind-safe colour (Okabe-Ito), a legend below the plot so
// it never covers data, and an optional second y axis on the right.
//
// Whatever the input, the output is well-formed XML with finite numbers: an
// empty chart says "no data", one point or all-equal values still get a
// sensible axis, and NaN/inf points are gaps, never coordinates.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace edgellm::chart {

// A y value that is NaN (or inf) is a missing point: the line breaks there.
struct Series {
  std::string name;          // legend text (any bytes; escaped)
  std::vector<double> x, y;  // equal lengths; extra values in the longer one are ignored
  int colour = -1;           // palette index; -1: the series' position in the chart
  bool dashed = false;       // a companion series (anon next to RSS, temperature next to tok/s)
  bool right_axis = false;   // plotted against the second y axis
  bool points = false;       // mark every point (isolated points are always marked)
  bool in_legend = true;     // false: a companion the subtitle explains ("dashed: anon")
};

struct LineChart {
  std::string title, subtitle;             // subtitle: one line of context (what was averaged, what is unavailable)
  std::string x_label, y_label, y2_label;  // with units: "generated tokens", "decode tok/s", "°C"
  bool x_from_zero = true;                 // tokens, seconds and minutes count from the start
  bool y_from_zero = true;                 // speeds and sizes: zero keeps differences honest
  bool y2_from_zero = false;               // temperatures: zero would flatten them
  // Runs of very different sizes on one chart (a 260K model at 10,000 tok/s
  // beside a 1B one at 30): when every left-axis value is positive and the
  // largest is over kLogSpan times the smallest, the left axis becomes
  // logarithmic (ticks at 1, 2, 5 x 10^k) and its label says so; otherwise
  // linear. Off by default: a linear axis from zero shows differences honestly.
  bool y_log_when_wide = false;
  static constexpr double kLogSpan = 30;
  int width = 800, plot_height = 360;      // the legend adds rows below
  std::vector<Series> series;
};

// Ticks covering [lo, hi] at a step of 1, 2 or 5 x 10^k, about `target` of
// them; lo == hi (or a non-finite bound) still gives a usable axis.
struct Ticks {
  double lo = 0, hi = 1, step = 1;  // lo and hi are multiples of step (linear)
  std::vector<double> values;
  bool log = false;  // values are 1, 2, 5 x 10^k (or 10^k alone) between lo and hi
};
Ticks nice_ticks(double lo, double hi, int target = 5);
// Logarithmic ticks for 0 < lo <= hi: lo rounded down and hi up to a 1, 2, 5
// x 10^k value, every such value between (only the powers of ten when that
// would make more than max_ticks).
Ticks log_ticks(double lo, double hi, int max_ticks = 12);

// A tick's text with as many decimals as the step needs ("0.5", "250", "1.25").
std::string tick_label(double v, double step);

// Text safe inside an XML element or an attribute: & < > " ' escaped, control
// characters and invalid UTF-8 replaced (XML 1.0 cannot carry them at all).
std::string xml_escape(std::string_view s);

// The colour of palette index i (Okabe-Ito, most distinguishable first).
const char* palette_colour(int i);

std::string render_svg(const LineChart& c);

}  // namespace edgellm::chart
