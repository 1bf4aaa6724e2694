#include "core/stats.h"

#include <sstream>

namespace memlake::core {

void StatsRecorder::on_gauges(const Gauges& g) {
  s_.reserved.set(g.reserved);
  s_.mapped.set(g.mapped);
  s_.page_size = g.page_size;
  s_.memory_cap = g.memory_cap;
  s_.small_slabs = g.small_slabs;
  s_.views = g.views;
}

void StatsRecorder::on_alloc(std::size_t size, const AllocInfo& info, const Gauges& g) {
  if (info.path == Path::zero) return;
  ++s_.num_allocs;
  s_.requested.add(size);
  s_.allocated.add(info.rounded);
  s_.active.add(1);
  switch (info.path) {
    case Path::small: ++s_.small_allocs; break;
    case Path::fit: ++s_.cache_hits; break;
    case Path::fit_stitched:
      ++s_.cache_hits;
      ++s_.stitch_reuses;
      break;
    case Path::stitched:
    case Path::grown:
    case Path::zero: break;
  }
  if (info.stitch_made) ++s_.stitches;
  if (info.pages_created) {
    ++s_.grows;
    s_.pages_created += info.pages_created;
  }
  on_gauges(g);
}

void StatsRecorder::on_free(const FreeInfo& info, const Gauges& g) {
  if (info.rounded == 0) return;
  ++s_.num_frees;
  s_.requested.sub(info.requested);
  s_.allocated.sub(info.rounded);
  s_.active.sub(1);
  on_gauges(g);
}

void StatsRecorder::reset_peaks() {
  for (Stat* st : {&s_.requested, &s_.allocated, &s_.reserved, &s_.mapped, &s_.active}) st->peak = st->current;
}

namespace {
void put_stat(std::ostringstream& o, const char* name, const Stat& s) {
  o << "\"" << name << "\":{\"current\":" << s.current << ",\"peak\":" << s.peak << "},";
}
}  // namespace

std::string stats_json(const Stats& s) {
  std::ostringstream o;
  o << "{\"device\":" << s.device << ",\"backend\":\"" << s.backend << "\",\"page_size\":" << s.page_size
    << ",\"memory_cap\":" << s.memory_cap << ",";
  put_stat(o, "requested_bytes", s.requested);
  put_stat(o, "allocated_bytes", s.allocated);
  put_stat(o, "reserved_bytes", s.reserved);
  put_stat(o, "mapped_bytes", s.mapped);
  put_stat(o, "active_blocks", s.active);
  double util = s.reserved.peak ? static_cast<double>(s.requested.peak) / static_cast<double>(s.reserved.peak) : 0.0;
  o << "\"utilization\":" << util << ",\"num_allocs\":" << s.num_allocs << ",\"num_frees\":" << s.num_frees
    << ",\"num_ooms\":" << s.num_ooms << ",\"small_allocs\":" << s.small_allocs << ",\"cache_hits\":" << s.cache_hits
    << ",\"stitch_reuses\":" << s.stitch_reuses << ",\"stitches\":" << s.stitches << ",\"grows\":" << s.grows
    << ",\"pages_created\":" << s.pages_created << ",\"views\":" << s.views << ",\"stitched_views\":" << s.stitched_views
    << ",\"small_slabs\":" << s.small_slabs << ",\"largest_free_bytes\":" << s.largest_free << ",\"primitive_calls\":{";
  for (int i = 0; i < prim::kNumOps; ++i)
    o << (i ? "," : "") << "\"" << prim::op_name(static_cast<prim::Op>(i)) << "\":" << s.calls.calls[i];
  o << "}}";
  return o.str();
}

}  // namespace memlake::core
