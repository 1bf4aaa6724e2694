#include "trace/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"

#if MEMLAKE_HAVE_ZLIB
#include <zlib.h>
#else
// Without zlib: plain CSV through stdio, with the same small interface.
namespace {
using gzFile = FILE*;
constexpr int Z_OK = 0, Z_BUF_ERROR = -5, Z_SYNC_FLUSH = 2;
gzFile gzopen(const char* path, const char* mode) {
  FILE* f = std::fopen(path, mode);
  if (f && mode[0] == 'r') {
    int a = std::fgetc(f), b = std::fgetc(f);
    if (a == 0x1f && b == 0x8b) {
      std::fclose(f);
      memlake::throw_error(memlake::Errc::invalid_argument,
                           std::string("'") + path + "' is gzip-compressed and memlake was built without zlib");
    }
    std::rewind(f);
  }
  return f;
}
int gzbuffer(gzFile, unsigned) { return 0; }
int gzclose(gzFile f) { return std::fclose(f); }
char* gzgets(gzFile f, char* buf, int len) { return std::fgets(buf, len, f); }
const char* gzerror(gzFile f, int* err) {
  *err = std::ferror(f) ? -1 : Z_OK;
  return "read error";
}
long gzoffset(gzFile f) { return std::ftell(f); }
gzFile gzdopen(int fd, const char* mode) { return fdopen(fd, mode); }
int gzwrite(gzFile f, const void* p, unsigned n) { return static_cast<int>(std::fwrite(p, 1, n, f)); }
int gzflush(gzFile f, int) { return std::fflush(f) == 0 ? Z_OK : -1; }
}  // namespace
#endif

namespace memlake::trace {
namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  for (auto& f : out) {
    while (!f.empty() && (f.back() == '\r' || f.back() == ' ')) f.pop_back();
    std::size_t i = 0;
    while (i < f.size() && f[i] == ' ') ++i;
    f.erase(0, i);
  }
  return out;
}

bool parse_u64(const std::string& f, std::uint64_t& v) {
  if (f.empty()) return false;
  const char* s = f.c_str();
  int base = 10;
  if (f.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    base = 16;
  }
  if (!*s) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long x = std::strtoull(s, &end, base);
  if (errno || *end != '\0' || s[0] == '-') return false;
  v = x;
  return true;
}

// Hexadecimal with or without "0x" (RMM writes pointers and streams with %llx).
bool parse_hex(const std::string& f, std::uint64_t& v) {
  std::size_t i = f.size() > 2 && f[0] == '0' && (f[1] == 'x' || f[1] == 'X') ? 2 : 0;
  if (i == f.size() || f.size() - i > 16) return false;
  std::uint64_t x = 0;
  for (; i < f.size(); ++i) {
    const char c = f[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    x = x << 4 | static_cast<std::uint64_t>(d);
  }
  v = x;
  return true;
}

// Up to 6 fraction digits as microseconds ("5" -> 500000); more digits are cut.
bool parse_fraction_us(const std::string& f, std::uint64_t& us) {
  if (f.empty()) return false;
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] < '0' || f[i] > '9') return false;
    if (i < 6) x = x * 10 + static_cast<std::uint64_t>(f[i] - '0');
  }
  for (std::size_t i = f.size(); i < 6; ++i) x *= 10;
  us = x;
  return true;
}

bool all_digits(const std::string& f) {
  if (f.empty()) return false;
  for (char c : f)
    if (c < '0' || c > '9') return false;
  return true;
}

