#include "residency/residency.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/labels.h"

namespace memlake::residency {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool readonly_label(std::uint16_t label) { return label && (core::label_flags(label) & core::kLabelReadonly); }

}  // namespace

Residency::Residency(prim::Backend& be, core::Allocator& alloc, std::size_t host_initial)
    : be_(be), alloc_(alloc), host_(be), host_initial_(host_initial) {}

Residency::~Residency() {
  try {
    poll_io(true);  // no I/O thread is left reading or writing a host extent
    if (have_streams_) {
      be_.synchronize_stream(d2h_);
      be_.synchronize_stream(h2d_);
    }
    for (auto& kv : entries_)
      if (kv.second.leaving) be_.destroy_event(kv.second.leaving);
    for (auto& kv : arriving_) be_.destroy_event(kv.second.event);  // restores ahead never ready()
    arriving_.clear();
    reclaim(true);
    if (have_streams_) {
      be_.destroy_stream(d2h_);
      be_.destroy_stream(h2d_);
    }
  } catch (...) {
    // Destruction must not throw.
  }
}

void Residency::streams() {
  if (have_streams_) return;
  if (host_initial_) host_.reserve(host_initial_);
  d2h_ = be_.create_stream();
  try {
    h2d_ = be_.create_stream();
  } catch (...) {
    be_.destroy_stream(d2h_);
    throw;
  }
  have_streams_ = true;
}

void Residency::reclaim(bool wait) {
  // Each entry leaves pending_ before its event is destroyed and its extent given back: an
  // exception from a wait or a query leaves the rest (and only the rest) pending.
  std::size_t kept = 0, i = 0;
  try {
    for (; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      if (wait) be_.wait_event(p.event);
      if (wait || be_.query_event(p.event)) {
        const Pending done = p;
        host_.give(done.ext);
        try {
          be_.destroy_event(done.event);
        } catch (...) {
          // The copy is complete; only the event leaks.
        }
      } else {
        pending_[kept++] = p;
      }
    }
  } catch (...) {
    for (; i < pending_.size(); ++i) pending_[kept++] = pending_[i];
    pending_.resize(kept);
    throw;
  }
  pending_.resize(kept);
}

void Residency::arrive(std::uintptr_t ptr) {
  auto a = arriving_.find(ptr);
  if (a == arriving_.end()) return;
  const Arriving got = a->second;
  if (!be_.query_event(got.event)) be_.stream_wait(got.stream, got.event);  // else: arrived
  // Its stream may write it from now on: the host copy is given back once
  // the copy in is complete (pending_ owns the event from here).
  auto it = entries_.find(ptr);
  pending_.reserve(pending_.size() + 1);
  arriving_.erase(a);
  if (it != entries_.end() && it->second.ahead) {
    Entry& e = it->second;
    end_ahead(e);
    pending_.push_back(Pending{got.event, *e.ext, ptr});
    entries_.erase(it);
  } else {
    try {
      be_.destroy_event(got.event);
    } catch (...) {
    }
  }
}

void Residency::arrive_all() {
  std::vector<std::uintptr_t> ptrs;
  ptrs.reserve(arriving_.size());
  for (const auto& kv : arriving_) ptrs.push_back(kv.first);
  for (std::uintptr_t p : ptrs) arrive(p);
}

void Residency::ready_all() {
  arrive_all();
  std::vector<std::uintptr_t> back;
  for (const auto& [p, e] : entries_)
    if (e.reclaimed) back.push_back(p);
  for (std::uintptr_t p : back) restore(reinterpret_cast<void*>(p), true);
}

void Residency::ready(void* ptr) {
  const core::Resident r = alloc_.resident(ptr);  // a foreign pointer is an error, as everywhere
  if (r.evicted) {
    // Taken back under memory pressure since its restore (or its spare mark): it comes back now,
    // and its stream waits.
    auto it = entries_.find(r.ptr);
    if (it != entries_.end() && it->second.reclaimed) restore(ptr, true);
    return;
  }
  if (!entries_.empty())
    if (auto it = entries_.find(r.ptr); it != entries_.end() && it->second.spare) unspare(it);
  if (!arriving_.empty()) arrive(r.ptr);
}

void Residency::end_ahead(Entry& e) {
  e.ahead = false;
  --st_.ahead_now;
  st_.ahead_bytes_now -= e.bytes;
}

prim::Event Residency::take_ahead(std::uintptr_t ptr, Entry& e) {
  auto a = arriving_.find(ptr);
  const prim::Event ev = a->second.event;
  arriving_.erase(a);
  end_ahead(e);
  return ev;
}

