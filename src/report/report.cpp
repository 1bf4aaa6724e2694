#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/chart.h"

namespace memlake::report {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(std::uint64_t b) { return fixed(static_cast<double>(b) / kGiB, 2) + " GiB"; }
std::string bytes(std::uint64_t b) { return gib(b) + " (" + std::to_string(b) + " bytes)"; }
std::string count(std::uint64_t n) { return std::to_string(n); }

// An event count for a tick: 250k, 1.5M.
std::string count_label(double v, double step) {
  if (step >= 1e6) return tick_label(v / 1e6, step / 1e6) + "M";
  if (step >= 1e3) return tick_label(v / 1e3, step / 1e3) + "k";
  return tick_label(v, step);
}

struct Style {
  trace::TimelineSeries series;
  const char* label;
  const char* css;
  const char* color;
  bool dashed;
  bool native;
  double width;
};

Chart chart(const trace::ReplayResult& r, bool by_time, const std::string& title, const std::string& y_what,
            const std::vector<Style>& styles) {
  Chart c;
  c.title = title;
  c.y_label = y_what + " (GiB)";
  c.x_label = by_time ? "trace time (s)" : "event (trace line order)";
  c.width = 960;
  c.right = 250;
  const bool native = r.segment_events > 0;
  auto x_of = [&](const trace::TimelineBucket::Extreme& e) {
    return by_time ? static_cast<double>(e.time_us - std::min(e.time_us, r.first_time_us)) / 1e6
                   : static_cast<double>(e.event);
  };
  double xmin = by_time ? 0 : 1, xmax = xmin, ymax = 0;
  for (const Style& s : styles) {
    if (s.native && !native) continue;
    Line l;
    l.label = s.label;
    l.css_class = s.css;
    l.color = s.color;
    l.dashed = s.dashed;
    l.width = s.width;
    for (const trace::TimelineBucket& b : r.timeline) {
      const auto& lo = b.lo[s.series];
      const auto& hi = b.hi[s.series];
      const auto* a = &lo;
      const auto* z = &hi;
      if (z->event < a->event) std::swap(a, z);
      l.points.emplace_back(x_of(*a), static_cast<double>(a->value) / kGiB);
      if (z->event != a->event) l.points.emplace_back(x_of(*z), static_cast<double>(z->value) / kGiB);
      ymax = std::max(ymax, static_cast<double>(hi.value) / kGiB);
    }
    for (const auto& p : l.points) {
      xmin = std::min(xmin, p.first);
      xmax = std::max(xmax, p.first);
    }
    c.lines.push_back(std::move(l));
  }
  if (xmax <= xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1.0 / 1024;
  c.x_min = xmin;
  c.x_max = xmax;
  double step = 1;
  const std::vector<double> yt = nice_ticks(0, ymax * 1.05, 6, &step);
  c.y_max = std::max(ymax * 1.05, yt.empty() ? 0.0 : yt.back());
  for (double v : yt) c.y_ticks.push_back({v, tick_label(v, step) + " GiB"});
  for (double v : nice_ticks(0, xmax, 8, &step))
    if (v >= xmin) c.x_ticks.push_back({v, by_time ? tick_label(v, step) : count_label(v, step)});
  if (!native) c.notes.push_back("no native baseline: the trace");
  if (!native) c.notes.push_back("has no segment events");
  c.notes.push_back("each line passes through the");
  c.notes.push_back("lowest and highest value of every");
  c.notes.push_back("stretch of " + count(r.timeline.empty() ? 0 : (r.timeline.front().last_event -
                                                                    r.timeline.front().first_event + 1)) +
                    " events");
  return c;
}

void row(std::string& o, const std::string& what, const std::string& native, const std::string& ours,
         const char* cls = nullptr) {
  o += "<tr";
  if (cls) o += std::string(" class=\"") + cls + "\"";
  o += "><th scope=\"row\">" + xml_escape(what) + "</th><td>" + xml_escape(native) + "</td><td>" + xml_escape(ours) +
       "</td></tr>\n";
}
void row_both(std::string& o, const std::string& what, const std::string& v) {
  o += "<tr><th scope=\"row\">" + xml_escape(what) + "</th><td colspan=\"2\">" + xml_escape(v) + "</td></tr>\n";
}

}  // namespace

std::string html_page(const trace::ReplayResult& r, const PageOptions& opts) {
  const bool by_time = opts.x == XAxis::time && r.span_us > 0;
  const bool native = r.segment_events > 0;
  const core::Stats& s = r.stats;
  std::string o;
  o += "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  o += "<title>memlake report: " + xml_escape(r.trace) + "</title>\n";
  o += "<style>\n"
       "body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1000px; }\n"
       "table { border-collapse: collapse; margin: 1em 0; }\n"
       "th, td { border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }\n"
       "thead th { background: #f0f0f0; }\n"
       "tr.key td { font-weight: bold; }\n"
       "pre { background: #f7f7f7; padding: 1em; overflow-x: auto; }\n"
       "figure { margin: 1.5em 0; }\n"
       "</style>\n</head>\n<body>\n";
  o += "<h1>memlake report</h1>\n<p>Trace <code>" + xml_escape(r.trace) + "</code>: " + count(r.events) + " events (" +
       count(r.allocs) + " allocations, " + count(r.frees) + " frees, " + count(r.segment_events) +
       " segment events), replayed through memlake (" + xml_escape(s.backend) + " backend, page " +
       xml_escape(human_bytes(s.page_size)) + ", cap " +
       xml_escape(s.memory_cap ? human_bytes(s.memory_cap) : std::string("none")) + ").";
  if (native)
    o += " <em>Native</em> is the allocator that recorded the trace: what it reserved follows from its segment "
         "events.";
  else
    o += " The trace has no segment events: there is no native baseline to compare with.";
  o += "</p>\n";
  if (opts.x == XAxis::time && !by_time) o += "<p>The trace has no timestamps: plotted against events.</p>\n";

  o += "<h2>Summary</h2>\n<table id=\"summary\">\n<thead><tr><th></th><th scope=\"col\">native</th>"
       "<th scope=\"col\">memlake</th></tr></thead>\n<tbody>\n";
  const std::string na = "-";
  row_both(o, "peak live (requested)", bytes(r.peak_live));
  row(o, "peak reserved", native ? bytes(r.native_peak_reserved) : na, bytes(s.reserved.peak), "key");
  row(o, "utilization (peak live / peak reserved)", native ? fixed(r.native_utilization, 4) : na,
      fixed(r.utilization, 4), "key");
  row(o, "fragmentation at peak (1 - utilization)", native ? fixed(1 - r.native_utilization, 4) : na,
      fixed(s.reserved.peak ? 1 - r.utilization : 0, 4));
  row(o, "reserved beyond live at peak", native ? gib(r.native_peak_reserved - std::min(r.native_peak_reserved, r.peak_live)) : na,
      gib(s.reserved.peak - std::min<std::uint64_t>(s.reserved.peak, r.peak_live)));
  if (native && s.reserved.peak)
    row(o, "peak reserved, memlake vs native", na,
        fixed(100.0 * (static_cast<double>(s.reserved.peak) - static_cast<double>(r.native_peak_reserved)) /
                  static_cast<double>(r.native_peak_reserved),
              1) +
            " %");
  row(o, "requests: small / large", na,
      count(s.small_allocs) + " / " + count(r.allocs - std::min(r.allocs, s.small_allocs + r.ooms)));
  row(o, "cache hits (from stitched views)", na, count(s.cache_hits) + " (" + count(s.stitch_reuses) + ")");
  row(o, "stitches / repairs", na, count(s.stitches) + " / " + count(s.repairs));
  row(o, "grows (pages created)", na, count(s.grows) + " (" + count(s.pages_created) + ")");
  row(o, "slow paths", na, count(s.slow_paths) + " (" + fixed(static_cast<double>(s.slow_path_ns) / 1e6, 1) + " ms)");
  row(o, "handles mapped / in the second half", na,
      count(s.calls[prim::Op::map]) + " / " + count(r.late_maps));
  row(o, "allocations refused (out of memory)", na, count(r.ooms));
  if (r.recorded_failures) row(o, "allocate failures recorded", count(r.recorded_failures), na);
  if (r.unmatched_frees) row_both(o, "unmatched frees", count(r.unmatched_frees));
  row(o, "alloc latency p50 / p99", na,
      fixed(r.alloc_latency.p50_ns / 1000, 2) + " / " + fixed(r.alloc_latency.p99_ns / 1000, 2) + " us");
  row_both(o, "replay time", fixed(r.seconds, 2) + " s");
  o += "</tbody>\n</table>\n";
  if (r.ooms) o += "<p>First refusal, at line " + count(r.first_oom_line) + ": " + xml_escape(r.first_oom) + "</p>\n";

  o += "<h2>Live and reserved bytes</h2>\n<figure id=\"reserved\">\n";
  o += svg(chart(r, by_time, "Live and reserved bytes: native vs memlake", "bytes",
                 {{trace::kNativeReserved, "native reserved", "native reserved", "#ff7f0e", false, true, 2},
                  {trace::kReserved, "memlake reserved", "memlake reserved", "#1f77b4", false, false, 2},
                  {trace::kLive, "live (requested)", "live", "#2ca02c", false, false, 1}}));
  o += "<figcaption>Bytes the trace's live allocations requested, and the physical bytes each allocator "
       "reserved to serve them.</figcaption>\n</figure>\n";
  o += "<h2>Reserved beyond live</h2>\n<figure id=\"overhead\">\n";
  o += svg(chart(r, by_time, "Reserved minus live: native vs memlake", "bytes",
                 {{trace::kNativeOverhead, "native reserved - live", "native overhead", "#ff7f0e", false, true, 1},
                  {trace::kOverhead, "memlake reserved - live", "memlake overhead", "#1f77b4", false, false, 1}}));
  o += "<figcaption>Memory held but not in use: cached free blocks and fragmentation.</figcaption>\n</figure>\n";

  o += "<details>\n<summary>memlake replay output</summary>\n<pre>" + xml_escape(trace::replay_text(r)) +
       "</pre>\n</details>\n";
  o += "<p>Written by <code>memlake report</code>.</p>\n</body>\n</html>\n";
  return o;
}

}  // namespace memlake::report