// Time: "HH:MM:SS[.ffffff]" (clock = true, µs since midnight), "S.ffffff"
// (seconds), or whole microseconds.
bool parse_time(const std::string& f, std::uint64_t& us, bool& clock) {
  clock = false;
  const std::size_t c1 = f.find(':');
  if (c1 != std::string::npos) {
    const std::size_t c2 = f.find(':', c1 + 1);
    if (c2 == std::string::npos) return false;
    const std::size_t dot = f.find('.', c2 + 1);
    const std::string hh = f.substr(0, c1), mm = f.substr(c1 + 1, c2 - c1 - 1),
                      ss = f.substr(c2 + 1, dot == std::string::npos ? std::string::npos : dot - c2 - 1);
    if (!all_digits(hh) || !all_digits(mm) || !all_digits(ss) || hh.size() > 2 || mm.size() != 2 || ss.size() != 2) return false;
    const std::uint64_t h = std::stoull(hh), m = std::stoull(mm), s = std::stoull(ss);
    if (h > 23 || m > 59 || s > 60) return false;
    std::uint64_t frac = 0;
    if (dot != std::string::npos && !parse_fraction_us(f.substr(dot + 1), frac)) return false;
    us = ((h * 60 + m) * 60 + s) * 1000000 + frac;
    clock = true;
    return true;
  }
  const std::size_t dot = f.find('.');
  if (dot != std::string::npos) {
    const std::string whole = f.substr(0, dot);
    std::uint64_t frac = 0;
    if (!all_digits(whole) || whole.size() > 12 || !parse_fraction_us(f.substr(dot + 1), frac)) return false;
    us = std::stoull(whole) * 1000000 + frac;
    return true;
  }
  return parse_u64(f, us);
}

// A line quoted in an error message: at most 80 bytes, control bytes escaped.
std::string quoted(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) appendf(o, "\\x%02x", c);
    else o += static_cast<char>(c);
  }
  if (s.size() > 80) o += "... (" + std::to_string(s.size()) + " bytes)";
  return o;
}

}  // namespace

const char* action_name(Action a) {
  switch (a) {
    case Action::allocate: return "allocate";
    case Action::free: return "free";
    case Action::segment_alloc: return "segment_alloc";
    case Action::segment_free: return "segment_free";
    case Action::allocate_failure: return "allocate failure";
  }
  return "?";
}

Reader::Reader(const std::string& path, ReaderOptions opts) : path_(path), opts_(opts) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    throw_error(Errc::invalid_argument, "cannot open trace '" + path + "': " + std::strerror(errno));
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  gz_ = gzopen(path.c_str(), "rb");
  if (!gz_) throw_error(Errc::invalid_argument, "cannot open trace '" + path + "'");
  gzbuffer(static_cast<gzFile>(gz_), std::max(opts_.buffer_bytes, 1024u));
  try {
    read_header();
  } catch (...) {
    gzclose(static_cast<gzFile>(gz_));  // the destructor does not run for a throwing constructor
    gz_ = nullptr;
    throw;
  }
}

void Reader::read_header() {
  std::string header;
  if (!read_line(header)) throw_error(Errc::invalid_argument, path_ + ": empty trace (no header line)");
  auto cols = split(header);
  ncols_ = static_cast<int>(cols.size());
  for (int i = 0; i < ncols_; ++i) {
    const std::string& c = cols[i];
    if (c == "Thread") col_thread_ = i;
    else if (c == "Time") col_time_ = i;
    else if (c == "Action") col_action_ = i;
    else if (c == "Pointer") col_ptr_ = i;
    else if (c == "Size") col_size_ = i;
    else if (c == "Stream") col_stream_ = i;
  }
  if (col_action_ < 0 || col_ptr_ < 0 || col_size_ < 0)
    throw_error(Errc::invalid_argument, path_ + ":1: header '" + quoted(header) +
                                            "' lacks a required column (need Action, Pointer, Size; "
                                            "expected Thread,Time,Action,Pointer,Size,Stream)");
}

Reader::~Reader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