void Residency::drop_ahead(std::uintptr_t ptr, Entry& e) {
  // Its copy in writes the pages: it completes first. Nothing else can have
  // touched them (no ready()), so the host copy is still their bytes.
  be_.wait_event(arriving_.at(ptr).event);  // throws: still ahead, as it was
  const prim::Event ev = take_ahead(ptr, e);
  try {
    be_.destroy_event(ev);
  } catch (...) {
  }
}

std::size_t Residency::reclaim_ahead(std::size_t want) {
  std::size_t got = 0;
  while (got < want && !ahead_.empty()) {
    const std::uintptr_t p = ahead_.back();
    auto it = entries_.find(p);
    if (it == entries_.end() || !it->second.ahead) {  // ready, evicted or freed since
      ahead_.pop_back();
      continue;
    }
    Entry& e = it->second;
    try {
      drop_ahead(p, e);
    } catch (const Error&) {
      break;
    }
    ahead_.pop_back();
    try {
      alloc_.evict(reinterpret_cast<void*>(p), /*release=*/false);
    } catch (const Error&) {
      // Still mapped, intact and complete: a plain resident allocation now.
      host_.give(*e.ext);
      entries_.erase(it);
      break;
    }
    taken(e);
    got += e.bytes;
  }
  return got;
}

void Residency::copy_out(const core::Resident& r, void* dst) {
  // After the work queued on the allocation's stream.
  const prim::Event ready = be_.record_event(r.stream);
  try {
    be_.stream_wait(d2h_, ready);
  } catch (...) {
    be_.destroy_event(ready);
    throw;
  }
  be_.destroy_event(ready);
  be_.copy_to_host_async(dst, r.ptr, r.requested, d2h_);
}

void Residency::taken(Entry& e) {
  e.evicted = true;
  e.reclaimed = true;
  ++st_.evicted_now;
  st_.evicted_bytes_now += e.bytes;
  ++st_.reclaimed;
  st_.reclaimed_bytes += e.bytes;
}

void Residency::mark_spare(void* ptr) {
  const core::Resident r = alloc_.resident(ptr);
  auto it = entries_.find(r.ptr);
  if (r.evicted || (it != entries_.end() && (it->second.leaving || it->second.ahead || it->second.by_sleep)))
    throw_error(Errc::invalid_argument, "mark_spare(" + hex_ptr(r.ptr) + "): evicted or being moved");
  if (it != entries_.end() && it->second.spare) return;
  prune(spare_, st_.spare_now, &Entry::spare);
  spare_.push_back(r.ptr);
  Entry& e = entries_[r.ptr];
  e.spare = true;
  if (!e.ext) e.bytes = r.requested;
  ++st_.spare_now;
  st_.spare_bytes_now += r.requested;
}

void Residency::end_spare(Entry& e) {
  e.spare = false;
  --st_.spare_now;
  st_.spare_bytes_now -= e.bytes;
}

void Residency::unspare(std::unordered_map<std::uintptr_t, Entry>::iterator it) {
  Entry& e = it->second;
  if (!e.spare) return;
  end_spare(e);
  if (!e.evicted && !e.leaving && !e.ahead && !e.ext && !e.disk && !e.clean) entries_.erase(it);
}

std::size_t Residency::reclaim_spare(std::size_t want) {
  std::size_t got = 0;
  while (got < want && !spare_.empty()) {
    const std::uintptr_t p = spare_.front();
    auto it = entries_.find(p);
    if (it == entries_.end() || !it->second.spare || it->second.evicted) {
      spare_.pop_front();
      continue;
    }
    Entry& e = it->second;
    const core::Resident r = alloc_.resident(reinterpret_cast<void*>(p));
    std::optional<HostTier::Extent> ext;
    try {
      ext = host_.take_or_grow(r.requested);
    } catch (const Error&) {
      break;  // no host memory for it: it stays
    }
    // Waited for here (a pressure path).
    try {
      copy_out(r, host_.addr(*ext));
      be_.synchronize_stream(d2h_);
    } catch (const Error&) {
      try {
        be_.synchronize_stream(d2h_);
        host_.give(*ext);
      } catch (...) {
      }
      break;  // still resident and spare
    }
    try {
      alloc_.evict(reinterpret_cast<void*>(p), /*release=*/false);
    } catch (const Error&) {
      host_.give(*ext);
      break;
    }
    spare_.pop_front();
    if (e.ext) host_.give(*e.ext);  // a read-only one's older clean copy
    e.ext = ext;
    e.clean = false;
    end_spare(e);
    e.bytes = r.requested;
    taken(e);
    ++st_.evictions;  // its bytes were copied out
    st_.bytes_evicted += e.bytes;
    got += e.bytes;
  }
  return got;
}

