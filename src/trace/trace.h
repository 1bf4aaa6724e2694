// Allocation traces in RMM's allocation-log CSV format:
//   Thread,Time,Action,Pointer,Size,Stream
// Actions: allocate, free, segment_alloc, segment_free (the last two are
// what the recording allocator reserved from the driver), and RMM's
// "allocate failure" (an allocation the recording allocator refused).
// Columns are found by name in the header, so extra or reordered columns
// are fine. gzip'ed and plain files are both read directly.
//
// Real RMM logs (logging_resource_adaptor, spdlog pattern "%t,%H:%M:%S.%f")
// are read as they are: Time as clock time HH:MM:SS.ffffff (µs since
// midnight, unwrapped past midnight), seconds with a fraction, or whole µs;
// in a line with a clock time, Pointer and Stream are hexadecimal with or
// without "0x" (RMM writes them with %llx); "deallocate" reads as free.
//
// Input is untrusted: a line longer than kMaxLine bytes is an error (a
// small gzip bomb cannot exhaust memory), and a gzip stream that ends
// before its trailer (a truncated file, or a process killed while
// tracing) or fails its CRC is an error naming the file and line, unless
// ReaderOptions::allow_truncated says a readable prefix is enough.
#pragma once

#include <cstdint>
#include <string>

namespace memlake::trace {

enum class Action : std::uint8_t { allocate, free, segment_alloc, segment_free, allocate_failure };

struct Event {
  Action action;
  std::uint64_t time_us;
  std::uint64_t ptr;
  std::uint64_t size;
  std::uint64_t stream;
  std::uint64_t thread;
};

constexpr std::size_t kMaxLine = 4096;

struct ReaderOptions {
  // A gzip file cut short ends the trace at its last whole line (truncated()
  // says so) instead of throwing: for the prefix a killed process leaves.
  bool allow_truncated = false;
  unsigned buffer_bytes = 1u << 18;  // zlib's input buffer (the output one is twice that)
};

class Reader {
 public:
  // Throws Errc::invalid_argument if the file cannot be opened or its header
  // lacks a required column.
  explicit Reader(const std::string& path, ReaderOptions opts = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // false at end of file. A malformed line throws Errc::invalid_argument
  // "path:LINE: what is wrong"; the reader stays usable past it.
  bool next(Event& e);
  std::uint64_t line() const { return line_; }
  double progress() const;  // 0..1, by compressed bytes consumed
  bool truncated() const { return truncated_; }  // only with allow_truncated

 private:
  bool read_line(std::string& out);
  void read_header();
  std::string path_;
  ReaderOptions opts_;
  bool truncated_ = false;
  bool done_ = false;
  std::uint64_t last_clock_us_ = 0, clock_base_us_ = 0;  // clock-time unwrapping past midnight
  void* gz_ = nullptr;
  std::uint64_t file_size_ = 0;
  std::uint64_t line_ = 0;
  int col_thread_ = -1, col_time_ = -1, col_action_ = -1, col_ptr_ = -1, col_size_ = -1, col_stream_ = -1;
  int ncols_ = 0;
  std::string buf_;
};

// Writes events in the same format (used by tests and by tracing).
// The file is created 0600 (an existing one is truncated and made 0600);
// a symbolic link or anything but a regular file or character device is
// refused (O_NOFOLLOW), so a trace path cannot be redirected by a link.
class Writer {
 public:
  explicit Writer(const std::string& path);  // ".gz" suffix: compressed
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  // false once a write has failed (the errno of the failure in error()).
  bool write(const Event& e);
  // Pushes what is buffered to the file; gzip: a full flush, so the file
  // read back up to here is a valid (if unterminated) stream.
  bool flush();
  // Flushes and closes (gzip: writes the trailer); false if anything failed.
  bool close();
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(const char* what);
  void* gz_ = nullptr;
  void* file_ = nullptr;
  bool failed_ = false;
  std::string error_;
};

const char* action_name(Action a);

}  // namespace memlake::trace