bool Reader::read_line(std::string& out) {
  out.clear();
  if (done_) return false;
  char chunk[512];
  for (;;) {
    if (!gzgets(static_cast<gzFile>(gz_), chunk, sizeof chunk)) {
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      if (err == Z_BUF_ERROR) {
        // zlib's "unexpected end of file": the gzip stream stops before its
        // trailer (length and CRC), so the file is not the whole trace.
        if (!opts_.allow_truncated)
          throw_error(Errc::invalid_argument,
                      path_ + ":" + std::to_string(line_ + 1) +
                          ": the gzip stream ends early (a truncated file, or a process killed while tracing); the "
                          "trace is incomplete after line " + std::to_string(line_));
        truncated_ = done_ = true;
        out.clear();  // a partial last line is not an event
        return false;
      }
      if (err != Z_OK)
        throw_error(Errc::invalid_argument, path_ + ":" + std::to_string(line_ + 1) + ": cannot read: " + msg);
      done_ = true;
      if (out.empty()) return false;
      break;
    }
    out += chunk;
    if (!out.empty() && out.back() == '\n') break;
    if (out.size() > kMaxLine)
      throw_error(Errc::invalid_argument, path_ + ":" + std::to_string(line_ + 1) + ": line longer than " +
                                              std::to_string(kMaxLine) + " bytes (not a trace, or a corrupt one)");
  }
  ++line_;
  if (out.size() > kMaxLine + 1)
    throw_error(Errc::invalid_argument, path_ + ":" + std::to_string(line_) + ": line longer than " +
                                            std::to_string(kMaxLine) + " bytes (not a trace, or a corrupt one)");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return true;
}

bool Reader::next(Event& e) {
  for (;;) {
    if (!read_line(buf_)) return false;
    if (buf_.empty()) continue;  // blank lines are harmless
    auto f = split(buf_);
    auto bad = [&](const std::string& what) {
      throw_error(Errc::invalid_argument,
                  path_ + ":" + std::to_string(line_) + ": " + what + " in line '" + quoted(buf_) + "'");
    };
    if (static_cast<int>(f.size()) != ncols_)
      bad("expected " + std::to_string(ncols_) + " fields, found " + std::to_string(f.size()));
    const std::string& a = f[col_action_];
    if (a == "allocate") e.action = Action::allocate;
    else if (a == "free" || a == "deallocate") e.action = Action::free;
    else if (a == "segment_alloc") e.action = Action::segment_alloc;
    else if (a == "segment_free") e.action = Action::segment_free;
    else if (a == "allocate failure") e.action = Action::allocate_failure;
    else bad("unknown action '" + quoted(a) + "'");
    e.time_us = e.stream = e.thread = 0;
    bool clock = false;
    if (col_time_ >= 0) {
      if (!parse_time(f[col_time_], e.time_us, clock)) bad("bad time '" + quoted(f[col_time_]) + "'");
      if (clock) {  // RMM's clock time: unwrap past midnight
        constexpr std::uint64_t kDay = 86400ull * 1000000, kHalfDay = kDay / 2;
        if (e.time_us + kHalfDay < last_clock_us_) clock_base_us_ += kDay;
        last_clock_us_ = e.time_us;
        e.time_us += clock_base_us_;
      }
    }
    // RMM (clock time) writes pointers and streams in hex, "0x" or not.
    auto id = [&](const std::string& s, std::uint64_t& v) { return clock ? parse_hex(s, v) : parse_u64(s, v); };
    if (!id(f[col_ptr_], e.ptr)) bad("bad pointer '" + quoted(f[col_ptr_]) + "'");
    if (!parse_u64(f[col_size_], e.size)) bad("bad size '" + quoted(f[col_size_]) + "'");
    if (col_stream_ >= 0 && !id(f[col_stream_], e.stream)) bad("bad stream '" + quoted(f[col_stream_]) + "'");
    if (col_thread_ >= 0 && !parse_u64(f[col_thread_], e.thread)) bad("bad thread '" + quoted(f[col_thread_]) + "'");
    return true;
  }
}

double Reader::progress() const {
  if (!file_size_) return 0;
  double p = static_cast<double>(gzoffset(static_cast<gzFile>(gz_))) / static_cast<double>(file_size_);
  return p > 1 ? 1 : p;
}

