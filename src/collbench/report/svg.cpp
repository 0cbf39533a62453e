// SVG line and bar charts for the HTML reports.
#include "collbench/report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"

namespace collbench::report::svg {
namespace {

// Colour-blind-friendly palette (Okabe-Ito, darkened for contrast on white).
constexpr std::array<const char*, 8> kPalette{"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                              "#7a5c00", "#56b4e9", "#e69f00", "#4d4d4d"};
constexpr const char* kReferenceColour = "#444";
constexpr double kFontSize = 12.0;

const char* colour(int index) {
  const auto n = static_cast<int>(kPalette.size());
  return kPalette[static_cast<std::size_t>(((index % n) + n) % n)];
}

const char* dash(Stroke s) {
  switch (s) {
    case Stroke::dashed:
      return " stroke-dasharray=\"7 4\"";
    case Stroke::dotted:
      return " stroke-dasharray=\"2 3\"";
    default:
      return "";
  }
}

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

// Tick label of a linear axis: up to 4 significant digits, no exponent for ordinary values.
std::string tick_text(double v) {
  if (v == 0.0) return "0";
  const double a = std::abs(v);
  if (a >= 1e-3 && a < 1e6) {
    std::string s = fmt::format("{:.4f}", v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    // Keep at most 4 significant digits for large values.
    return a >= 1000 ? fmt::format("{:.0f}", v) : s;
  }
  return fmt::format("{:.3g}", v);
}

std::string x_tick_text(double x, TickFormat f) {
  if (f == TickFormat::bytes && x >= 1.0 && x < 1.8e19)
    return format_bytes(static_cast<std::uint64_t>(std::llround(x)));
  if (x >= 1.0 && x < 1e15 && x == std::floor(x)) return fmt::format("{}", static_cast<std::int64_t>(x));
  return tick_text(x);
}

bool finite(double v) {
  return std::isfinite(v);
}

struct Frame {
  double left = 0, right = 0, top = 0, bottom = 0;  // plot area in pixels
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;    // data range (x in axis units: log2 or linear)
  Axis x_axis = Axis::log2;

  [[nodiscard]] double ax(double x) const { return x_axis == Axis::log2 ? std::log2(x) : x; }
  [[nodiscard]] double px(double x) const { return left + (ax(x) - x_lo) / (x_hi - x_lo) * (right - left); }
  [[nodiscard]] double py(double y) const { return bottom - (y - y_lo) / (y_hi - y_lo) * (bottom - top); }
  [[nodiscard]] bool usable_x(double x) const { return finite(x) && (x_axis == Axis::linear || x > 0.0); }
};

struct LegendItem {
  std::string label;
  Stroke stroke = Stroke::solid;
  bool marker = false, hollow = false;
  const char* colour = kReferenceColour;
};

// Legend rows laid out left to right, wrapping at `width`; returns the SVG and its height.
std::pair<std::string, double> legend(const std::vector<LegendItem>& items, double x0, double y0, double width) {
  std::string out;
  double x = x0, y = y0 + 12.0;
  double rows = items.empty() ? 0.0 : 1.0;
  for (const auto& it : items) {
    const double w = 34.0 + 6.6 * static_cast<double>(std::min<std::size_t>(it.label.size(), 60)) + 14.0;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += 18.0;
      rows += 1.0;
    }
    out +=
        fmt::format(R"(<g class="legend-item"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/>)",
                    num(x), num(y - 4), num(x + 26), num(y - 4), it.colour,
                    it.stroke == Stroke::none ? " stroke-opacity=\"0\"" : dash(it.stroke));
    if (it.marker) {
      out += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}" stroke="{}" stroke-width="1.5"/>)", num(x + 13),
                         num(y - 4), it.hollow ? "#fff" : it.colour, it.colour);
    }
    out += fmt::format(R"(<text x="{}" y="{}" font-size="{}">{}</text></g>)", num(x + 32), num(y), kFontSize - 1,
                       xml_escape(it.label));
    x += w;
  }
  return {out, rows * 18.0};
}

std::string open_svg(int width, int height, const std::string& title) {
  return fmt::format(
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}" role="img" )"
      R"(aria-label="{}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif">)"
      R"(<title>{}</title><rect class="chart-bg" x="0" y="0" width="{}" height="{}" fill="#fff"/>)"
      R"(<text x="{}" y="20" font-size="{}" font-weight="600" text-anchor="middle">{}</text>)",
      width, height, width, height, xml_escape(title), xml_escape(title), width, height, width / 2, kFontSize + 2,
      xml_escape(title));
}

