#include "io/registration_cache.h"

#include <algorithm>

namespace memlake::io {
namespace {
constexpr std::size_t kMaxSeen = 64;     // use counts kept for ranges not registered (yet)
constexpr std::uintptr_t kPage = 4096;  // the unit the driver pins
}

RegistrationCache::RegistrationCache(prim::Backend& backend, const RegistrationOptions& opts) : be_(backend), opts_(opts) {}

RegistrationCache::~RegistrationCache() {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [base, e] : registered_) {
    try {
      be_.unregister_host(reinterpret_cast<void*>(base));
    } catch (...) {  // the driver may already be gone at exit
    }
  }
}

RegistrationCache::Hold::~Hold() {
  if (c_) c_->release_hold(base_);
}

void RegistrationCache::release_hold(std::uintptr_t base) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = registered_.find(base);
    if (it != registered_.end()) --it->second.holds;
  }
  cv_.notify_all();
}

std::map<std::uintptr_t, RegistrationCache::Entry>::iterator RegistrationCache::first_overlap(std::uintptr_t a, std::size_t n) {
  auto it = registered_.upper_bound(a);
  if (it != registered_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.size > a) return prev;
  }
  return it != registered_.end() && it->first < a + n ? it : registered_.end();
}

void RegistrationCache::evict_for(std::size_t incoming, std::unique_lock<std::mutex>&) {
  while (stats_.bytes + incoming > opts_.limit) {
    auto victim = registered_.end();
    for (auto it = registered_.begin(); it != registered_.end(); ++it)
      if (it->second.holds == 0 && (victim == registered_.end() || it->second.last_use < victim->second.last_use)) victim = it;
    if (victim == registered_.end()) return;  // everything is in use; the caller checks the limit again
    be_.unregister_host(reinterpret_cast<void*>(victim->first));
    stats_.bytes -= victim->second.size;
    ++stats_.evictions;
    registered_.erase(victim);
  }
}

RegistrationCache::Hold RegistrationCache::use(const void* p, std::size_t n) {
  if (!enabled() || n < opts_.min_bytes || n > opts_.limit) return {};
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::unique_lock<std::mutex> g(mu_);
  auto hit = first_overlap(a, n);
  if (hit != registered_.end() && hit->first <= a && a + n <= hit->first + hit->second.size) {
    ++hit->second.holds;
    hit->second.last_use = ++tick_;
    ++stats_.hits;
    return Hold(this, hit->first);
  }
  // Not registered: count the use; register on the N-th.
  const auto key = std::make_pair(a, n);
  auto s = seen_.find(key);
  if (s == seen_.end()) {
    if (seen_.size() >= kMaxSeen) {
      seen_.erase(seen_order_.front());
      seen_order_.pop_front();
    }
    s = seen_.emplace(key, 0).first;
    seen_order_.push_back(key);
  }
  if (++s->second < opts_.after) return {};
  // The driver pins whole pages: register [base, end), and let ranges that
  // share a page with it go first, unless a copy uses them.
  const std::uintptr_t base = a / kPage * kPage, end = (a + n + kPage - 1) / kPage * kPage;
  for (auto o = first_overlap(base, end - base); o != registered_.end() && o->first < end;) {
    if (o->second.holds > 0) return {};
    be_.unregister_host(reinterpret_cast<void*>(o->first));
    stats_.bytes -= o->second.size;
    ++stats_.evictions;
    o = registered_.erase(o);
  }
  const std::size_t bytes = end - base;
  evict_for(bytes, g);
  if (stats_.bytes + bytes > opts_.limit) return {};
  be_.register_host(reinterpret_cast<void*>(base), bytes);  // throws: nothing changed but the use count
  seen_.erase(key);
  seen_order_.remove(key);
  registered_[base] = Entry{bytes, 1, ++tick_};
  stats_.bytes += bytes;
  ++stats_.registrations;
  return Hold(this, base);
}

void RegistrationCache::forget(const void* p, std::size_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::unique_lock<std::mutex> g(mu_);
  for (auto it = seen_order_.begin(); it != seen_order_.end();) {
    if (it->first < a + std::max<std::size_t>(n, 1) && it->first + it->second > a) {
      seen_.erase(*it);
      it = seen_order_.erase(it);
    } else {
      ++it;
    }
  }
  for (;;) {
    auto o = first_overlap(a, std::max<std::size_t>(n, 1));
    if (o == registered_.end()) return;
    if (o->second.holds > 0) {  // a copy is using it: wait until it is done
      cv_.wait(g);
      continue;
    }
    be_.unregister_host(reinterpret_cast<void*>(o->first));
    stats_.bytes -= o->second.size;
    ++stats_.forgotten;
    registered_.erase(o);
  }
}

bool RegistrationCache::overlaps(const void* p, std::size_t n) {
  if (!enabled()) return false;
  std::lock_guard<std::mutex> g(mu_);
  return first_overlap(reinterpret_cast<std::uintptr_t>(p), std::max<std::size_t>(n, 1)) != registered_.end();
}

RegistrationStats RegistrationCache::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  RegistrationStats s = stats_;
  s.ranges = registered_.size();
  return s;
}

}  // namespace memlake::io