bool Residency::relieve(int stage, std::size_t want) {
  if (stage == 0) return leaving_ && settle_leaving(true, want) > 0;
  if (alloc_.capturing()) return false;
  std::size_t got = reclaim_ahead(want);
  if (got < want) got += reclaim_spare(want - got);
  return got > 0;
}

void Residency::give(Entry& e) {
  if (e.ext) host_.give(*e.ext);
  e.ext.reset();
  if (e.disk) disk_->give(*e.disk);
  e.disk.reset();
  e.clean = false;
}

void Residency::set_disk(const std::string& dir, std::size_t limit, FileOps* ops) {
  poll_io(true);
  if (disk_ && disk_->used())
    throw_error(Errc::invalid_argument, "disk tier: " + format_bytes(disk_->used()) + " still on disk in " + disk_->dir());
  disk_ = dir.empty() ? nullptr : std::make_unique<DiskTier>(dir, limit, ops);
}

void Residency::demote(void* ptr, bool wait) {
  if (!disk_) throw_error(Errc::invalid_argument, "demote: no disk tier (set the disk_tier option to a directory)");
  settle_leaving(false);
  poll_io(false);
  const core::Resident r = alloc_.resident(ptr);
  auto it = entries_.find(r.ptr);
  if (it != entries_.end() && it->second.leaving) {
    be_.wait_event(it->second.leaving);
    finish_eviction(r.ptr, it->second);
  }
  if (it == entries_.end() || !it->second.evicted)
    throw_error(Errc::invalid_argument, "demote(" + hex_ptr(r.ptr) + "): not evicted (evict it first)");
  Entry& e = it->second;
  if (e.by_sleep) throw_error(Errc::invalid_argument, "demote(" + hex_ptr(r.ptr) + "): asleep: wake() restores it");
  if (e.io && !e.io_write) {  // being read ahead: it stays on disk, where it is wanted
    cancel_io(e);
    return;
  }
  if (e.disk) throw_error(Errc::invalid_argument, "demote(" + hex_ptr(r.ptr) + "): on disk already");
  if (!e.ext) throw_error(Errc::invalid_argument, "demote(" + hex_ptr(r.ptr) + "): discarded, there are no bytes to keep");
  if (!wait) {
    moving_.reserve(moving_.size() + 1);  // nothing can fail once the write is queued
    DiskTier::Extent d;
    const std::uint64_t id = disk_->start_write(host_.addr(*e.ext), e.bytes, d);  // throws: nothing queued
    e.disk = std::move(d);
    begin_move(r.ptr, e, id, true);
    return;
  }
  e.disk = disk_->write(host_.addr(*e.ext), e.bytes);  // throws: the bytes stay in the host tier
  host_.give(*e.ext);
  e.ext.reset();
  ++st_.demotions;
}

void Residency::fetch(void* ptr) {
  if (!disk_) throw_error(Errc::invalid_argument, "fetch: no disk tier (set the disk_tier option to a directory)");
  settle_leaving(false);
  poll_io(false);
  const core::Resident r = alloc_.resident(ptr);
  auto it = entries_.find(r.ptr);
  if (it == entries_.end() || !(it->second.evicted || it->second.leaving))
    throw_error(Errc::invalid_argument, "fetch(" + hex_ptr(r.ptr) + "): not evicted");
  Entry& e = it->second;
  if (e.by_sleep) throw_error(Errc::invalid_argument, "fetch(" + hex_ptr(r.ptr) + "): asleep: wake() restores it");
  if (e.io) {  // a demotion still writing is stopped (its bytes are in the host tier); a read is on its way
    if (e.io_write) cancel_io(e);
    return;
  }
  if (!e.disk) return;  // in the host tier
  const HostTier::Extent ext = host_.take_or_grow(e.disk->bytes);
  std::uint64_t id = 0;
  try {
    moving_.reserve(moving_.size() + 1);  // nothing can fail once the read is queued
    id = disk_->start_read(*e.disk, host_.addr(ext));
  } catch (...) {
    host_.give(ext);
    throw;
  }
  e.ext = ext;
  begin_move(r.ptr, e, id, false);
}

void Residency::begin_move(std::uintptr_t ptr, Entry& e, std::uint64_t id, bool write) {
  e.io = id;
  e.io_write = write;
  // A move finished outside poll_io (a restore, a cancel) leaves its entry in moving_ until the next poll.
  if (std::find(moving_.begin(), moving_.end(), ptr) == moving_.end()) moving_.push_back(ptr);
}

void Residency::poll_io(bool wait) {
  if (moving_.empty()) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < moving_.size(); ++i) {
    auto it = entries_.find(moving_[i]);
    if (it == entries_.end() || !it->second.io) continue;  // finished since (a restore, a free)
    if (!wait && !disk_->done(it->second.io)) {
      moving_[kept++] = moving_[i];
      continue;
    }
    complete_io(it->second);
  }
  moving_.resize(kept);
}

