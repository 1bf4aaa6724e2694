// The topology parser (MEMLAKE_COPY_TOPOLOGY) and the planner on what it
// accepts: every plan covers every byte exactly once.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "io/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 9) return 0;
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, data, 8);
  bytes >>= (data[8] % 64);
  const std::string text(reinterpret_cast<const char*>(data) + 9, size - 9);
  memlake::io::Topology t;
  try {
    t = memlake::io::Topology::parse(text);
  } catch (const memlake::Error&) {
    return 0;
  }
  for (int target = 0; target < t.gpus && target < 4; ++target)
    for (auto dir : {memlake::io::Direction::h2d, memlake::io::Direction::d2h}) {
      memlake::io::Plan p;
      try {
        p = memlake::io::plan(t, target, dir, bytes, {});
      } catch (const memlake::Error&) {
        continue;
      }
      std::uint64_t off = 0;
      for (const auto& s : p.shares) {
        if (s.offset != off) std::abort();  // a gap or an overlap
        off += s.bytes;
      }
      if (off != bytes) std::abort();
    }
  return 0;
}
