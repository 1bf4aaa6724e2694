// MultiPath: executes a Plan (planner.h) — a host<->GPU transfer split over
// the target GPU's own PCIe link and over peer GPUs that move their share
// over their own PCIe link and forward it over NVLink (GLake MultiPath).
//
// Mechanism, for a share of GPU `t`'s transfer carried by peer `p`:
//   H2D: p's copy engine moves a piece of the host buffer into a staging
//        slot in p's memory (pinned: one DMA; pageable: staged by p's
//        engine threads); t then pulls the slot into the destination with a
//        device-to-device copy on a forwarding stream of t's, which waits for
//        the piece by event; p reuses the slot once t's copy of it is done.
//   D2H: t pushes a piece of the source into p's slot (device-to-device,
//        on t's forwarding stream) while p's engine drains the previous
//        slot to the host.
// Slots live on the peer and are granted to the target (cuMemSetAccess), so
// the user's buffer is only ever touched by the target's own context. Each
// share runs on its own host thread; the direct share runs on the caller's.
//
// Ordering is the copy engine's: the transfer starts after the work queued
// on `stream` (the target's) before the call; later work on `stream` waits
// for every share. to_device returns when the source may be reused (pinned:
// once queued, and the source stays untouched until the stream reaches the
// copy); to_host returns with the data in place.
//
// One transfer at a time goes through a given peer (its slots); concurrent
// calls through the same peer wait for each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "io/copy_engine.h"
#include "io/planner.h"
#include "prim/prim.h"

namespace memlake::io {

struct MultiPathOptions {
  PlanOptions plan;
  std::size_t slot = std::size_t{32} << 20;  // staging slot on a peer (rounded up to the granularity)
  int slots = 2;                             // slots per peer: pipeline depth, at least 2
  CopyOptions copy;                          // every GPU's engine; threads 0 = the cores split between the GPUs
};

struct MultiPathStats {
  std::uint64_t transfers = 0;
  std::uint64_t split = 0;                // transfers that used more than the direct path
  std::vector<std::uint64_t> bytes_via;   // per GPU: bytes its PCIe link carried
};

class MultiPath {
 public:
  // gpus[i] serves GPU i of `topo` (not owned; must outlive this). Peer
  // links the devices cannot use (can_access_peer false) are removed from
  // the topology. Throws Errc::invalid_argument when the counts differ.
  MultiPath(std::vector<prim::Backend*> gpus, Topology topo, const MultiPathOptions& o = {});
  ~MultiPath();
  MultiPath(const MultiPath&) = delete;
  MultiPath& operator=(const MultiPath&) = delete;

  Plan to_device(int target, std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream);
  Plan to_host(int target, void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream);

  const Topology& topology() const { return topo_; }
  CopyEngine& engine(int gpu);
  MultiPathStats stats() const;

 private:
  struct Gpu;
  Gpu& gpu(int i);
  void check_target(int target, std::uintptr_t device_ptr, std::size_t n);
  prim::Stream forward_stream(int target, int via);
  void ensure_slots(Gpu& p, int target);
  // One share through peer `via`; returns an event on the target's
  // forwarding stream after the share's last piece (H2D), 0 for D2H.
  prim::Event peer_h2d(int target, const Share& s, std::uintptr_t dst, const char* src, prim::Event start);
  void peer_d2h(int target, const Share& s, char* dst, std::uintptr_t src, prim::Event start);
  template <class ShareFn, class DirectFn>
  Plan run(int target, Direction dir, std::size_t n, prim::Stream stream, ShareFn share, DirectFn direct);

  Topology topo_;
  MultiPathOptions opts_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::mutex mu_;  // forward streams, stats
  std::map<std::pair<int, int>, prim::Stream> forward_;  // (target, via) -> stream of the target
  MultiPathStats stats_;
};

// Measures a topology over the given GPUs: each one's pinned H2D and D2H
// rate and, for each pair that has peer access, the rate of a
// device-to-device copy (issued on the receiving GPU for H2D forwarding).
// Every GPU gets its own PCIe group (GPUs sharing a switch are not visible
// through the driver API: add 'group' lines by hand from `nvidia-smi topo
// -m`). Returns a Topology and, in *text, its description.
Topology measure_topology(const std::vector<prim::Backend*>& gpus, std::size_t bytes, std::string* text = nullptr);

}  // namespace memlake::io