void Residency::complete_io(Entry& e) {
  const std::uint64_t id = e.io;
  e.io = 0;
  if (e.io_write) {
    try {
      disk_->finish_write(id, *e.disk);
    } catch (const std::exception& x) {
      // The range went back; the bytes stay in the host tier.
      e.disk.reset();
      ++st_.disk_failures;
      if (io_error_.empty()) io_error_ = std::string("demote (asynchronous): ") + x.what() + "; the bytes stay in the host tier";
      return;
    }
    host_.give(*e.ext);
    e.ext.reset();
    ++st_.demotions;
  } else {
    try {
      disk_->finish_read(id, *e.disk);
    } catch (...) {
      // Still on disk; its restore reads it again and reports what fails.
      host_.give(*e.ext);
      e.ext.reset();
      ++st_.disk_failures;
      return;
    }
    disk_->give(*e.disk);
    e.disk.reset();
    ++st_.fetches;
  }
}

void Residency::cancel_io(Entry& e) {
  const std::uint64_t id = e.io;
  e.io = 0;
  disk_->cancel(id, *e.disk);
  if (e.io_write) {  // the bytes never left the host tier
    e.disk.reset();
  } else {  // still on disk
    host_.give(*e.ext);
    e.ext.reset();
  }
}

void Residency::forget(std::uintptr_t ptr) {
  auto it = entries_.find(ptr);
  if (it == entries_.end()) return;
  if (it->second.spare) end_spare(it->second);
  if (it->second.io) cancel_io(it->second);  // no I/O thread is left with its extents
  if (it->second.leaving) {
    // The eviction's copy reads pages the free hands back: it completes
    // before they can be reused or unmapped.
    try {
      be_.wait_event(it->second.leaving);
    } catch (...) {
    }
    cancel_eviction(ptr);
    return;
  }
  if (it->second.evicted) {
    --st_.evicted_now;
    st_.evicted_bytes_now -= it->second.bytes;
  }
  give(it->second);
  entries_.erase(it);
  asleep_ = asleep_ && std::any_of(entries_.begin(), entries_.end(), [](const auto& kv) { return kv.second.by_sleep; });
}

void Residency::refuse_under_capture(const char* what) const {
  // Its copies, events and unmaps would be recorded into the graph or break
  // the capture, and a replay would touch memory that left.
  if (alloc_.capturing())
    throw_error(Errc::invalid_argument, std::string(what) + ": a CUDA graph capture is in progress on this device; "
                                                            "end it first");
}

