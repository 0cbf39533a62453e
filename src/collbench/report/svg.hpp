// A small, pure SVG chart renderer for the HTML reports (report/html.hpp): line charts with a
// log2 or linear x axis (message size in bytes, or rank count N), optional error bars, filled
// (measured) or hollow (projected) markers, dashed or dotted reference lines, and a bar chart.
// It draws what it is given and computes nothing but the axes. Every text is escaped with
// report::xml_escape (the
// labels come from input files). No JavaScript, no external resources: the output is inline
// <svg> that any browser, mail client or PDF printer shows offline. Pure C++ (no MPI, no GPU).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::report::svg {

enum class Axis { linear, log2 };
// How x tick labels read: bytes (1KiB, 64MiB) or plain numbers (rank counts).
enum class TickFormat { bytes, number };
enum class Stroke { solid, dashed, dotted, none };

struct Point {
  double x = 0.0;
  double y = 0.0;
  std::optional<double> y_low, y_high;  // error bar (confidence or prediction interval)
};

struct Series {
  std::string label;  // legend text
  std::vector<Point> points;
  Stroke stroke = Stroke::solid;
  bool markers = true;
  bool hollow = false;      // hollow markers: projected, not measured
  std::string point_label;  // drawn next to every marker (e.g. "projected"); empty for none
  int color = 0;            // palette index
};

struct ReferenceLine {
  double y = 0.0;
  std::string label;
  Stroke stroke = Stroke::dashed;
};

struct LineChart {
  std::string title, x_label, y_label;
  Axis x_axis = Axis::log2;
  TickFormat x_format = TickFormat::bytes;
  std::vector<Series> series;
  std::vector<ReferenceLine> references;
  bool y_from_zero = true;
  int width = 640, height = 360;
};

// One <svg> element (class "chart"); a chart without any finite point says so in its body.
std::string render_line_chart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0.0;
  std::string css_class;  // e.g. "pass", "fail", "waived": the bar's colour from the page's CSS
  std::string tooltip;    // <title> of the bar
};

struct BarChart {
  std::string title, y_label;
  std::vector<Bar> bars;
  std::optional<ReferenceLine> reference;
  // log10 y axis (for ratios spanning decades); bars then rise or fall from the reference line
  // (from the bottom without one). Non-positive values cannot be drawn on it and are skipped.
  bool log_y = false;
  int width = 640, height = 320;
};

std::string render_bar_chart(const BarChart& chart);

// Tick values of a "nice" linear axis covering [low, high] with about `target` ticks (steps of
// 1, 2 or 5 x 10^k). Exposed for tests.
std::vector<double> nice_ticks(double low, double high, int target);

}  // namespace collbench::report::svg
