#include "report/chart.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace memlake::report {

std::string xml_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') o += '?';
        else o += c;
    }
  }
  return o;
}

std::vector<double> nice_ticks(double lo, double hi, int target, double* step_out) {
  std::vector<double> t;
  if (!(hi > lo) || target < 1) {
    if (step_out) *step_out = 1;
    t.push_back(lo);
    return t;
  }
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  if (step_out) *step_out = step;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi * (1 + 1e-12) + 1e-12; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_label(double v, double step) {
  int d = 0;
  while (d < 6) {
    const double scaled = step * std::pow(10.0, d);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) break;
    ++d;
  }
  return fixed(v, d);
}

namespace {
std::string num(double v) { return fixed(v, 1); }
}  // namespace

std::string svg(const Chart& c) {
  const double W = c.width, H = c.height, L = c.left, R = c.right, T = c.top, B = c.bottom;
  const double xspan = c.x_max > c.x_min ? c.x_max - c.x_min : 1;
  const double yspan = c.y_max > c.y_min ? c.y_max - c.y_min : 1;
  auto sx = [&](double x) { return L + (W - L - R) * (x - c.x_min) / xspan; };
  auto sy = [&](double y) { return H - B - (H - T - B) * (y - c.y_min) / yspan; };
  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) + "\" viewBox=\"0 0 " +
       num(W) + " " + num(H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect width=\"" + num(W) + "\" height=\"" + num(H) + "\" fill=\"white\"/>\n";
  o += "<text x=\"" + num((W - R + L) / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" + xml_escape(c.title) +
       "</text>\n";
  for (const Tick& t : c.y_ticks) {
    if (t.at < c.y_min || t.at > c.y_max) continue;
    o += "<line x1=\"" + num(L) + "\" y1=\"" + num(sy(t.at)) + "\" x2=\"" + num(W - R) + "\" y2=\"" + num(sy(t.at)) +
         "\" stroke=\"#ddd\"/>\n";
    o += "<text x=\"" + num(L - 6) + "\" y=\"" + num(sy(t.at) + 4) + "\" text-anchor=\"end\">" + xml_escape(t.label) +
         "</text>\n";
  }
  for (const Tick& t : c.x_ticks) {
    if (t.at < c.x_min || t.at > c.x_max) continue;
    o += "<line x1=\"" + num(sx(t.at)) + "\" y1=\"" + num(H - B) + "\" x2=\"" + num(sx(t.at)) + "\" y2=\"" +
         num(H - B + 4) + "\" stroke=\"black\"/>\n";
    o += "<text x=\"" + num(sx(t.at)) + "\" y=\"" + num(H - B + 18) + "\" text-anchor=\"middle\">" + xml_escape(t.label) +
         "</text>\n";
  }
  o += "<line x1=\"" + num(L) + "\" y1=\"" + num(H - B) + "\" x2=\"" + num(W - R) + "\" y2=\"" + num(H - B) +
       "\" stroke=\"black\"/>\n";
  o += "<line x1=\"" + num(L) + "\" y1=\"" + num(T) + "\" x2=\"" + num(L) + "\" y2=\"" + num(H - B) + "\" stroke=\"black\"/>\n";
  o += "<text x=\"" + num((W - R + L) / 2) + "\" y=\"" + num(H - 15) + "\" text-anchor=\"middle\">" + xml_escape(c.x_label) +
       "</text>\n";
  o += "<text x=\"18\" y=\"" + num(H / 2) + "\" transform=\"rotate(-90 18 " + num(H / 2) + ")\" text-anchor=\"middle\">" +
       xml_escape(c.y_label) + "</text>\n";
  for (const Line& l : c.lines) {
    if (l.points.empty()) continue;
    o += "<polyline";
    if (!l.css_class.empty()) o += " class=\"" + xml_escape(l.css_class) + "\"";
    o += " fill=\"none\" stroke=\"" + xml_escape(l.color) + "\" stroke-width=\"" + num(l.width) + "\"";
    if (l.dashed) o += " stroke-dasharray=\"5 4\"";
    o += " stroke-linejoin=\"round\" points=\"";
    for (const auto& [x, y] : l.points) o += num(sx(x)) + "," + num(sy(y)) + " ";
    if (o.back() == ' ') o.pop_back();
    o += "\"><title>" + xml_escape(l.label) + "</title></polyline>\n";
  }
  std::vector<LegendEntry> legend = c.legend;
  if (legend.empty())
    for (const Line& l : c.lines)
      if (!l.label.empty()) legend.push_back({l.label, l.color, l.dashed});
  double y = T;
  for (const LegendEntry& e : legend) {
    o += "<line x1=\"" + num(W - R + 15) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(W - R + 40) + "\" y2=\"" +
         num(y - 4) + "\" stroke=\"" + xml_escape(e.color) + "\" stroke-width=\"2\"" +
         (e.dashed ? " stroke-dasharray=\"5 4\"" : "") + "/>\n";
    o += "<text x=\"" + num(W - R + 46) + "\" y=\"" + num(y) + "\" fill=\"" + xml_escape(e.color) + "\">" +
         xml_escape(e.label) + "</text>\n";
    y += 18;
  }
  y += 10;
  for (const std::string& n : c.notes) {
    o += "<text x=\"" + num(W - R + 15) + "\" y=\"" + num(y) + "\">" + xml_escape(n) + "</text>\n";
    y += 16;
  }
  return o + "</svg>\n";
}

}  // namespace memlake::report