SleepReport Residency::sleep(const std::vector<Select>& what) {
  const auto t0 = std::chrono::steady_clock::now();
  refuse_under_capture("sleep");
  streams();
  arrive_all();  // restored ahead: resident, written from now on like any other
  for (auto it = entries_.begin(); it != entries_.end();) {  // spare marks end: a sleep takes everything
    auto next = std::next(it);
    if (it->second.spare) unspare(it);
    it = next;
  }
  settle_leaving(true);  // evictions in flight finish first (they stay evicted, outside the sleep)
  reclaim(true);
  // No kernel queued so far may touch what is unmapped below.
  be_.synchronize_device();

  std::vector<core::Resident> rs;
  alloc_.residents(rs);
  struct Item {
    core::Resident r;
    Mode mode;
    bool copy;
    std::optional<HostTier::Extent> ext;  // new extent for a copy
    prim::Event event = 0;
  };
  std::vector<Item> items;
  std::size_t need = 0;
  for (const core::Resident& r : rs) {
    if (r.evicted) continue;
    auto sel = std::find_if(what.begin(), what.end(), [&](const Select& x) { return x.label == 0 || x.label == r.label; });
    if (sel == what.end()) continue;
    auto it = entries_.find(r.ptr);
    const bool clean = it != entries_.end() && it->second.clean && it->second.ext;
    const bool copy = sel->mode == Mode::offload && !clean;
    if (copy) need += round_extent(r.requested);
    items.push_back(Item{r, sel->mode, copy, std::nullopt});
  }
  if (items.empty()) {
    if (asleep_)
      throw_error(Errc::invalid_argument, "sleep: already asleep (" + std::to_string(st_.evicted_now) +
                                              " allocations, " + format_bytes(st_.evicted_bytes_now) +
                                              " off the GPU) and nothing selected is left on it: wake first");
  }
  // Copies first, largest first: the DMA starts at once and the host
  // unmaps what needs no copy while it runs.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.copy != b.copy ? a.copy : a.r.requested > b.r.requested;
  });
  // The host tier holds every copy before anything moves (pinning, if it
  // must grow, happens here once, not per allocation).
  if (need) {
    try {
      host_.reserve(need);
      for (Item& it : items) {
        if (!it.copy) continue;
        it.ext = host_.take(it.r.requested);
        if (!it.ext) {  // free ranges too short: one chunk for all that is left
          host_.grow(need);
          it.ext = host_.take(it.r.requested);
        }
        need -= round_extent(it.r.requested);
      }
    } catch (...) {
      for (Item& u : items)
        if (u.ext) host_.give(*u.ext);
      throw;
    }
  }

  SleepReport rep;
  auto evict_now = [&](Item& it) {
    rep.released += alloc_.evict(reinterpret_cast<void*>(it.r.ptr), /*release=*/true);
    Entry& e = entries_[it.r.ptr];
    if (it.ext) {
      give(e);  // an old copy, if any, is stale
      e.ext = it.ext;
      it.ext.reset();
      rep.offloaded += it.r.requested;
    } else if (it.mode == Mode::discard) {
      give(e);
      rep.discarded += it.r.requested;
    } else {
      rep.kept += it.r.requested;  // the clean copy stays
    }
    e.clean = false;
    e.evicted = e.by_sleep = true;
    e.bytes = it.r.requested;
    ++rep.allocations;
    ++st_.evictions;
    ++st_.evicted_now;
    st_.evicted_bytes_now += e.bytes;
    asleep_ = true;  // from the first eviction on, wake() brings things back
  };
  try {
    for (Item& it : items) {
      if (!it.copy) continue;
      be_.copy_to_host_async(host_.addr(*it.ext), it.r.ptr, it.r.requested, d2h_);
      it.event = be_.record_event(d2h_);
    }
    for (Item& it : items)
      if (!it.copy) evict_now(it);
    for (Item& it : items) {
      if (!it.copy) continue;
      be_.wait_event(it.event);
      be_.destroy_event(it.event);
      it.event = 0;
      evict_now(it);
    }
  } catch (...) {
    // What left stays left (wake() brings it back); the rest stays on the
    // GPU, intact. The copies still queued read memory that stays mapped.
    try {
      be_.synchronize_stream(d2h_);
      for (Item& it : items) {
        if (it.event) be_.destroy_event(it.event);
        if (it.ext) host_.give(*it.ext);
      }
    } catch (...) {
    }
    throw;
  }
  rep.released += alloc_.empty_cache();
  asleep_ = true;  // even with nothing selected (the cache went back): wake() is the way back
  rep.seconds = seconds_since(t0);
  st_.bytes_evicted += rep.offloaded + rep.kept + rep.discarded;
  st_.bytes_discarded += rep.discarded;
  ++st_.sleeps;
  st_.last_sleep_s = rep.seconds;
  return rep;
}

