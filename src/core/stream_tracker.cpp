#include "core/stream_tracker.h"

namespace memlake::core {

StreamTracker::~StreamTracker() {
  for (StreamState& st : streams_)
    for (Pending& p : st.pending) {
      try {
        be_.destroy_event(p.event);
      } catch (...) {
      }
    }
}

Tag StreamTracker::tag_of(prim::Stream s) {
  auto it = tags_.find(s);
  if (it != tags_.end()) return it->second;
  Tag t = static_cast<Tag>(streams_.size());
  streams_.emplace_back();
  streams_.back().stream = s;
  tags_.emplace(s, t);
  return t;
}

void StreamTracker::advance(StreamState& st) {
  while (!st.pending.empty() && be_.query_event(st.pending.front().event)) {
    st.done = st.pending.front().seq;
    be_.destroy_event(st.pending.front().event);
    st.pending.pop_front();
  }
}

std::uint64_t StreamTracker::poll(Tag t, std::uint64_t want) {
  StreamState& st = streams_[t];
  advance(st);
  if (st.done < want && (st.pending.empty() || st.pending.back().seq < want)) {
    if (be_.query_stream(st.stream)) {  // idle: every free so far is complete, no event needed
      for (Pending& p : st.pending) be_.destroy_event(p.event);
      st.pending.clear();
      st.done = st.seq;
      return st.done;
    }
    // One event covers every free issued so far on this stream.
    st.pending.push_back(Pending{be_.record_event(st.stream), st.seq});
    advance(st);
  }
  return st.done;
}

void StreamTracker::wait(Tag t, std::uint64_t seq) {
  StreamState& st = streams_[t];
  if (st.done >= seq) return;
  poll(t, seq);
  while (st.done < seq && !st.pending.empty()) {
    be_.wait_event(st.pending.front().event);
    advance(st);
  }
}

void StreamTracker::mark_all_complete() {
  for (StreamState& st : streams_) {
    for (Pending& p : st.pending) be_.destroy_event(p.event);
    st.pending.clear();
    st.done = st.seq;
  }
}

std::size_t StreamTracker::pending_events() const {
  std::size_t n = 0;
  for (const StreamState& st : streams_) n += st.pending.size();
  return n;
}

}  // namespace memlake::core