std::vector<LegendItem> legend_items(const LineChart& c) {
  std::vector<LegendItem> items;
  for (const auto& s : c.series) {
    if (s.label.empty()) continue;
    items.push_back({s.label, s.stroke, s.markers, s.hollow, colour(s.color)});
  }
  for (const auto& r : c.references) {
    if (!r.label.empty()) items.push_back({r.label, r.stroke, false, false, kReferenceColour});
  }
  return items;
}

}  // namespace

std::vector<double> nice_ticks(double low, double high, int target) {
  if (!finite(low) || !finite(high)) return {0.0, 1.0};
  if (high < low) std::swap(low, high);
  if (high == low) {
    const double pad = low == 0.0 ? 1.0 : std::abs(low) * 0.1;
    low -= pad;
    high += pad;
  }
  const double raw = (high - low) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  const double first = std::floor(low / step + 1e-9) * step;
  const double last = std::ceil(high / step - 1e-9) * step;
  std::vector<double> out;
  for (double v = first; v <= last + step * 0.5 && out.size() < 64; v += step) {
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

namespace {

// Data range of a line chart in axis units (x: log2 or linear); infinite when nothing is plottable.
struct Range {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
};

// The "no data to plot" note in the middle of an empty chart.
std::string no_data(double width, double height) {
  return fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle" fill="#666">no data to plot</text>)",
                     num(width / 2), num(height / 2), kFontSize);
}

// Range of the series' usable points and their error bars.
Range series_range(const LineChart& c, const Frame& f) {
  Range r;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) {
      if (!f.usable_x(p.x) || !finite(p.y)) continue;
      r.x_min = std::min(r.x_min, f.ax(p.x));
      r.x_max = std::max(r.x_max, f.ax(p.x));
      r.y_min = std::min(r.y_min, p.y);
      r.y_max = std::max(r.y_max, p.y);
      if (p.y_low && finite(*p.y_low)) r.y_min = std::min(r.y_min, *p.y_low);
      if (p.y_high && finite(*p.y_high)) r.y_max = std::max(r.y_max, *p.y_high);
    }
  }
  return r;
}

// Widens the y range to the reference lines (and to zero when asked); returns the y ticks and sets the frame's y.
std::vector<double> fit_y(const LineChart& c, Range& r, Frame& f) {
  for (const auto& ref : c.references) {
    if (!finite(ref.y)) continue;
    r.y_min = std::min(r.y_min, ref.y);
    r.y_max = std::max(r.y_max, ref.y);
  }
  if (c.y_from_zero) r.y_min = std::min(r.y_min, 0.0);
  std::vector<double> y_ticks = nice_ticks(r.y_min, r.y_max + (r.y_max - r.y_min) * 0.04, 5);
  f.y_lo = y_ticks.front();
  f.y_hi = y_ticks.back();
  if (f.y_hi <= f.y_lo) f.y_hi = f.y_lo + 1.0;
  return y_ticks;
}

// Sets the frame's x range; returns the x ticks (data values): powers of two on a log2 axis.
std::vector<double> fit_x(const LineChart& c, const Range& r, Frame& f) {
  std::vector<double> x_ticks;
  if (c.x_axis == Axis::log2) {
    const double pad = r.x_max > r.x_min ? 0.04 * (r.x_max - r.x_min) + 0.15 : 0.6;
    f.x_lo = r.x_min - pad;
    f.x_hi = r.x_max + pad;
    const auto k_lo = static_cast<long>(std::ceil(r.x_min - 1e-9));
    const auto k_hi = static_cast<long>(std::floor(r.x_max + 1e-9));
    const long count = std::max(1L, k_hi - k_lo + 1);
    const long stride = (count + 7) / 8;
    for (long k = k_lo; k <= k_hi; k += stride) x_ticks.push_back(std::exp2(static_cast<double>(k)));
  } else {
    x_ticks = nice_ticks(r.x_min, r.x_max, 6);
    f.x_lo = std::min(x_ticks.front(), r.x_min);
    f.x_hi = std::max(x_ticks.back(), r.x_max);
    if (f.x_hi <= f.x_lo) f.x_hi = f.x_lo + 1.0;
  }
  return x_ticks;
}

