#include "daemon/policy.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/options.h"

namespace memlake::daemon {
namespace {

constexpr std::size_t kMaxFile = 64 << 10, kMaxLine = 512, kMaxRules = 1024;

[[noreturn]] void bad(int line, const std::string& why) {
  throw_error(Errc::invalid_argument, "policy line " + std::to_string(line) + ": " + why);
}

std::uint32_t number(int line, const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || v > 0xfffffffeUL || s[0] == '-') bad(line, std::string("bad ") + what + " '" + s + "'");
  return static_cast<std::uint32_t>(v);
}

}  // namespace

bool Policy::Who::matches(uid_t u, gid_t g) const {
  switch (kind) {
    case any: return true;
    case uid: return u == id;
    case gid: return g == id;
  }
  return false;
}

Policy Policy::parse(const std::string& text) {
  if (text.size() > kMaxFile) throw_error(Errc::invalid_argument, "policy: larger than 64 KiB");
  Policy p;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (raw.size() > kMaxLine) bad(line, "longer than 512 bytes");
    const std::size_t hash = raw.find('#');
    if (hash != std::string::npos) raw.resize(hash);
    std::istringstream words(raw);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    if (p.rules_.size() >= kMaxRules) bad(line, "more than 1024 rules");
    if (w[0] != "allow" && w[0] != "quota") bad(line, "expected 'allow' or 'quota', got '" + w[0] + "'");
    if (w.size() < 2) bad(line, "missing who (uid:N, user:NAME, gid:N, group:NAME or *)");
    Rule r;
    const std::string& who = w[1];
    if (who == "*") {
      r.who.kind = Who::any;
    } else if (who.rfind("uid:", 0) == 0) {
      r.who = {Who::uid, number(line, who.substr(4), "uid")};
    } else if (who.rfind("gid:", 0) == 0) {
      r.who = {Who::gid, number(line, who.substr(4), "gid")};
    } else if (who.rfind("user:", 0) == 0) {
      passwd pw{}, *res = nullptr;
      char buf[4096];
      if (getpwnam_r(who.c_str() + 5, &pw, buf, sizeof buf, &res) != 0 || !res) bad(line, "no user '" + who.substr(5) + "'");
      r.who = {Who::uid, static_cast<std::uint32_t>(pw.pw_uid)};
    } else if (who.rfind("group:", 0) == 0) {
      group gr{}, *res = nullptr;
      char buf[4096];
      if (getgrnam_r(who.c_str() + 6, &gr, buf, sizeof buf, &res) != 0 || !res) bad(line, "no group '" + who.substr(6) + "'");
      r.who = {Who::gid, static_cast<std::uint32_t>(gr.gr_gid)};
    } else {
      bad(line, "bad who '" + who + "' (uid:N, user:NAME, gid:N, group:NAME or *)");
    }
    if (w[0] == "allow") {
      if (w.size() != 3) bad(line, "expected: allow WHO RIGHT[,RIGHT...]");
      std::istringstream rs(w[2]);
      for (std::string right; std::getline(rs, right, ',');) {
        if (right == "publish") r.rights |= kPublish;
        else if (right == "attach") r.rights |= kAttach;
        else if (right == "pool") r.rights |= kPool;
        else if (right == "status") r.rights |= kStatus;
        else if (right == "all") r.rights |= kAll;
        else bad(line, "unknown right '" + right + "' (publish, attach, pool, status, all)");
      }
    } else {
      if (w.size() != 4) bad(line, "expected: quota WHO MIN MAX");
      r.is_quota = true;
      try {
        r.quota.min = parse_size(w[2]);
        r.quota.max = parse_size(w[3]);
      } catch (const Error& e) {
        bad(line, e.what());
      }
      if (r.quota.min > r.quota.max) bad(line, "minimum above maximum");
    }
    p.rules_.push_back(r);
  }
  return p;
}

Policy Policy::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(Errc::invalid_argument, "cannot read the policy file " + path);
  std::string text(kMaxFile + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  try {
    return parse(text);
  } catch (const Error& e) {
    throw_error(Errc::invalid_argument, path + ": " + e.what());
  }
}

unsigned Policy::rights(uid_t uid, gid_t gid) const {
  if (uid == 0 || uid == ::geteuid()) return kAll;
  unsigned r = 0;
  for (const Rule& rule : rules_)
    if (!rule.is_quota && rule.who.matches(uid, gid)) r |= rule.rights;
  return r;
}

Quota Policy::quota(uid_t uid, gid_t gid) const {
  Quota q;
  for (const Rule& rule : rules_)
    if (rule.is_quota && rule.who.matches(uid, gid)) q = rule.quota;
  return q;
}

std::string Policy::rights_str(unsigned r) {
  std::string s;
  const char* names[] = {"publish", "attach", "pool", "status"};
  for (int i = 0; i < 4; ++i)
    if (r & (1u << i)) s += (s.empty() ? "" : ",") + std::string(names[i]);
  return s.empty() ? "none" : s;
}

}  // namespace memlake::daemon
