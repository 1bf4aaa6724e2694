// StreamTracker: the cross-stream reuse rule.
//
// Rule: memory freed on stream S may be reused at once by S (stream order
// makes that safe) and by any other stream only after all work submitted to
// S before the free has completed. Every free on S gets a number (seq); the
// tracker records CUDA events on S lazily, only when some other stream
// needs the memory, and learns from them which seqs are complete.
//
// Tags are small integers standing for streams (1, 2, ...); tag 0 is
// "global" (no stream restriction) and never names a stream.
#pragma once

#include <deque>
#include <unordered_map>
#include <vector>

#include "core/page_pool.h"
#include "prim/prim.h"

namespace memlake::core {

class StreamTracker final : public Quiescer {
 public:
  explicit StreamTracker(prim::Backend& backend) : be_(backend) {}
  ~StreamTracker() override;

  Tag tag_of(prim::Stream s) {
    // One compare for the common case of one stream allocating over and over.
    if (s == last_stream_ && last_tag_) return last_tag_;
    return tag_of_slow(s);
  }
  // A tag of its own for a CUDA graph's pool (allocations of a capture on
  // `capture_stream`): its frees are never known complete until complete()
  // says so, nothing is queried or recorded for it, and waiting on it is
  // refused.
  Tag held_tag(prim::Stream capture_stream);
  bool held(Tag t) const { return streams_[t].held; }
  // A held tag's memory is no longer used by the device (the caller
  // synchronised): every free of it so far is complete.
  void complete(Tag t) { complete_all(streams_[t]); }
  // The pool is released: from now on its tag follows its capture stream
  // (events on it tell when the frees of its remaining allocations complete).
  void unhold(Tag t) { streams_[t].held = false; }
  // While frozen (a CUDA graph is being captured on this device), no event is
  // recorded or queried and no stream is queried or synchronised: in the
  // capture's global mode such calls would invalidate it. Polls answer what
  // is known; waits are refused (Errc::unavailable).
  void set_frozen(bool f) { frozen_ = f; }
  bool frozen() const { return frozen_; }
  prim::Stream stream_of(Tag t) const { return streams_[t].stream; }

  // A free happens on stream `t`: returns its number.
  std::uint64_t note_free(Tag t) { return ++streams_[t].seq; }
  std::uint64_t current(Tag t) const { return streams_[t].seq; }
  // The device was synchronised: every free so far is complete.
  void mark_all_complete();
  // Highest free number of `t` known complete, without blocking. If no event
  // covers `want` yet, asks whether the stream is idle (then every free so
  // far is complete) and otherwise records one, so that a later poll can see it.
  // Never throws: a failed query or record leaves the frees pending.
  std::uint64_t poll(Tag t, std::uint64_t want);
  // Blocks until free number `seq` of `t` is complete (synchronising the
  // stream if no event covers it). Throws if the wait fails; then nothing
  // is known complete that was not before.
  void wait(Tag t, std::uint64_t seq) override;
  bool done(Tag t, std::uint64_t seq) override { return t == 0 || poll(t, seq) >= seq; }

  std::size_t pending_events() const;

 private:
  struct Pending {
    prim::Event event;
    std::uint64_t seq;
  };
  struct StreamState {
    prim::Stream stream = nullptr;
    std::uint64_t seq = 0;   // last free number issued
    std::uint64_t done = 0;  // all frees <= done are complete
    std::deque<Pending> pending;
    bool held = false;       // a graph pool's tag (held_tag)
  };
  Tag tag_of_slow(prim::Stream s);
  void advance(StreamState& st);
  void complete_all(StreamState& st);
  // Destroys an event; a failure only leaks it in the driver.
  void drop_event(prim::Event e) noexcept;

  prim::Backend& be_;
  std::vector<StreamState> streams_ = std::vector<StreamState>(1);  // [0] unused (global)
  std::unordered_map<prim::Stream, Tag> tags_;
  prim::Stream last_stream_ = nullptr;
  Tag last_tag_ = 0;
  bool frozen_ = false;
};

}  // namespace memlake::core
