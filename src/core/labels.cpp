#include "core/labels.h"

#include <mutex>
#include <vector>

#include "core/error.h"

namespace memlake::core {
namespace {

struct Label {
  std::string name;
  unsigned flags;
};

std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::vector<Label>& table() {  // index id - 1
  static std::vector<Label> t;
  return t;
}
thread_local std::uint16_t tl_current = 0;

}  // namespace

std::uint16_t label_id(const std::string& name, unsigned flags) {
  if (name.empty() || name.size() > 64)
    throw_error(Errc::invalid_argument, "tag name must have 1 to 64 characters (got " + std::to_string(name.size()) + ")");
  if (flags & ~kLabelReadonly) throw_error(Errc::invalid_argument, "tag '" + name + "': unknown flags " + std::to_string(flags));
  std::lock_guard<std::mutex> g(mu());
  auto& t = table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].name != name) continue;
    if (t[i].flags != flags)
      throw_error(Errc::invalid_argument, "tag '" + name + "' exists with flags " + std::to_string(t[i].flags) +
                                              ", not " + std::to_string(flags));
    return static_cast<std::uint16_t>(i + 1);
  }
  if (t.size() >= kMaxLabels)
    throw_error(Errc::invalid_argument, "tag '" + name + "': at most " + std::to_string(kMaxLabels) + " tags");
  t.push_back(Label{name, flags});
  return static_cast<std::uint16_t>(t.size());
}

std::uint16_t find_label(const std::string& name) {
  std::lock_guard<std::mutex> g(mu());
  const auto& t = table();
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return static_cast<std::uint16_t>(i + 1);
  return 0;
}

std::string label_name(std::uint16_t id) {
  std::lock_guard<std::mutex> g(mu());
  return id == 0 || id > table().size() ? std::string() : table()[id - 1].name;
}

unsigned label_flags(std::uint16_t id) {
  std::lock_guard<std::mutex> g(mu());
  return id == 0 || id > table().size() ? 0u : table()[id - 1].flags;
}

std::uint16_t current_label() noexcept { return tl_current; }

std::uint16_t set_current_label(std::uint16_t id) {
  if (id != 0) {
    std::lock_guard<std::mutex> g(mu());
    if (id > table().size()) throw_error(Errc::invalid_argument, "tag id " + std::to_string(id) + " is not registered");
  }
  const std::uint16_t prev = tl_current;
  tl_current = id;
  return prev;
}

}  // namespace memlake::core
