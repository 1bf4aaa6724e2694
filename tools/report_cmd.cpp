// memlake report TRACE [-o FILE]: replay an allocation log and write one
// self-contained HTML page with plots (native vs memlake) and a summary.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "replay_args.h"
#include "core/error.h"
#include "core/options.h"
#include "report/report.h"
#include "trace/replay.h"

namespace memlake::cli {
namespace {

struct ReportArgs {
  std::string path, output, x = "events";
  AllocatorArgs alloc;
  int points = 2000;
};

// TRACE's file name without its directory and its trace extensions, + ".html".
std::string default_output(const std::string& trace) {
  std::string base = trace.substr(trace.find_last_of('/') == std::string::npos ? 0 : trace.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".csv"})
    if (base.size() > std::strlen(ext) && base.compare(base.size() - std::strlen(ext), std::string::npos, ext) == 0)
      base.resize(base.size() - std::strlen(ext));
  return (base.empty() ? std::string("trace") : base) + ".html";
}

// Writes text to path (created 0644, truncated); a symbolic link there is refused.
void write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    throw_error(Errc::invalid_argument, "cannot write '" + path + "': " +
                                            (err == ELOOP ? std::string("a symbolic link (refused)") : std::strerror(err)));
  }
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw_error(Errc::driver, "cannot write '" + path + "': " + std::strerror(err));
    }
    at += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw_error(Errc::driver, "cannot write '" + path + "': " + std::strerror(errno));
}

int run_report(const ReportArgs& a) {
  trace::ReplayConfig cfg;
  report::PageOptions page;
  try {
    cfg.options = allocator_options(a.alloc);
  } catch (const Error& e) {
    return usage_error(e.what());
  }
  if (a.x != "events" && a.x != "time") return usage_error("--x expects events or time, got '" + a.x + "'");
  page.x = a.x == "time" ? report::XAxis::time : report::XAxis::events;
  if (a.points < 16 || a.points > 100000)
    return usage_error("--points expects 16 to 100000, got '" + std::to_string(a.points) + "'");
  cfg.timeline_buckets = static_cast<std::size_t>(a.points) / 2;  // each bucket: its low and its high
  if (isatty(2)) cfg.progress = print_replay_progress;
  const std::string out = a.output.empty() ? default_output(a.path) : a.output;
  try {
    const trace::ReplayResult r = trace::replay(a.path, cfg);
    write_file(out, report::html_page(r, page));
    std::printf("report: %s (%llu events; peak reserved %s native, %s memlake)\n", out.c_str(),
                static_cast<unsigned long long>(r.events),
                r.native_peak_reserved ? human_bytes(r.native_peak_reserved).c_str() : "-",
                human_bytes(r.stats.reserved.peak).c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake report: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
}

Action setup_report(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report", "replay an allocation log and write an HTML page: live and reserved bytes, native vs memlake");
  auto a = std::make_shared<ReportArgs>();
  sub->add_option("TRACE", a->path, "the allocation log (.csv or .csv.gz), as for `memlake replay`")->required();
  sub->add_option("-o,--output", a->output,
                  "FILE: the page (default: TRACE's name without .csv/.gz, + .html, in the current directory; "
                  "a symbolic link there is refused)");
  sub->add_option("--x", a->x, "the plots' x axis: events or time (the trace's timestamps) (default events)");
  sub->add_option("--points", a->points,
                  "at most this many points per line (default 2000): each line passes through the lowest and "
                  "highest value of every stretch of events");
  add_allocator_options(sub, a->alloc);
  return [a] { return run_report(*a); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(12, setup_report);

}  // namespace memlake::cli
