// Tracer: writes every allocation and free of a process as an RMM-style log
// (the format `memlake replay` reads), so a workload captured once can be
// replayed offline. Enabled with MEMLAKE_TRACE=path (".gz" compresses;
// "%p" in the path becomes the pid, "%r" the rank: $RANK, else
// $LOCAL_RANK, else 0; "%%" a '%').
// Thread-safe; a layer used by DeviceAllocator, invisible to the algorithm.
//
// Nothing is lost silently: a background thread flushes every tracer once a
// second (gzip: a sync flush, so a killed process leaves a readable prefix
// missing at most the last second); SIGTERM flushes and, where its default
// action then ends the process, closes every trace (the previous handler is
// chained); exit closes them. A failed write is reported on stderr once, and
// counted (write_failed(), events_lost()).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "trace/trace.h"

namespace memlake::trace {

// "%p" -> pid, "%r" -> rank, "%%" -> '%'; any other '%' is kept.
std::string expand_trace_path(const std::string& pattern);

class Tracer {
 public:
  explicit Tracer(const std::string& path);  // throws Errc::invalid_argument if unwritable
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  void allocated(const void* ptr, std::size_t size, const void* stream);
  void freed(const void* ptr, std::size_t size, const void* stream);
  // Pushes buffered events to the file (what the flusher does every second).
  void flush();
  // Flushes and closes; later events are dropped. Called at exit for
  // allocators that are never destroyed (PyTorch's).
  void close();
  const std::string& path() const { return path_; }  // expanded
  bool write_failed() const { return failed_.load(); }
  std::uint64_t events_lost() const { return lost_.load(); }

 private:
  friend struct TracerFork;
  void write(Action a, const void* ptr, std::size_t size, const void* stream);
  void report_failure();  // mu_ held
  std::string path_;
  std::mutex mu_;
  std::unique_ptr<Writer> w_;
  bool dirty_ = false;
  std::atomic<bool> failed_{false}, orphaned_{false};  // orphaned_: inherited by a forked child
  std::atomic<std::uint64_t> lost_{0};
  std::chrono::steady_clock::time_point t0_;
  std::unordered_map<std::thread::id, std::uint64_t> threads_;
};

}  // namespace memlake::trace
