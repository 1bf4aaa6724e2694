// Tracer: writes every allocation and free of a process as an RMM-style log
// (the format `memlake replay` reads), so a workload captured once can be
// replayed offline. Enabled with MEMLAKE_TRACE=path (".gz" compresses).
// Thread-safe; a layer used by DeviceAllocator, invisible to the algorithm.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "trace/trace.h"

namespace memlake::trace {

class Tracer {
 public:
  explicit Tracer(const std::string& path);  // throws Errc::invalid_argument if unwritable
  ~Tracer();
  void allocated(const void* ptr, std::size_t size, const void* stream);
  void freed(const void* ptr, std::size_t size, const void* stream);
  // Flushes and closes; later events are dropped. Called at exit for
  // allocators that are never destroyed (PyTorch's).
  void close();
  const std::string& path() const { return path_; }

 private:
  void write(Action a, const void* ptr, std::size_t size, const void* stream);
  std::string path_;
  std::mutex mu_;
  std::unique_ptr<Writer> w_;
  std::chrono::steady_clock::time_point t0_;
  std::unordered_map<std::thread::id, std::uint64_t> threads_;
};

}  // namespace memlake::trace
