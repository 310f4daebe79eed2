#include "tools/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "base/text_escape.h"

namespace edgellm::chart {

namespace {

// Okabe & Ito (2008), ordered so the first few differ most on white; yellow,
// hard to see as a thin line on white, comes last.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                    "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
constexpr int kPaletteSize = int(sizeof kPalette / sizeof kPalette[0]);

// No chart value comes near this; clamping keeps range arithmetic finite.
constexpr double kMaxMagnitude = 1e15;

const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// A coordinate or length for the SVG: one decimal, and never NaN or inf
// (callers only pass finite values; this is the last line of defence).
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s == "-0.0") s = "0.0";
  return s;
}

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A rough text width: the chart cannot measure glyphs, and DejaVu Sans
// averages about 0.6 em per character.
double text_width(std::string_view s, double font_px) { return double(code_points(s)) * font_px * 0.6; }

// Cuts text to about max_px wide, ending in "…" when cut (at a code point
// boundary, so the result stays UTF-8).
std::string fit_text(const std::string& s, double max_px, double font_px) {
  if (text_width(s, font_px) <= max_px) return s;
  const size_t keep = size_t(std::max(1.0, max_px / (font_px * 0.6) - 1));
  size_t n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == keep) break;
  }
  return s.substr(0, i) + "\xE2\x80\xA6";
}

bool finite_point(const Series& s, size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]); }

size_t point_count(const Series& s) { return std::min(s.x.size(), s.y.size()); }

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  bool empty() const { return !(lo <= hi); }
  void add(double v) {
    v = std::clamp(v, -kMaxMagnitude, kMaxMagnitude);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// Maps data values to pixels along one axis (pixels may run backwards: y).
struct Scale {
  Ticks t;
  double p0 = 0, p1 = 1;
  double operator()(double v) const {
    v = std::clamp(v, -kMaxMagnitude, kMaxMagnitude);
    if (t.log) {
      v = std::max(v, t.lo);  // a log axis has no zero; values below sit on the floor
      return p0 + std::log10(v / t.lo) / std::log10(t.hi / t.lo) * (p1 - p0);
    }
    return p0 + (v - t.lo) / (t.hi - t.lo) * (p1 - p0);
  }
  // A tick's text: a log axis's steps vary, so each value sets its own decimals.
  std::string label(double v) const { return tick_label(v, t.log ? v : t.step); }
};

std::string text(double x, double y, const std::string& s, const char* attrs) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" " + attrs + ">" + xml_escape(s) + "</text>\n";
}

std::string line(double x0, double y0, double x1, double y1, const char* attrs) {
  return "<line x1=\"" + num(x0) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(y1) + "\" " + attrs +
         "/>\n";
}

std::string stroke_attrs(const Series& s, int index) {
  const char* colour = palette_colour(s.colour >= 0 ? s.colour : index);
  std::string a = std::string("stroke=\"") + colour + "\" stroke-width=\"2\"";
  if (s.dashed) a += " stroke-dasharray=\"7 4\"";
  return a;
}

// One series: a path per unbroken run of finite points, a dot where a run
// is a single point (a line of length zero would not show) or points are asked.
std::string series_svg(const Series& s, int index, const Scale& xs, const Scale& ys) {
  std::string out, d;
  const char* colour = palette_colour(s.colour >= 0 ? s.colour : index);
  auto dot = [&](size_t i) {
    out += "<circle cx=\"" + num(xs(s.x[i])) + "\" cy=\"" + num(ys(s.y[i])) + "\" r=\"3\" fill=\"" + colour + "\"/>\n";
  };
  const size_t n = point_count(s);
  size_t run_start = 0, run_len = 0;
  auto end_run = [&]() {
    if (run_len == 1) dot(run_start);
    run_len = 0;
  };
  for (size_t i = 0; i < n; ++i) {
    if (!finite_point(s, i)) {
      end_run();
      continue;
    }
    d += run_len == 0 ? 'M' : 'L';  // appended piecewise: GCC 12 warns (-Wrestrict) on "M" + std::string here
    d += num(xs(s.x[i]));
    d += ' ';
    d += num(ys(s.y[i]));
    d += ' ';
    if (run_len++ == 0) run_start = i;
    if (s.points) dot(i);
  }
  end_run();
  if (!d.empty()) {
    d.pop_back();
    out = "<path d=\"" + d + "\" fill=\"none\" " + stroke_attrs(s, index) +
          " stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n" + out;
  }
  return out;
}