// Grid lines at the ticks and the plot area's border.
std::string grid(const Frame& f, const std::vector<double>& y_ticks, const std::vector<double>& x_ticks) {
  std::string out = R"(<g class="grid" stroke="#e3e6ea" stroke-width="1">)";
  for (const double y : y_ticks) {
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}"/>)", num(f.left), num(f.py(y)), num(f.right),
                       num(f.py(y)));
  }
  for (const double x : x_ticks) {
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}"/>)", num(f.px(x)), num(f.top), num(f.px(x)),
                       num(f.bottom));
  }
  out += "</g>";
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", num(f.left),
                     num(f.top), num(f.right - f.left), num(f.bottom - f.top));
  return out;
}

// Tick labels of both axes.
std::string tick_labels(const LineChart& c, const Frame& f, const std::vector<double>& y_ticks,
                        const std::vector<double>& x_ticks) {
  std::string out = fmt::format(R"(<g class="ticks" font-size="{}" fill="#333">)", kFontSize - 1);
  for (const double y : y_ticks) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", num(f.left - 6), num(f.py(y) + 4),
                       xml_escape(tick_text(y)));
  }
  for (const double x : x_ticks) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", num(f.px(x)), num(f.bottom + 16),
                       xml_escape(x_tick_text(x, c.x_format)));
  }
  return out + "</g>";
}

// The y axis title, rotated, at the left edge, centred on the plot area from `top` to `bottom`.
std::string y_title(double top, double bottom, const std::string& label) {
  return fmt::format(
      R"svg(<text x="{}" y="{}" font-size="{}" text-anchor="middle" transform="rotate(-90 {} {})">{}</text>)svg",
      num(16), num((top + bottom) / 2), kFontSize, num(16), num((top + bottom) / 2), xml_escape(label));
}

// The x axis title under the plot area, then the y axis title.
std::string axis_titles(const LineChart& c, const Frame& f) {
  return fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle">{}</text>)",
                     num((f.left + f.right) / 2), num(c.height - 10.0), kFontSize, xml_escape(c.x_label)) +
         y_title(f.top, f.bottom, c.y_label);
}

// One horizontal reference line across the plot area at pixel height `y`, labelled at its right end.
std::string reference_line(double left, double right, double y, const ReferenceLine& r) {
  return fmt::format(R"(<g class="reference"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5"{}/>)",
                     num(left), num(y), num(right), num(y), kReferenceColour, dash(r.stroke)) +
         fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="end" fill="{}">{}</text></g>)", num(right - 4),
                     num(y - 4), kFontSize - 1, kReferenceColour, xml_escape(r.label));
}

// Error bars (whiskers with caps) of the points that have both ends.
std::string error_bars(const Series& s, const std::vector<const Point*>& pts, const Frame& f, const char* col) {
  std::string out;
  for (const Point* p : pts) {
    if (!p->y_low || !p->y_high || !finite(*p->y_low) || !finite(*p->y_high)) continue;
    const double x = f.px(p->x), lo = f.py(*p->y_low), hi = f.py(*p->y_high);
    out += fmt::format(
        R"(<path class="errorbar" d="M{},{} L{},{} M{},{} L{},{} M{},{} L{},{}" stroke="{}" stroke-width="1.3" fill="none"{}/>)",
        num(x), num(lo), num(x), num(hi), num(x - 4), num(lo), num(x + 4), num(lo), num(x - 4), num(hi), num(x + 4),
        num(hi), col, s.hollow ? dash(Stroke::dashed) : "");
  }
  return out;
}

// Markers and point labels of a series (each when the series asks for it).
std::string markers_and_labels(const Series& s, const std::vector<const Point*>& pts, const Frame& f, const char* col) {
  std::string out;
  if (s.markers) {
    for (const Point* p : pts) {
      out += fmt::format(R"(<circle class="{}" cx="{}" cy="{}" r="4" fill="{}" stroke="{}" stroke-width="1.8"/>)",
                         s.hollow ? "marker hollow" : "marker", num(f.px(p->x)), num(f.py(p->y)),
                         s.hollow ? "#fff" : col, col);
    }
  }
  if (!s.point_label.empty()) {
    for (const Point* p : pts) {
      out += fmt::format(R"(<text class="point-label" x="{}" y="{}" font-size="{}" fill="{}">{}</text>)",
                         num(f.px(p->x) + 6), num(f.py(p->y) - 7), kFontSize - 2, col, xml_escape(s.point_label));
    }
  }
  return out;
}

