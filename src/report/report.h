// `memlake report`: one self-contained HTML page (inline SVG and CSS, no script,
// nothing fetched) about a replay: live and reserved bytes over the trace, the
// recording allocator (its segment events) against memlake, and a summary table.
#pragma once

#include <string>

#include "trace/replay.h"

namespace memlake::report {

enum class XAxis { events, time };

struct PageOptions {
  XAxis x = XAxis::events;  // time: the trace's timestamps (events if it has none)
};

// r must come from a replay with ReplayConfig::timeline_buckets > 0. The page is
// polyglot XHTML: a browser reads it as HTML, an XML parser as XHTML.
std::string html_page(const trace::ReplayResult& r, const PageOptions& opts = {});

}  // namespace memlake::report