Scale axis_scale(Range r, bool from_zero, double p0, double p1, int target, bool headroom = true, bool log = false) {
  if (log && !r.empty() && r.lo > 0) {
    Scale s;
    s.t = log_ticks(r.lo, r.hi);
    s.p0 = p0;
    s.p1 = p1;
    return s;
  }
  if (from_zero && !r.empty()) r.add(0);
  // A little headroom, so the highest (and, off zero, the lowest) point does not sit on the frame.
  if (headroom && !r.empty() && r.hi > r.lo) {
    const double pad = 0.03 * (r.hi - r.lo);
    r.hi += pad;
    if (!(from_zero && r.lo == 0)) r.lo -= pad;
  }
  Scale s;
  s.t = r.empty() ? nice_ticks(0, 1, target) : nice_ticks(r.lo, r.hi, target);
  s.p0 = p0;
  s.p1 = p1;
  return s;
}

double widest_label(const Scale& s, double font_px) {
  double w = 0;
  for (double v : s.t.values) w = std::max(w, text_width(s.label(v), font_px));
  return w;
}

}  // namespace

const char* palette_colour(int i) { return kPalette[((i % kPaletteSize) + kPaletteSize) % kPaletteSize]; }

Ticks nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  lo = std::clamp(lo, -kMaxMagnitude, kMaxMagnitude);
  hi = std::clamp(hi, -kMaxMagnitude, kMaxMagnitude);
  if (lo > hi) std::swap(lo, hi);
  // One value (or values equal to rounding): a band around it, [0, 1] for 0.
  if (hi - lo <= 1e-9 * std::max(std::fabs(lo), std::fabs(hi))) {
    if (lo == 0 && hi == 0) {
      hi = 1;
    } else {
      const double pad = std::max(std::fabs(lo), std::fabs(hi)) * 0.1;
      lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;  // never below zero for a positive value
      hi = hi + pad;
    }
  }
  target = std::clamp(target, 2, 20);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  Ticks t;
  t.step = step;
  t.lo = std::floor(lo / step + 1e-9) * step;
  t.hi = std::ceil(hi / step - 1e-9) * step;
  if (t.hi <= t.lo) t.hi = t.lo + step;
  const long long n = std::llround((t.hi - t.lo) / step);
  for (long long i = 0; i <= n; ++i) {
    double v = t.lo + double(i) * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // 0, not 1.4e-17
    t.values.push_back(v);
  }
  return t;
}

Ticks log_ticks(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo <= 0 || hi <= 0) return nice_ticks(lo, hi);
  lo = std::clamp(lo, 1e-12, kMaxMagnitude);
  hi = std::clamp(hi, 1e-12, kMaxMagnitude);
  if (lo > hi) std::swap(lo, hi);
  // The 1-2-5 sequence: value i is {1, 2, 5}[i mod 3] x 10^(i div 3).
  auto value = [](long long i) {
    const long long k = i >= 0 ? i / 3 : -((-i + 2) / 3);
    static constexpr double kMantissa[] = {1, 2, 5};
    return kMantissa[i - 3 * k] * std::pow(10.0, double(k));
  };
  long long first = 3 * static_cast<long long>(std::floor(std::log10(lo))) - 3;
  while (value(first + 1) <= lo * (1 + 1e-9)) ++first;
  long long last = first;
  while (value(last) < hi * (1 - 1e-9)) ++last;
  if (last == first) ++last;  // one value: still two ticks
  Ticks t;
  t.log = true;
  t.lo = value(first);
  t.hi = value(last);
  t.step = 0;
  const bool decades_only = last - first + 1 > max_ticks;
  for (long long i = first; i <= last; ++i)
    if (!decades_only || i % 3 == 0 || i == first || i == last) t.values.push_back(value(i));
  return t;
}

