// Allocation traces in RMM's allocation-log CSV format:
//   Thread,Time,Action,Pointer,Size,Stream
// Actions: allocate, free, segment_alloc, segment_free (the last two are
// what the recording allocator reserved from the driver). Columns are found
// by name in the header, so extra or reordered columns are fine. gzip'ed
// and plain files are both read directly.
#pragma once

#include <cstdint>
#include <string>

namespace memlake::trace {

enum class Action : std::uint8_t { allocate, free, segment_alloc, segment_free };

struct Event {
  Action action;
  std::uint64_t time_us;
  std::uint64_t ptr;
  std::uint64_t size;
  std::uint64_t stream;
  std::uint64_t thread;
};

class Reader {
 public:
  // Throws Errc::invalid_argument if the file cannot be opened or its header
  // lacks a required column.
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // false at end of file. A malformed line throws Errc::invalid_argument
  // "path:LINE: what is wrong"; the reader stays usable past it.
  bool next(Event& e);
  std::uint64_t line() const { return line_; }
  double progress() const;  // 0..1, by compressed bytes consumed

 private:
  bool read_line(std::string& out);
  void read_header();
  std::string path_;
  void* gz_ = nullptr;
  std::uint64_t file_size_ = 0;
  std::uint64_t line_ = 0;
  int col_thread_ = -1, col_time_ = -1, col_action_ = -1, col_ptr_ = -1, col_size_ = -1, col_stream_ = -1;
  int ncols_ = 0;
  std::string buf_;
};

// Writes events in the same format (used by tests and by tracing).
class Writer {
 public:
  explicit Writer(const std::string& path);  // ".gz" suffix: compressed
  ~Writer();
  void write(const Event& e);

 private:
  void* gz_ = nullptr;
  void* file_ = nullptr;
};

const char* action_name(Action a);

}  // namespace memlake::trace
