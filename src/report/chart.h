// Line charts as self-contained SVG: axes with labelled ticks, grid lines,
// polylines and a legend. Used by `memlake bench copy --svg` and `memlake report`.
// Text is XML-escaped here; numbers are written with fixed() (std::to_chars),
// whatever the process's locale.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace memlake::report {

// Text for XML (SVG, XHTML): & < > " ' escaped.
std::string xml_escape(const std::string& s);

struct Tick {
  double at;
  std::string label;  // plain text
};

struct Line {
  std::string label;     // plain text: a <title> on the polyline (and the legend, by default)
  std::string css_class; // the polyline's class attribute (e.g. "native reserved"), may be empty
  std::string color;     // e.g. "#1f77b4"
  bool dashed = false;
  double width = 2;
  std::vector<std::pair<double, double>> points;  // data coordinates
};

struct LegendEntry {
  std::string label;  // plain text
  std::string color;
  bool dashed = false;
};

struct Chart {
  std::string title, x_label, y_label;  // plain text
  double width = 900, height = 480;
  double left = 70, right = 220, top = 40, bottom = 60;  // margins
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;      // data range of the plot area
  std::vector<Tick> x_ticks, y_ticks;
  std::vector<Line> lines;
  // Empty: one entry per line, from its label and style.
  std::vector<LegendEntry> legend;
  std::vector<std::string> notes;  // plain text lines under the legend
};

// An <svg> element (with its xmlns: a file of its own or inline in (X)HTML).
std::string svg(const Chart& c);

// Round tick positions from lo to hi, about `target` of them, steps 1, 2, 2.5 or 5 x 10^k;
// *step (if given) receives the step.
std::vector<double> nice_ticks(double lo, double hi, int target, double* step = nullptr);
// v with as few decimals as a tick step needs (2.5 -> "2.5", 2 -> "2"), locale-independent.
std::string tick_label(double v, double step);

}  // namespace memlake::report
