// Who may do what with the memory daemon (`memlake daemon --policy FILE`).
//
//   # comment
//   allow WHO RIGHT[,RIGHT...]   publish | attach | pool | status | all
//   quota WHO MIN MAX            pool bytes: guaranteed minimum, burst maximum (K/M/G/T)
//
// WHO is uid:N, user:NAME, gid:N, group:NAME (the peer's primary group, as
// SO_PEERCRED reports it) or * (anyone). Rules add up; the last matching
// quota line wins. The daemon's own user and root may do everything; with no
// policy file nobody else may do anything. `status` lets a peer see every
// client and buffer; without it a peer sees only its own. A file larger than
// 64 KiB, a line over 512 bytes or more than 1024 rules is refused, as is
// anything malformed, with the line number.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace memlake::daemon {

enum Right : unsigned { kPublish = 1, kAttach = 2, kPool = 4, kStatus = 8, kAll = 15 };

struct Quota {
  std::uint64_t min = 0;
  std::uint64_t max = UINT64_MAX;  // capped by the pool
};

class Policy {
 public:
  Policy() = default;  // nobody but the daemon's user and root
  static Policy parse(const std::string& text);  // throws Errc::invalid_argument "policy line N: ..."
  static Policy load(const std::string& path);

  unsigned rights(uid_t uid, gid_t gid) const;
  Quota quota(uid_t uid, gid_t gid) const;
  std::size_t rules() const { return rules_.size(); }
  static std::string rights_str(unsigned r);

 private:
  struct Who {
    enum Kind { any, uid, gid } kind = any;
    std::uint32_t id = 0;
    bool matches(uid_t u, gid_t g) const;
  };
  struct Rule {
    Who who;
    unsigned rights = 0;
    bool is_quota = false;
    Quota quota;
  };
  std::vector<Rule> rules_;
};

}  // namespace memlake::daemon