Writer::Writer(const std::string& path) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  // O_NOFOLLOW: a symbolic link planted at the path is refused, not followed;
  // O_NONBLOCK: a FIFO without a reader fails instead of blocking.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    const int e = errno;
    throw_error(Errc::invalid_argument, "cannot write trace '" + path + "': " +
                                            (e == ELOOP ? std::string("it is a symbolic link (refused)") : std::strerror(e)));
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(fd);
    throw_error(Errc::invalid_argument, "cannot write trace '" + path + "': not a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(st.st_mode) && (st.st_mode & 077) && st.st_uid == ::geteuid()) ::fchmod(fd, 0600);
  if (gz) gz_ = gzdopen(fd, "wb");
  else file_ = ::fdopen(fd, "w");
  if (!gz_ && !file_) {
    const int e = errno;
    ::close(fd);
    throw_error(Errc::invalid_argument, "cannot write trace '" + path + "': " + std::strerror(e));
  }
  static const char header[] = "Thread,Time,Action,Pointer,Size,Stream\n";
  if (gz_) {
    if (gzwrite(static_cast<gzFile>(gz_), header, sizeof header - 1) != static_cast<int>(sizeof header - 1)) fail("write");
  } else if (std::fwrite(header, 1, sizeof header - 1, static_cast<FILE*>(file_)) != sizeof header - 1) {
    fail("write");
  }
}

Writer::~Writer() { close(); }

bool Writer::fail(const char* what) {
  if (!failed_) {
    failed_ = true;
    const int e = errno;
    error_ = std::string(what) + ": " + (e ? std::strerror(e) : "error");
    if (gz_) {
      int zerr = 0;
      const char* zmsg = gzerror(static_cast<gzFile>(gz_), &zerr);
      if (zerr != Z_OK && !e) error_ = std::string(what) + ": " + zmsg;
    }
  }
  return false;
}

bool Writer::write(const Event& e) {
  if (failed_ || (!gz_ && !file_)) return false;
  char line[160];
  const int n = std::snprintf(line, sizeof line, "%llu,%llu,%s,0x%llx,%llu,%llu\n",
                              static_cast<unsigned long long>(e.thread), static_cast<unsigned long long>(e.time_us),
                              action_name(e.action), static_cast<unsigned long long>(e.ptr),
                              static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(e.stream));
  if (n <= 0 || n >= static_cast<int>(sizeof line)) return fail("format");
  errno = 0;
  if (gz_) {
    if (gzwrite(static_cast<gzFile>(gz_), line, static_cast<unsigned>(n)) != n) return fail("write");
  } else if (std::fwrite(line, 1, static_cast<std::size_t>(n), static_cast<FILE*>(file_)) != static_cast<std::size_t>(n)) {
    return fail("write");
  }
  return true;
}

bool Writer::flush() {
  if (failed_ || (!gz_ && !file_)) return false;
  errno = 0;
  if (gz_) {
    if (gzflush(static_cast<gzFile>(gz_), Z_SYNC_FLUSH) != Z_OK) return fail("flush");
  } else if (std::fflush(static_cast<FILE*>(file_)) != 0) {
    return fail("flush");
  }
  return true;
}

bool Writer::close() {
  errno = 0;
  if (gz_) {
    const int r = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    if (r != Z_OK) {
      if (!failed_) {
        failed_ = true;
        error_ = std::string("close: ") + (errno ? std::strerror(errno) : "error");
      }
      return false;
    }
  }
  if (file_) {
    const int r = std::fclose(static_cast<FILE*>(file_));
    file_ = nullptr;
    if (r != 0) {
      if (!failed_) {
        failed_ = true;
        error_ = std::string("close: ") + std::strerror(errno);
      }
      return false;
    }
  }
  return !failed_;
}

}  // namespace memlake::trace