// One series: its line, error bars, markers and point labels.
std::string series_svg(const Series& s, const Frame& f) {
  const char* col = colour(s.color);
  std::vector<const Point*> pts;
  for (const auto& p : s.points) {
    if (f.usable_x(p.x) && finite(p.y)) pts.push_back(&p);
  }
  std::string out = fmt::format(R"(<g class="series{}">)", s.hollow ? " projected" : "");
  if (s.stroke != Stroke::none && pts.size() >= 2) {
    std::string d;
    for (const Point* p : pts) d += fmt::format("{}{},{}", d.empty() ? "M" : " L", num(f.px(p->x)), num(f.py(p->y)));
    out += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", d, col, dash(s.stroke));
  }
  out += error_bars(s, pts, f, col) + markers_and_labels(s, pts, f, col);
  return out + "</g>";
}

}  // namespace

std::string render_line_chart(const LineChart& c) {
  const double width = c.width, height = c.height;
  std::string out = open_svg(c.width, c.height, c.title);
  auto [legend_svg, legend_height] = legend(legend_items(c), 70.0, 28.0, width - 90.0);
  out += legend_svg;
  Frame f;
  f.x_axis = c.x_axis;
  f.left = 70.0;
  f.right = width - 24.0;
  f.top = 34.0 + legend_height + 8.0;
  f.bottom = height - 46.0;
  Range range = series_range(c, f);
  if (!finite(range.x_min)) return out + no_data(width, height) + "</svg>";
  const std::vector<double> y_ticks = fit_y(c, range, f);
  const std::vector<double> x_ticks = fit_x(c, range, f);
  out += grid(f, y_ticks, x_ticks) + tick_labels(c, f, y_ticks, x_ticks) + axis_titles(c, f);
  for (const auto& r : c.references) {
    if (finite(r.y)) out += reference_line(f.left, f.right, f.py(r.y), r);
  }
  for (const auto& s : c.series) out += series_svg(s, f);
  return out + "</svg>";
}

namespace {

// Plot area and value axis of a bar chart; the axis is in "axis units": the value (linear) or its log10.
struct BarFrame {
  double left = 0, right = 0, top = 0, bottom = 0;  // plot area in pixels
  double lo = 0, hi = 1;                            // axis range in axis units
  bool log_y = false;

  [[nodiscard]] double au(double v) const { return log_y ? std::log10(v) : v; }
  [[nodiscard]] double py(double axis_value) const { return bottom - (axis_value - lo) / (hi - lo) * (bottom - top); }
};

// The bars that can be drawn: finite values, and positive ones on a log axis.
std::vector<const Bar*> drawable_bars(const BarChart& c) {
  std::vector<const Bar*> bars;
  for (const auto& b : c.bars) {
    if (finite(b.value) && (!c.log_y || b.value > 0.0)) bars.push_back(&b);
  }
  return bars;
}

// Sets the frame's axis range from the bars (and the reference); returns the ticks in axis units.
std::vector<double> fit_bar_axis(const std::vector<const Bar*>& bars, const ReferenceLine* ref, BarFrame& f) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Bar* b : bars) {
    lo = std::min(lo, f.au(b->value));
    hi = std::max(hi, f.au(b->value));
  }
  if (ref) {
    lo = std::min(lo, f.au(ref->y));
    hi = std::max(hi, f.au(ref->y));
  }
  std::vector<double> ticks;
  if (f.log_y) {
    lo = std::floor(lo - 0.25);
    hi = std::ceil(hi + 0.25);
    const auto span = static_cast<long>(hi - lo);
    const long stride = std::max(1L, (span + 7) / 8);
    for (auto k = static_cast<long>(lo); k <= static_cast<long>(hi); k += stride) {
      ticks.push_back(static_cast<double>(k));
    }
  } else {
    ticks = nice_ticks(std::min(0.0, lo), hi > 0.0 ? hi * 1.08 : 1.0, 5);
    lo = ticks.front();
    hi = ticks.back() > lo ? ticks.back() : lo + 1.0;
  }
  f.lo = lo;
  f.hi = hi;
  return ticks;
}

