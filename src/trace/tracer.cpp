#include "trace/tracer.h"

#include <cstdlib>
#include <vector>

namespace memlake::trace {
namespace {

// Tracers alive in this process, closed at exit so that gzip files end well.
std::mutex g_mu;
std::vector<Tracer*>& registry() {
  static std::vector<Tracer*> r;
  return r;
}
void close_all() {
  std::lock_guard<std::mutex> g(g_mu);
  for (Tracer* t : registry()) t->close();
}

}  // namespace

Tracer::Tracer(const std::string& path)
    : path_(path), w_(std::make_unique<Writer>(path)), t0_(std::chrono::steady_clock::now()) {
  std::lock_guard<std::mutex> g(g_mu);
  static bool hooked = (std::atexit(close_all), true);
  (void)hooked;
  registry().push_back(this);
}

Tracer::~Tracer() {
  close();
  std::lock_guard<std::mutex> g(g_mu);
  auto& r = registry();
  for (auto it = r.begin(); it != r.end(); ++it)
    if (*it == this) {
      r.erase(it);
      break;
    }
}

void Tracer::close() {
  std::lock_guard<std::mutex> g(mu_);
  w_.reset();
}

void Tracer::write(Action a, const void* ptr, std::size_t size, const void* stream) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> g(mu_);
  if (!w_) return;
  auto [it, fresh] = threads_.emplace(std::this_thread::get_id(), threads_.size());
  (void)fresh;
  Event e;
  e.action = a;
  e.time_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - t0_).count());
  e.ptr = reinterpret_cast<std::uintptr_t>(ptr);
  e.size = size;
  e.stream = reinterpret_cast<std::uintptr_t>(stream);
  e.thread = it->second;
  w_->write(e);
}

void Tracer::allocated(const void* ptr, std::size_t size, const void* stream) {
  write(Action::allocate, ptr, size, stream);
}
void Tracer::freed(const void* ptr, std::size_t size, const void* stream) { write(Action::free, ptr, size, stream); }

}  // namespace memlake::trace