WakeReport Residency::wake() {
  if (!asleep_) throw_error(Errc::invalid_argument, "wake: not asleep (nothing was put to sleep, or it is awake already)");
  const auto t0 = std::chrono::steady_clock::now();
  streams();
  std::vector<std::pair<std::uintptr_t, Entry*>> todo;
  for (auto& [p, e] : entries_)
    if (e.by_sleep && e.evicted) todo.emplace_back(p, &e);
  // Copies first, largest first (the DMA starts while the rest is mapped).
  std::stable_sort(todo.begin(), todo.end(), [](const auto& a, const auto& b) {
    return a.second->ext.has_value() != b.second->ext.has_value() ? a.second->ext.has_value()
                                                                     : a.second->bytes > b.second->bytes;
  });
  WakeReport rep;
  // Each allocation is final once its copy is complete: a read-only one is
  // then protected (and keeps its host copy), the others give theirs back.
  // Copies complete in order on the one stream, so the host finalises the
  // early ones while it still maps and queues the later ones.
  std::vector<prim::Event> events(todo.size(), 0);
  std::size_t mapped = 0, done = 0;
  auto finalize = [&](std::size_t i) {
    auto [p, e] = todo[i];
    if (events[i]) {
      be_.wait_event(events[i]);
      be_.destroy_event(events[i]);
      events[i] = 0;
    }
    e->by_sleep = false;
    if (e->ext && readonly_label(alloc_.resident(reinterpret_cast<void*>(p)).label)) {
      alloc_.set_readonly(reinterpret_cast<void*>(p), true);
      e->clean = true;
    } else {
      give(*e);
      entries_.erase(p);
    }
  };
  auto settle = [&](bool all) {
    for (; done < mapped && (all || !events[done] || be_.query_event(events[done])); ++done) finalize(done);
  };
  try {
    for (; mapped < todo.size(); ++mapped) {
      auto [p, e] = todo[mapped];
      alloc_.restore(reinterpret_cast<void*>(p));
      e->evicted = false;
      --st_.evicted_now;
      st_.evicted_bytes_now -= e->bytes;
      ++st_.restores;
      ++rep.allocations;
      if (e->ext) {
        be_.copy_to_device_async(p, host_.addr(*e->ext), e->bytes, h2d_);
        events[mapped] = be_.record_event(h2d_);
        rep.restored += e->bytes;
      } else {
        rep.refilled += e->bytes;
      }
      settle(false);
    }
    settle(true);
  } catch (const Error& err) {
    // What is back stays back once its bytes are; the rest stays asleep.
    try {
      be_.synchronize_stream(h2d_);
      if (mapped < todo.size() && !todo[mapped].second->evicted) {
        // Mapped, but its copy was never queued: it goes back to sleep
        // with its bytes still in the host tier, never with wrong ones.
        auto [p, e] = todo[mapped];
        if (events[mapped]) {
          be_.destroy_event(events[mapped]);
          events[mapped] = 0;
        }
        alloc_.evict(reinterpret_cast<void*>(p), /*release=*/true);
        e->evicted = true;
        ++st_.evicted_now;
        st_.evicted_bytes_now += e->bytes;
      }
      settle(true);
    } catch (...) {
    }
    asleep_ = std::any_of(entries_.begin(), entries_.end(), [](const auto& kv) { return kv.second.by_sleep; });
    throw_error(err.code(), "wake: " + std::to_string(done) + " of " + std::to_string(todo.size()) +
                                " allocations are back, the rest stays asleep (wake again to retry): " + err.what());
  }
  asleep_ = std::any_of(entries_.begin(), entries_.end(), [](const auto& kv) { return kv.second.by_sleep; });
  rep.seconds = seconds_since(t0);
  st_.bytes_restored += rep.restored;
  ++st_.wakes;
  st_.last_wake_s = rep.seconds;
  return rep;
}

void Residency::evict(void* ptr, Mode mode, bool wait) {
  refuse_under_capture("evict");
  streams();
  reclaim(false);
  settle_leaving(false);
  poll_io(false);
  const core::Resident r = alloc_.resident(ptr);
  auto it = entries_.find(r.ptr);
  if (r.evicted) {
    if (it != entries_.end() && it->second.reclaimed) {  // taken back under pressure: already where it goes
      it->second.reclaimed = false;
      if (mode == Mode::discard) {
        if (it->second.io) cancel_io(it->second);  // no I/O thread is left with its extents
        st_.bytes_discarded += it->second.bytes;
        give(it->second);
      }
      return;
    }
    throw_error(Errc::invalid_argument, "evict(" + hex_ptr(r.ptr) + "): already evicted");
  }
  if (it != entries_.end() && it->second.leaving)
    throw_error(Errc::invalid_argument, "evict(" + hex_ptr(r.ptr) + "): already being evicted");
  if (it != entries_.end() && it->second.spare) {  // evicted by its owner: the promise ends here
    unspare(it);
    it = entries_.find(r.ptr);
  }
  // Restored ahead and never ready(): its host copy is still its bytes (no
  // copy out). Offloaded, its pages go once its copy in is complete (that
  // copy's event is the eviction's, no host wait); discarded, the host copy
  // goes now, so the copy in reading it completes first.
  const bool was_ahead = it != entries_.end() && it->second.ahead;
  prim::Event copy_in = 0;
  if (was_ahead && mode == Mode::offload)
    copy_in = take_ahead(r.ptr, it->second);
  else if (was_ahead)
    drop_ahead(r.ptr, it->second);
  else
    arrive(r.ptr);  // restored without a wait and used since: its copy out follows its copy in
  it = entries_.find(r.ptr);
  const bool clean = it != entries_.end() && (it->second.clean || was_ahead) && it->second.ext;
  std::optional<HostTier::Extent> ext;
  prim::Event done = 0;
  if (mode == Mode::offload && !clean) {
    ext = host_.take_or_grow(r.requested);
    bool queued = false;
    try {
      // Unmapped once the copy is complete.
      copy_out(r, host_.addr(*ext));
      queued = true;
      done = be_.record_event(d2h_);
    } catch (...) {
      // A queued copy still writes the extent: it goes back once the
      // stream is drained (or stays out of use if even that fails).
      try {
        if (queued) be_.synchronize_stream(d2h_);
        host_.give(*ext);
      } catch (...) {
      }
      throw;
    }
  } else {
    done = copy_in ? copy_in : be_.record_event(r.stream);  // the last work that may touch the pages
  }
  Entry& e = entries_[r.ptr];
  if (ext) {
    give(e);
    e.ext = ext;
  } else if (mode == Mode::discard) {
    give(e);
  }
  e.clean = false;
  e.bytes = r.requested;
  e.leaving = done;
  ++leaving_;
  leaving_bytes_ += e.bytes;
  order_.push_back(r.ptr);
  if (!wait) return;
  try {
    be_.wait_event(done);
  } catch (...) {
    cancel_eviction(r.ptr);  // resident and intact, as if evict() had never been called
    throw;
  }
  finish_eviction(r.ptr, e);
}