// Label of a value-axis tick: powers of ten as numbers near 1, as 1eK beyond.
std::string bar_tick_label(bool log_y, double t) {
  if (!log_y) return tick_text(t);
  const auto k = static_cast<long>(t);
  return k >= -3 && k <= 5 ? tick_text(std::pow(10.0, t)) : fmt::format("1e{}", k);
}

// Grid lines and labels of the value axis, and its title.
std::string bar_axis(const BarChart& c, const BarFrame& f, const std::vector<double>& ticks) {
  std::string out = R"(<g class="grid" stroke="#e3e6ea" stroke-width="1">)";
  for (const double t : ticks) {
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}"/>)", num(f.left), num(f.py(t)), num(f.right),
                       num(f.py(t)));
  }
  out += "</g>";
  out += fmt::format(R"(<g class="ticks" font-size="{}" fill="#333">)", kFontSize - 1);
  for (const double t : ticks) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", num(f.left - 6), num(f.py(t) + 4),
                       xml_escape(bar_tick_label(c.log_y, t)));
  }
  out += "</g>";
  return out + y_title(f.top, f.bottom, c.y_label);
}

// A bar's name under the axis (cut to 28 characters), slanted when there are many bars.
std::string bar_label(const Bar& b, double cx, double bottom, bool slanted) {
  std::string label = b.label;
  if (label.size() > 28) label = label.substr(0, 26) + "..";
  if (slanted) {
    return fmt::format(
        R"svg(<text x="{}" y="{}" font-size="{}" text-anchor="end" transform="rotate(-35 {} {})">{}</text>)svg",
        num(cx), num(bottom + 14), kFontSize - 2, num(cx), num(bottom + 14), xml_escape(label));
  }
  return fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle">{}</text>)", num(cx), num(bottom + 16),
                     kFontSize - 2, xml_escape(label));
}

// One bar from `base` (axis units) to its value, centred on `cx`, with its value and its name.
std::string bar_svg(const Bar& b, double cx, double bar_w, double base, const BarFrame& f, bool slanted) {
  const double end = f.py(f.au(b.value)), start = f.py(base);
  const double y0 = std::min(start, end), h = std::max(1.0, std::abs(start - end));
  const char* fill = b.css_class == "fail" ? "#c92a2a" : b.css_class == "pass" ? "#2b8a3e" : "#868e96";
  std::string out =
      fmt::format(R"(<rect class="bar {}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)",
                  xml_escape(b.css_class), num(cx - bar_w / 2), num(y0), num(bar_w), num(h), fill,
                  xml_escape(b.tooltip.empty() ? b.label : b.tooltip));
  const bool above = end <= start;
  out += fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle" fill="#333">{}</text>)", num(cx),
                     num(above ? end - 4 : end + 12), kFontSize - 2, xml_escape(fmt::format("{:.3g}", b.value)));
  return out + bar_label(b, cx, f.bottom, slanted);
}

}  // namespace

std::string render_bar_chart(const BarChart& c) {
  const double width = c.width, height = c.height;
  std::string out = open_svg(c.width, c.height, c.title);
  const std::vector<const Bar*> bars = drawable_bars(c);
  if (bars.empty()) return out + no_data(width, height) + "</svg>";
  const bool slanted = bars.size() > 6;
  BarFrame f{70.0, width - 24.0, 40.0, height - (slanted ? 96.0 : 46.0), 0.0, 1.0, c.log_y};
  const bool have_ref = c.reference && finite(c.reference->y) && (!c.log_y || c.reference->y > 0.0);
  const ReferenceLine* ref = have_ref ? &*c.reference : nullptr;
  const std::vector<double> ticks = fit_bar_axis(bars, ref, f);
  const double base = c.log_y ? (ref ? f.au(ref->y) : f.lo) : std::max(f.lo, 0.0);
  out += bar_axis(c, f, ticks);
  const double slot = (f.right - f.left) / static_cast<double>(bars.size());
  const double bar_w = std::min(48.0, slot * 0.7);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    out += bar_svg(*bars[i], f.left + slot * (static_cast<double>(i) + 0.5), bar_w, base, f, slanted);
  }
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", num(f.left),
                     num(f.top), num(f.right - f.left), num(f.bottom - f.top));
  if (ref) out += reference_line(f.left, f.right, f.py(f.au(ref->y)), *ref);
  return out + "</svg>";
}

}  // namespace collbench::report::svg
