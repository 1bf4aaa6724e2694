// The memory daemon's wire protocol (memlaked, docs/design/daemon.md).
//
// One SOCK_SEQPACKET message per packet: a 20-byte header (magic "MLKD",
// version, type, sequence number, payload length), then three 64-bit
// numbers, a content id of 0 or 32 bytes and a text of at most kMaxText
// bytes (kMaxStatusText in a daemon's status reply). File descriptors
// (shared memory) travel with SCM_RIGHTS, at most kMaxFdsPerPacket per
// packet; a reply carrying more sends the rest in `fds` packets. Everything
// is little-endian. decode() rejects anything that is not exactly one
// well-formed message with Errc::invalid_argument and a reason; it is the
// function the protocol fuzzer exercises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memlake::daemon {

constexpr std::uint32_t kMagic = 0x444b4c4d;  // "MLKD"
constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 20;
constexpr std::size_t kMaxText = 1024;
constexpr std::size_t kMaxRequest = 2048;  // a client's packet, whole
constexpr std::size_t kMaxStatusText = 60000;
constexpr std::size_t kMaxReplyPacket = 65536;
constexpr int kMaxFdsPerPacket = 64;
constexpr std::uint64_t kMaxChunks = 4096;  // chunks of one shared buffer

enum class Type : std::uint16_t {
  // client -> daemon
  hello = 1,      // a = guaranteed bytes asked (0: the policy's), b = burst bytes asked (0: the policy's), c = flags, text = name
  publish = 2,    // id, a = bytes: `shared` (already published), `create` (fill, then seal) or `busy`
  seal = 3,       // id: the buffer this client filled is complete and read-only from now on
  attach = 4,     // id (a = 1: the filler re-maps after seal, no new hold) -> `shared`, or an error when nothing is published under it
  detach = 5,     // id
  alloc = 6,      // a = bytes -> `page` (a = page id, b = bytes, one fd), or error (out of memory)
  free = 7,       // a = page id
  status = 8,     // a = 1: a text table, else JSON -> `ok` with text (what the policy lets this peer see)
  listen = 9,     // this connection carries the daemon's `trim` requests for client a (token b)
  // daemon -> client
  ok = 100,       // hello: a = granularity, b = client id, c = token; text = backend name
  shared = 101,   // a = bytes, b = chunk bytes, c = chunks; fds (read-only), more in `fds` packets
  create = 102,   // as shared, fds writable: fill, then seal
  busy = 103,     // another client is filling this id: ask again later
  error = 104,    // a = errc (memlake::Errc), text = why
  page = 105,     // a = page id, b = bytes, one fd (read-write)
  fds = 106,      // more descriptors of the reply before it
  trim = 107,     // daemon -> listener: give back cached pages, a = bytes wanted
};

constexpr std::uint64_t kHelloListener = 1;  // hello flag: none yet (reserved)

struct Msg {
  Type type = Type::error;
  std::uint32_t seq = 0;
  std::uint64_t a = 0, b = 0, c = 0;
  std::string id;    // 0 or 32 bytes
  std::string text;  // bounded
  std::vector<int> fds;  // received with it / to send with it (not encoded)
};

const char* type_name(Type t);
bool is_request(Type t);
std::string encode(const Msg& m);
// `max_text`: kMaxText for requests, kMaxStatusText for a daemon's replies.
Msg decode(const void* data, std::size_t n, std::size_t max_text = kMaxText);

// Sends one packet with its descriptors (at most kMaxFdsPerPacket). False on
// a closed or broken connection; throws on misuse.
bool send_msg(int sock, const Msg& m);
// Receives one packet (blocking up to timeout_ms, -1: forever). Returns false
// when the peer closed the connection. Throws Errc::invalid_argument for an
// oversized or malformed packet (its descriptors closed), Errc::unavailable
// on a timeout. Descriptors received are close-on-exec and owned by m.fds.
bool recv_msg(int sock, Msg* m, std::size_t max_packet, int timeout_ms, std::size_t max_text = kMaxText);
void close_fds(std::vector<int>& fds);

}  // namespace memlake::daemon