void Residency::finish_eviction(std::uintptr_t ptr, Entry& e) {
  try {
    alloc_.evict(reinterpret_cast<void*>(ptr), /*release=*/false);
  } catch (...) {
    cancel_eviction(ptr);
    throw;
  }
  try {
    be_.destroy_event(e.leaving);
  } catch (...) {
    // The copy is complete; only the event leaks.
  }
  e.leaving = 0;
  --leaving_;
  leaving_bytes_ -= e.bytes;
  e.evicted = true;
  ++st_.evictions;
  ++st_.evicted_now;
  st_.evicted_bytes_now += e.bytes;
  st_.bytes_evicted += e.bytes;
}

void Residency::cancel_eviction(std::uintptr_t ptr) {
  auto it = entries_.find(ptr);
  Entry& e = it->second;
  // Its copy may still be writing the extent: the extent is reclaimed once
  // the event says it is done.
  if (e.ext)
    pending_.push_back(Pending{e.leaving, *e.ext});
  else
    try {
      be_.destroy_event(e.leaving);
    } catch (...) {
    }
  --leaving_;
  leaving_bytes_ -= e.bytes;
  entries_.erase(it);
}

std::size_t Residency::settle(bool wait) {
  const std::size_t n = settle_leaving(wait);
  poll_io(wait);
  reclaim(false);  // host extents of restores whose copies completed
  if (!io_error_.empty()) {
    const std::string why = std::move(io_error_);
    io_error_.clear();
    throw_error(Errc::driver, why);
  }
  return n;
}

std::size_t Residency::settle_leaving(bool wait, std::size_t want) {
  if (!leaving_) {
    order_.clear();
    return 0;
  }
  // In the order the evictions were queued: their copies complete in that
  // order on the D2H stream, so each unmap runs while later copies still
  // move bytes. Without waiting, it stops at the first copy still running.
  std::size_t n = 0, freed = 0;
  while (!order_.empty() && freed < want) {
    const std::uintptr_t ptr = order_.front();
    auto it = entries_.find(ptr);
    if (it == entries_.end() || !it->second.leaving) {  // restored (cancelled) or freed since
      order_.pop_front();
      continue;
    }
    Entry& e = it->second;
    if (wait)
      be_.wait_event(e.leaving);  // throws: it stays leaving, the next settle retries
    else if (!be_.query_event(e.leaving))
      break;
    order_.pop_front();
    finish_eviction(ptr, e);
    freed += e.bytes;
    ++n;
  }
  return n;
}

