// Residency labels ("tags" in the C ABI and Python): which memory an
// allocation belongs to (weights, KV cache, ...), so that sleep and wake can
// select it. A process-wide registry of names, and the label new allocations
// of this thread get (set by memlake_tag_set / `with memlake.tag(...)`).
#pragma once

#include <cstdint>
#include <string>

namespace memlake::core {

inline constexpr unsigned kLabelReadonly = 1;  // restored read-only, host copy kept (weights)
inline constexpr std::uint16_t kMaxLabels = 255;

// Registers `name` (or finds it) and returns its id, 1..kMaxLabels. Flags
// given for a known name must match. Throws Errc::invalid_argument on an
// empty or overlong name, mismatched flags, or a full registry.
std::uint16_t label_id(const std::string& name, unsigned flags);
// Id of a registered name, 0 if none.
std::uint16_t find_label(const std::string& name);
std::string label_name(std::uint16_t id);
unsigned label_flags(std::uint16_t id);

// This thread's label for new allocations (0 = none).
std::uint16_t current_label() noexcept;
// Returns the previous one. Throws Errc::invalid_argument for an unknown id.
std::uint16_t set_current_label(std::uint16_t id);

}  // namespace memlake::core
