#include "trace/trace.h"

#include <sys/stat.h>

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
constexpr int Z_OK = 0, Z_BUF_ERROR = -5;
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
int gzputs(gzFile f, const char* s) { return std::fputs(s, f); }
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

}  // namespace

const char* action_name(Action a) {
  switch (a) {
    case Action::allocate: return "allocate";
    case Action::free: return "free";
    case Action::segment_alloc: return "segment_alloc";
    case Action::segment_free: return "segment_free";
  }
  return "?";
}

Reader::Reader(const std::string& path) : path_(path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    throw_error(Errc::invalid_argument, "cannot open trace '" + path + "': " + std::strerror(errno));
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  gz_ = gzopen(path.c_str(), "rb");
  if (!gz_) throw_error(Errc::invalid_argument, "cannot open trace '" + path + "'");
  gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
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
    throw_error(Errc::invalid_argument, path_ + ":1: header '" + header +
                                            "' lacks a required column (need Action, Pointer, Size; "
                                            "expected Thread,Time,Action,Pointer,Size,Stream)");
}

Reader::~Reader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

bool Reader::read_line(std::string& out) {
  out.clear();
  char chunk[512];
  for (;;) {
    if (!gzgets(static_cast<gzFile>(gz_), chunk, sizeof chunk)) {
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      if (err != Z_OK && err != Z_BUF_ERROR)
        throw_error(Errc::invalid_argument, path_ + ":" + std::to_string(line_ + 1) + ": cannot read: " + msg);
      if (out.empty()) return false;
      break;
    }
    out += chunk;
    if (!out.empty() && out.back() == '\n') break;
  }
  ++line_;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return true;
}

bool Reader::next(Event& e) {
  for (;;) {
    if (!read_line(buf_)) return false;
    if (buf_.empty()) continue;  // blank lines are harmless
    auto f = split(buf_);
    auto bad = [&](const std::string& what) {
      throw_error(Errc::invalid_argument, path_ + ":" + std::to_string(line_) + ": " + what + " in line '" + buf_ + "'");
    };
    if (static_cast<int>(f.size()) != ncols_)
      bad("expected " + std::to_string(ncols_) + " fields, found " + std::to_string(f.size()));
    const std::string& a = f[col_action_];
    if (a == "allocate") e.action = Action::allocate;
    else if (a == "free") e.action = Action::free;
    else if (a == "segment_alloc") e.action = Action::segment_alloc;
    else if (a == "segment_free") e.action = Action::segment_free;
    else bad("unknown action '" + a + "'");
    if (!parse_u64(f[col_ptr_], e.ptr)) bad("bad pointer '" + f[col_ptr_] + "'");
    if (!parse_u64(f[col_size_], e.size)) bad("bad size '" + f[col_size_] + "'");
    e.time_us = e.stream = e.thread = 0;
    if (col_time_ >= 0 && !parse_u64(f[col_time_], e.time_us)) bad("bad time '" + f[col_time_] + "'");
    if (col_stream_ >= 0 && !parse_u64(f[col_stream_], e.stream)) bad("bad stream '" + f[col_stream_] + "'");
    if (col_thread_ >= 0 && !parse_u64(f[col_thread_], e.thread)) bad("bad thread '" + f[col_thread_] + "'");
    return true;
  }
}

double Reader::progress() const {
  if (!file_size_) return 0;
  double p = static_cast<double>(gzoffset(static_cast<gzFile>(gz_))) / static_cast<double>(file_size_);
  return p > 1 ? 1 : p;
}

Writer::Writer(const std::string& path) {
  bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (gz)
    gz_ = gzopen(path.c_str(), "wb");
  else
    file_ = std::fopen(path.c_str(), "w");
  if (!gz_ && !file_) throw_error(Errc::invalid_argument, "cannot write trace '" + path + "': " + std::strerror(errno));
  const char* header = "Thread,Time,Action,Pointer,Size,Stream\n";
  if (gz_) gzputs(static_cast<gzFile>(gz_), header);
  else std::fputs(header, static_cast<FILE*>(file_));
}

Writer::~Writer() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  if (file_) std::fclose(static_cast<FILE*>(file_));
}

void Writer::write(const Event& e) {
  char line[160];
  std::snprintf(line, sizeof line, "%llu,%llu,%s,0x%llx,%llu,%llu\n", static_cast<unsigned long long>(e.thread),
                static_cast<unsigned long long>(e.time_us), action_name(e.action),
                static_cast<unsigned long long>(e.ptr), static_cast<unsigned long long>(e.size),
                static_cast<unsigned long long>(e.stream));
  if (gz_) gzputs(static_cast<gzFile>(gz_), line);
  else std::fputs(line, static_cast<FILE*>(file_));
}

}  // namespace memlake::trace