void Residency::restore(void* ptr, bool wait) {
  refuse_under_capture("restore");  // its copy and the stream's wait would go into the graph
  streams();
  if (!wait) {  // nothing can fail once its copy is queued
    ahead_.reserve(ahead_.size() + 1);
    arriving_.reserve(arriving_.size() + 1);
  }
  reclaim(false);
  settle_leaving(false);
  poll_io(false);
  const core::Resident r = alloc_.resident(ptr);
  auto it = entries_.find(r.ptr);
  if (it != entries_.end() && it->second.leaving) {  // the bytes never left
    cancel_eviction(r.ptr);
    ++st_.restores;
    return;
  }
  if (!r.evicted || it == entries_.end()) throw_error(Errc::invalid_argument, "restore(" + hex_ptr(r.ptr) + "): not evicted");
  if (it->second.by_sleep) throw_error(Errc::invalid_argument, "restore(" + hex_ptr(r.ptr) + "): asleep: wake() restores it");
  Entry& e = it->second;
  if (e.io) {
    if (e.io_write)
      cancel_io(e);  // the bytes are still in the host tier: the write is not needed
    else
      complete_io(e);  // a read-ahead on its way: waited for (if it failed, the read below reports why)
  }
  // Out of memory: pages of evictions still copying out give way, then (for a
  // restore that is needed now) those of restores ahead; a restore ahead never
  // takes back another (it would undo a prefetch needed sooner).
  // New pages as growth makes them, not a wake's large handles: a tiered allocation is freed
  // soon (an activation after backward reads it) or leaves again (a state), and its pages then
  // serve other allocations, which would take a large handle whole (ResNet-152 at 20 GiB: 103 MB
  // and 25 MB activations each took a 256 MiB handle a restore had made, 4.8 GB over the plan).
  auto map = [&] { retry_oom(e.bytes, [&] { alloc_.restore(ptr, /*coarse=*/false); }, /*reclaim=*/wait); };
  bool copied = false;
  if (e.disk) {
    // Through a pinned extent, part by part (docs/design/residency.md): the
    // pages are mapped while the first parts are read, and each part is copied
    // to them once it has arrived and matched its checksum. A failure leaves
    // the allocation evicted, on disk (unmapped again if it was mapped).
    const HostTier::Extent ext = host_.take_or_grow(e.disk->bytes);
    auto* staging = static_cast<char*>(host_.addr(ext));
    bool mapped = false;
    try {
      disk_->read(
          *e.disk, staging,
          [&] {
            map();
            mapped = true;
          },
          [&](std::size_t off, std::size_t len) { be_.copy_to_device_async(r.ptr + off, staging + off, len, h2d_); });
    } catch (...) {
      if (mapped) unmap_failed_restore(r.ptr, ext, std::current_exception());  // throws its own error if that fails too
      host_.give(ext);
      throw;
    }
    disk_->give(*e.disk);
    e.disk.reset();
    e.ext = ext;
    copied = true;
  } else {
    map();
  }
  e.evicted = false;
  e.reclaimed = false;
  --st_.evicted_now;
  st_.evicted_bytes_now -= e.bytes;
  ++st_.restores;
  if (e.ext) {
    if (!copied) be_.copy_to_device_async(r.ptr, host_.addr(*e.ext), e.bytes, h2d_);
    const prim::Event done = be_.record_event(h2d_);
    st_.bytes_restored += e.bytes;
    if (!wait) {
      // Ahead: nothing waits yet, and the host copy stays until ready().
      prune(ahead_, st_.ahead_now, &Entry::ahead);
      ahead_.push_back(r.ptr);
      arriving_[r.ptr] = Arriving{r.stream, done};
      e.ahead = true;
      ++st_.ahead_now;
      st_.ahead_bytes_now += e.bytes;
      return;
    }
    // The allocation's stream waits for the copy; the extent is reclaimed
    // once the copy is complete.
    be_.stream_wait(r.stream, done);
    pending_.push_back(Pending{done, *e.ext, r.ptr});
    e.ext.reset();
  }
  entries_.erase(it);
}

void Residency::unmap_failed_restore(std::uintptr_t ptr, const HostTier::Extent& staging, std::exception_ptr why) {
  bool drained = false;
  try {
    be_.synchronize_stream(h2d_);  // the parts' copies read the staging extent and write the pages
    drained = true;
    alloc_.evict(reinterpret_cast<void*>(ptr), /*release=*/false);
    return;
  } catch (const Error& again) {
    // Mapped, and it cannot leave: resident, its contents undefined (only
    // parts that matched were copied), as a discarded allocation comes back.
    // Its entry goes with its disk extent; the staging extent too unless a
    // copy may still read it.
    std::string first = "the read from disk failed";
    try {
      std::rethrow_exception(why);
    } catch (const std::exception& x) {
      first = x.what();
    } catch (...) {
    }
    auto it = entries_.find(ptr);
    --st_.evicted_now;
    st_.evicted_bytes_now -= it->second.bytes;
    give(it->second);
    entries_.erase(it);
    if (drained) host_.give(staging);
    throw_error(again.code(), "restore(" + hex_ptr(ptr) + "): " + first + "; unmapping it again failed too (" +
                                  again.what() + "): it stays mapped with undefined contents, its bytes are lost");
  }
}

ResidencyStats Residency::stats() const {
  ResidencyStats s = st_;
  s.host_capacity = host_.capacity();
  s.host_used = host_.used();
  s.asleep = asleep_;
  s.leaving_now = leaving_;
  s.leaving_bytes_now = leaving_bytes_;
  if (disk_) {
    s.disk_used = disk_->used();
    s.disk_file = disk_->file_size();
    s.disk_written = disk_->bytes_written();
    s.disk_read = disk_->bytes_read();
    s.disk_write_s = disk_->write_seconds();
    s.disk_read_s = disk_->read_seconds();
    s.disk_direct = disk_->direct();
    s.disk_busy_s = disk_->busy_seconds();
    for (std::uintptr_t p : moving_) {
      auto it = entries_.find(p);
      if (it == entries_.end() || !it->second.io) continue;
      (it->second.io_write ? s.disk_writing_now : s.disk_reading_now) += it->second.disk->bytes;
    }
  }
  return s;
}

}  // namespace memlake::residency
