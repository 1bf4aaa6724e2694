#include "core/stream_tracker.h"

#include "core/error.h"

namespace memlake::core {

StreamTracker::~StreamTracker() {
  for (StreamState& st : streams_)
    for (Pending& p : st.pending) drop_event(p.event);
}

void StreamTracker::drop_event(prim::Event e) noexcept {
  try {
    be_.destroy_event(e);
  } catch (...) {
    // The event leaks in the driver; nothing here refers to it any more.
  }
}

Tag StreamTracker::tag_of_slow(prim::Stream s) {
  auto it = tags_.find(s);
  Tag t;
  if (it != tags_.end()) {
    t = it->second;
  } else {
    t = static_cast<Tag>(streams_.size());
    streams_.emplace_back();
    streams_.back().stream = s;
    tags_.emplace(s, t);
  }
  last_stream_ = s;
  last_tag_ = t;
  return t;
}

Tag StreamTracker::held_tag(prim::Stream capture_stream) {
  const Tag t = static_cast<Tag>(streams_.size());
  streams_.emplace_back();
  StreamState& st = streams_[t];
  st.stream = capture_stream;  // what stream_of() reports (tracing, residency)
  st.held = true;
  st.done = st.seq;
  return t;
}

void StreamTracker::advance(StreamState& st) {
  while (!st.pending.empty() && be_.query_event(st.pending.front().event)) {
    const Pending p = st.pending.front();
    st.pending.pop_front();
    st.done = p.seq;
    drop_event(p.event);
  }
}

std::uint64_t StreamTracker::poll(Tag t, std::uint64_t want) {
  StreamState& st = streams_[t];
  if (st.held || frozen_) return st.done;
  try {
    advance(st);
    if (st.done < want && (st.pending.empty() || st.pending.back().seq < want)) {
      if (be_.query_stream(st.stream)) {  // idle: every free so far is complete, no event needed
        complete_all(st);
        return st.done;
      }
      // One event covers every free issued so far on this stream.
      st.pending.push_back(Pending{be_.record_event(st.stream), st.seq});
      advance(st);
    }
  } catch (const Error&) {
    // A failed query or record proves nothing: the frees stay pending (the
    // conservative answer), and a later poll or a wait tries again.
  }
  return st.done;
}

void StreamTracker::wait(Tag t, std::uint64_t seq) {
  StreamState& st = streams_[t];
  if (st.done >= seq) return;
  if (st.held)
    throw_error(Errc::unavailable, "waiting for memory of a CUDA graph's pool that is not released");
  if (frozen_)
    throw_error(Errc::unavailable, "waiting for other streams' work during CUDA graph capture would invalidate the capture");
  poll(t, seq);
  while (st.done < seq) {
    if (st.pending.empty() || st.pending.back().seq < seq) {
      // No event covers it (recording one failed): wait for the whole stream.
      be_.synchronize_stream(st.stream);  // throws if it fails: nothing changed
      complete_all(st);
      return;
    }
    const Pending p = st.pending.front();
    be_.wait_event(p.event);  // throws if it fails: nothing changed
    // Complete once the wait returned: no query needed (one that failed
    // would fail a wait that succeeded).
    st.pending.pop_front();
    st.done = p.seq;
    drop_event(p.event);
  }
}

void StreamTracker::complete_all(StreamState& st) {
  for (Pending& p : st.pending) drop_event(p.event);
  st.pending.clear();
  st.done = st.seq;
}

void StreamTracker::mark_all_complete() {
  for (StreamState& st : streams_)
    if (!st.held) complete_all(st);  // a graph pool's memory stays apart until its release
}

std::size_t StreamTracker::pending_events() const {
  std::size_t n = 0;
  for (const StreamState& st : streams_) n += st.pending.size();
  return n;
}

}  // namespace memlake::core
