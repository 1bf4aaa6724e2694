// Error taxonomy shared by every layer of memlake.
//
// Four kinds of failure are kept apart because callers react to them
// differently:
//   OutOfMemory     - the request is valid but cannot be satisfied (cap, device
//                     full). Callers may free memory and retry.
//   InvalidArgument - the caller misused the API (double free, foreign pointer,
//                     absurd size, malformed trace line). A bug in the caller.
//   Driver          - the backend (CUDA driver or host kernel) failed. Carries
//                     the driver's error name.
//   Unavailable     - the backend cannot be used on this machine (no libcuda,
//                     no device, built without CUDA headers).
// Every error leaves the structure that threw it consistent: nothing already
// allocated is lost or corrupted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace memlake {

enum class Errc : int {
  ok = 0,
  out_of_memory = 1,
  invalid_argument = 2,
  driver = 3,
  unavailable = 4,
  internal = 5,
};

const char* errc_name(Errc c) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

[[noreturn]] void throw_error(Errc code, const std::string& what);

// "1.50 GiB (1610612736 bytes)": sizes in messages always carry the exact count.
std::string format_bytes(std::uint64_t bytes);
// "1.50 GiB": short form for tables.
std::string human_bytes(std::uint64_t bytes);
std::string hex_ptr(std::uintptr_t p);
// printf-style append (no iostreams: this code runs inside host processes).
void appendf(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// v with `decimals` digits after a '.', whatever the process's LC_NUMERIC
// (printf's %f writes "0,75" under de_DE): for JSON and machine-read text.
std::string fixed(double v, int decimals);

}  // namespace memlake