std::string tick_label(double v, double step) {
  int decimals = 0;
  if (std::isfinite(step) && step > 0 && step < 1) decimals = std::min(12, int(std::ceil(-std::log10(step) - 1e-9)));
  // 0.25-style steps do not occur (steps are 1, 2, 5 x 10^k); one decimal per decade is enough.
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::isfinite(v) ? v : 0.0);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // "-0" -> "0"
  return s;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0) {  // not UTF-8: XML would refuse the whole document
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (len == 1) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          out += c < 0x20 || c == 0x7F ? ' ' : char(c);  // one line of text; XML 1.0 has no C0 controls
      }
    } else {
      const std::string_view seq = s.substr(i, len);
      // U+FFFE and U+FFFF are not XML characters either.
      out += seq == "\xEF\xBF\xBE" || seq == "\xEF\xBF\xBF" ? std::string_view("\xEF\xBF\xBD") : seq;
    }
    i += len;
  }
  return out;
}

std::string render_svg(const LineChart& c) {
  const double title_px = 16, label_px = 12, tick_px = 11;
  const int width = std::clamp(c.width, 320, 4000);
  const int plot_h = std::clamp(c.plot_height, 120, 4000);

  Range xr, yr, y2r;
  for (const Series& s : c.series)
    for (size_t i = 0; i < point_count(s); ++i) {
      if (!finite_point(s, i)) continue;
      xr.add(s.x[i]);
      (s.right_axis ? y2r : yr).add(s.y[i]);
    }
  const bool has_data = !xr.empty();
  const bool has_y2 = !y2r.empty();

  // Vertical layout: title, subtitle, plot, x tick labels and x label, legend.
  const double top = c.subtitle.empty() ? 44 : 62;
  const double y0 = top, y1 = top + plot_h;
  const bool y_log = c.y_log_when_wide && !yr.empty() && yr.lo > 0 && yr.hi > LineChart::kLogSpan * yr.lo;
  Scale ys = axis_scale(yr, c.y_from_zero, y1, y0, plot_h >= 300 ? 6 : 4, true, y_log);
  Scale y2s = axis_scale(y2r, c.y2_from_zero, y1, y0, plot_h >= 300 ? 6 : 4);
  const std::string y_label = y_log && !c.y_label.empty() ? c.y_label + " (log scale)" : c.y_label;
  // The left margin fits the widest tick label and the rotated axis label.
  const double left = std::max(64.0, widest_label(ys, tick_px) + 40);
  const double right = has_y2 ? std::max(64.0, widest_label(y2s, tick_px) + 40) : 28;
  const double x0 = left, x1 = width - right;
  Scale xs = axis_scale(xr, c.x_from_zero, x0, x1, std::max(3, int((x1 - x0) / 90)), /*headroom=*/false);

  // Legend: entries flow left to right below the x label, wrapping to new rows.
  struct Entry {
    double x, y;
    std::string name;
    int index;
  };
  std::vector<Entry> legend;
  const double legend_top = y1 + 58, row_h = 20, swatch = 26;
  double lx = x0, ly = legend_top;
  const double legend_w = width - x0 - 12;
  for (size_t i = 0; i < c.series.size() && has_data; ++i) {
    if (!c.series[i].in_legend) continue;
    std::string name = fit_text(c.series[i].name.empty() ? "series " + std::to_string(i + 1) : c.series[i].name,
                                legend_w - swatch - 8, label_px);
    const double w = swatch + 6 + text_width(name, label_px) + 18;
    if (lx > x0 && lx + w > x0 + legend_w) lx = x0, ly += row_h;
    legend.push_back({lx, ly, std::move(name), int(i)});
    lx += w;
  }
  const double height = legend.empty() ? y1 + 58 : ly + row_h;

  std::string svg;
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + std::to_string(width) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + num(height) + "\" font-family=\"" + kFont +
         "\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(width) + "\" height=\"" + num(height) +
         "\" fill=\"#ffffff\"/>\n";
  svg +=
      text(x0, 24, fit_text(c.title, width - x0 - 12, title_px), "font-size=\"16\" font-weight=\"bold\" fill=\"#222\"");
  if (!c.subtitle.empty())
    svg += text(x0, 44, fit_text(c.subtitle, width - x0 - 12, label_px), "font-size=\"12\" fill=\"#555\"");

  // Grid and tick labels (no ticks without data: an axis of nothing would mislead).
  if (has_data) {
    for (double v : ys.t.values) {
      svg += line(x0, ys(v), x1, ys(v), "stroke=\"#e5e5e5\" stroke-width=\"1\"");
      svg += text(x0 - 6, ys(v), ys.label(v),
                  "font-size=\"11\" fill=\"#444\" text-anchor=\"end\" dy=\"0.35em\"");
    }
    for (double v : xs.t.values) {
      svg += line(xs(v), y0, xs(v), y1, "stroke=\"#efefef\" stroke-width=\"1\"");
      svg += text(xs(v), y1 + 16, xs.label(v), "font-size=\"11\" fill=\"#444\" text-anchor=\"middle\"");
    }
    if (has_y2)
      for (double v : y2s.t.values) {
        svg += line(x1, y2s(v), x1 + 4, y2s(v), "stroke=\"#888\" stroke-width=\"1\"");
        svg += text(x1 + 7, y2s(v), y2s.label(v), "font-size=\"11\" fill=\"#444\" dy=\"0.35em\"");
      }
  }
  svg += "<rect x=\"" + num(x0) + "\" y=\"" + num(y0) + "\" width=\"" + num(x1 - x0) + "\" height=\"" + num(y1 - y0) +
         "\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\"/>\n";

  // Axis labels: x centred below the ticks, y rotated along the left edge, y2 along the right.
  svg += text((x0 + x1) / 2, y1 + 38, c.x_label, "font-size=\"12\" fill=\"#222\" text-anchor=\"middle\"");
  const double ymid = (y0 + y1) / 2;
  if (!y_label.empty())
    svg += "<text transform=\"translate(16 " + num(ymid) +
           ") rotate(-90)\" font-size=\"12\" fill=\"#222\" "
           "text-anchor=\"middle\" dy=\"0.35em\">" +
           xml_escape(y_label) + "</text>\n";
  if (has_y2 && !c.y2_label.empty())
    svg += "<text transform=\"translate(" + num(width - 16) + " " + num(ymid) +
           ") rotate(90)\" font-size=\"12\" "
           "fill=\"#222\" text-anchor=\"middle\" dy=\"0.35em\">" +
           xml_escape(c.y2_label) + "</text>\n";

  if (!has_data) {
    svg += text((x0 + x1) / 2, ymid, "no data", "font-size=\"16\" fill=\"#888\" text-anchor=\"middle\" dy=\"0.35em\"");
  } else {
    for (size_t i = 0; i < c.series.size(); ++i)
      svg += series_svg(c.series[i], int(i), xs, c.series[i].right_axis ? y2s : ys);
    for (const Entry& e : legend) {
      const Series& s = c.series[size_t(e.index)];
      svg += line(e.x, e.y + 6, e.x + swatch, e.y + 6, stroke_attrs(s, e.index).c_str());
      svg += text(e.x + swatch + 6, e.y + 6, e.name, "font-size=\"12\" fill=\"#222\" dy=\"0.35em\"");
    }
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace edgellm::chart
