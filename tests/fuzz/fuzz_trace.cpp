// The trace reader on arbitrary bytes (plain or gzip): every input ends in
// events or in Errc::invalid_argument, never in a crash, a hang or an
// unbounded allocation.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("memlake_fuzz_trace", 0);
  if (fd < 0) return 0;
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  for (bool allow_truncated : {false, true}) {
    try {
      memlake::trace::ReaderOptions o;
      o.allow_truncated = allow_truncated;
      o.buffer_bytes = 4096;  // small inputs: zlib's default 768 KiB of buffers per open dominated the time
      memlake::trace::Reader r(path, o);
      memlake::trace::Event e;
      int errors = 0;
      for (int i = 0; i < 100000 && errors < 16; ++i) {
        try {
          if (!r.next(e)) break;
        } catch (const memlake::Error&) {  // a bad line: the reader goes on past it
          ++errors;  // (a read error repeats: stop after a few)
        }
      }
    } catch (const memlake::Error&) {
    }
  }
  return 0;
}
