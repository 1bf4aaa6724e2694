#include "daemon/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace memlake::daemon {
namespace {

void put16(std::string& o, std::uint16_t v) {
  for (int i = 0; i < 2; ++i) o += static_cast<char>(v >> (8 * i));
}
void put32(std::string& o, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) o += static_cast<char>(v >> (8 * i));
}
void put64(std::string& o, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) o += static_cast<char>(v >> (8 * i));
}

struct Reader {
  const std::uint8_t* p;
  std::size_t n, at = 0;
  std::uint64_t get(int bytes) {
    if (n - at < static_cast<std::size_t>(bytes)) bad("truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[at + i]) << (8 * i);
    at += static_cast<std::size_t>(bytes);
    return v;
  }
  std::string bytes(std::size_t len) {
    if (n - at < len) bad("truncated");
    std::string s(reinterpret_cast<const char*>(p + at), len);
    at += len;
    return s;
  }
  [[noreturn]] static void bad(const std::string& why) {
    throw_error(Errc::invalid_argument, "malformed daemon message: " + why);
  }
};

bool known(std::uint16_t t) {
  return (t >= 1 && t <= 9) || (t >= 100 && t <= 107);
}

}  // namespace

const char* type_name(Type t) {
  switch (t) {
    case Type::hello: return "hello";
    case Type::publish: return "publish";
    case Type::seal: return "seal";
    case Type::attach: return "attach";
    case Type::detach: return "detach";
    case Type::alloc: return "alloc";
    case Type::free: return "free";
    case Type::status: return "status";
    case Type::listen: return "listen";
    case Type::ok: return "ok";
    case Type::shared: return "shared";
    case Type::create: return "create";
    case Type::busy: return "busy";
    case Type::error: return "error";
    case Type::page: return "page";
    case Type::fds: return "fds";
    case Type::trim: return "trim";
  }
  return "?";
}

bool is_request(Type t) { return static_cast<std::uint16_t>(t) < 100; }

std::string encode(const Msg& m) {
  if (!m.id.empty() && m.id.size() != 32) throw_error(Errc::invalid_argument, "daemon message: an id is 32 bytes");
  if (m.text.size() > kMaxStatusText) throw_error(Errc::invalid_argument, "daemon message: text too long");
  std::string o;
  const std::size_t payload = 24 + 1 + m.id.size() + 2 + m.text.size();
  o.reserve(kHeaderBytes + payload);
  put32(o, kMagic);
  put16(o, kVersion);
  put16(o, static_cast<std::uint16_t>(m.type));
  put32(o, m.seq);
  put32(o, static_cast<std::uint32_t>(payload));
  put32(o, 0);  // reserved
  put64(o, m.a);
  put64(o, m.b);
  put64(o, m.c);
  o += static_cast<char>(m.id.size());
  o += m.id;
  put16(o, static_cast<std::uint16_t>(m.text.size()));
  o += m.text;
  return o;
}

Msg decode(const void* data, std::size_t n, std::size_t max_text) {
  Reader r{static_cast<const std::uint8_t*>(data), n};
  if (n < kHeaderBytes) Reader::bad("shorter than a header (" + std::to_string(n) + " bytes)");
  if (r.get(4) != kMagic) Reader::bad("bad magic (not a memlake daemon peer)");
  const auto version = r.get(2);
  if (version != kVersion)
    Reader::bad("protocol version " + std::to_string(version) + ", this side speaks " + std::to_string(kVersion));
  const auto type = static_cast<std::uint16_t>(r.get(2));
  if (!known(type)) Reader::bad("unknown message type " + std::to_string(type));
  Msg m;
  m.type = static_cast<Type>(type);
  m.seq = static_cast<std::uint32_t>(r.get(4));
  const auto payload = r.get(4);
  if (r.get(4) != 0) Reader::bad("reserved header field not zero");
  if (payload != n - kHeaderBytes)
    Reader::bad("payload length " + std::to_string(payload) + " but " + std::to_string(n - kHeaderBytes) + " bytes follow");
  m.a = r.get(8);
  m.b = r.get(8);
  m.c = r.get(8);
  const auto id_len = r.get(1);
  if (id_len != 0 && id_len != 32) Reader::bad("content id of " + std::to_string(id_len) + " bytes (0 or 32)");
  m.id = r.bytes(id_len);
  const auto text_len = r.get(2);
  if (text_len > max_text) Reader::bad("text of " + std::to_string(text_len) + " bytes (at most " + std::to_string(max_text) + ")");
  m.text = r.bytes(text_len);
  if (r.at != n) Reader::bad(std::to_string(n - r.at) + " trailing bytes");
  return m;
}

void close_fds(std::vector<int>& fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  fds.clear();
}

bool send_msg(int sock, const Msg& m) {
  if (m.fds.size() > static_cast<std::size_t>(kMaxFdsPerPacket))
    throw_error(Errc::invalid_argument, "daemon message: too many descriptors in one packet");
  const std::string bytes = encode(m);
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr h{};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * kMaxFdsPerPacket)];
  if (!m.fds.empty()) {
    const std::size_t len = sizeof(int) * m.fds.size();
    h.msg_control = ctl;
    h.msg_controllen = CMSG_SPACE(len);
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(len);
    std::memcpy(CMSG_DATA(c), m.fds.data(), len);
  }
  for (;;) {
    const ssize_t n = ::sendmsg(sock, &h, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(bytes.size())) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool recv_msg(int sock, Msg* m, std::size_t max_packet, int timeout_ms, std::size_t max_text) {
  if (timeout_ms >= 0) {
    pollfd p{sock, POLLIN, 0};
    int r;
    while ((r = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    if (r == 0) throw_error(Errc::unavailable, "memlake daemon: no answer within " + std::to_string(timeout_ms) + " ms");
  }
  std::string buf(max_packet + 1, '\0');
  iovec iov{buf.data(), buf.size()};
  msghdr h{};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * kMaxFdsPerPacket)];
  h.msg_control = ctl;
  h.msg_controllen = sizeof ctl;
  ssize_t n;
  while ((n = ::recvmsg(sock, &h, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  if (n < 0) {
    close_fds(fds);
    if (errno == ECONNRESET) return false;
    throw_error(Errc::unavailable, std::string("memlake daemon connection: ") + std::strerror(errno));
  }
  if (n == 0) {
    close_fds(fds);
    return false;
  }
  if ((h.msg_flags & MSG_TRUNC) || static_cast<std::size_t>(n) > max_packet) {
    close_fds(fds);
    throw_error(Errc::invalid_argument, "malformed daemon message: larger than " + std::to_string(max_packet) + " bytes");
  }
  if (h.msg_flags & MSG_CTRUNC) {
    close_fds(fds);
    throw_error(Errc::invalid_argument, "malformed daemon message: more descriptors than a packet may carry");
  }
  try {
    *m = decode(buf.data(), static_cast<std::size_t>(n), max_text);
  } catch (...) {
    close_fds(fds);
    throw;
  }
  m->fds = std::move(fds);
  return true;
}

}  // namespace memlake::daemon
