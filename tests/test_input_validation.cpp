// Bad input ends in a clear error, never in undefined behaviour: option
// values, described topologies, memlake_copy's arguments.
#include <cstdint>
#include <vector>

#include "core/options.h"
#include "io/planner.h"
#include "memlake/memlake.h"
#include "support.h"

namespace memlake::test {
namespace {

TEST(OptionInput, MalformedSizesAreRejectedNamingTheKey) {
  // "." parsed as 0 (no cap); "9999999T" overflowed llround; "1.2.3" lost its tail.
  for (const char* v : {".", "..", "1.2.3", "9999999T", "1e3", "-1", " 5", "", "99999999999999999999"}) {
    Options o;
    std::string msg;
    EXPECT_EQ(error_of([&] { o.set("memory_cap", v); }, &msg), Errc::invalid_argument) << "'" << v << "'";
    EXPECT_NE(msg.find("option memory_cap: "), std::string::npos) << msg;
    EXPECT_EQ(o.memory_cap, 0u) << "unchanged";
  }
  std::string msg;
  ::setenv("MEMLAKE_SMALL_MAX", ".", 1);
  EXPECT_EQ(error_of([] { Options::from_env(); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("MEMLAKE_SMALL_MAX"), std::string::npos) << msg;
  ::unsetenv("MEMLAKE_SMALL_MAX");
  EXPECT_EQ(parse_size("8192T"), std::size_t{8192} << 40);
  EXPECT_EQ(parse_size(".5K"), 512u);
  EXPECT_EQ(parse_size("8388608T"), std::size_t{1} << 63);  // the largest accepted
  EXPECT_EQ(error_of([] { parse_size("8388609T"); }), Errc::invalid_argument);
}

TEST(OptionInput, CountsRejectOverflowAndSigns) {
  Options o;
  EXPECT_EQ(error_of([&] { o.set("quarantine", "99999999999999999999999"); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { o.set("quarantine", "+5"); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { o.set("quarantine", " 5"); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { o.set("copy_threads", "99999999999999999999999"); }), Errc::invalid_argument);
  EXPECT_EQ(o.quarantine, 0u);
  o.set("quarantine", "7");
  EXPECT_EQ(o.quarantine, 7u);
}

TEST(TopologyInput, HugeOrNonFiniteNumbersAreErrorsNotUndefinedBehaviour) {
  // planner.cpp converted a GPU index to int before comparing it with the count:
  // undefined for 1e300 (UBSan: "outside the range of representable values").
  for (const char* t : {"gpus 2; pcie 24; nvlink 1e300 0 50", "gpus 2; pcie 24; pcie gpu 1e30 12",
                        "gpus 2; pcie inf", "gpus 2; pcie 24; nvlink all nan", "gpus 2; pcie 24; group 0 1e20",
                        "gpus 1e300", "gpus 2; pcie 1e300", "gpus 2; pcie 24; nvlink -0.5 1 3"}) {
    std::string msg;
    EXPECT_EQ(error_of([&] { io::Topology::parse(t); }, &msg), Errc::invalid_argument) << t;
    EXPECT_NE(msg.find("topology line"), std::string::npos) << msg;
  }
}

struct HostAllocator {
  memlake_options* o = nullptr;
  memlake_allocator* a = nullptr;
  HostAllocator() {
    memlake_options_create(&o, 0);
    memlake_options_set(o, "backend", "host");
    memlake_create(o, &a);
  }
  ~HostAllocator() {
    memlake_destroy(a);
    memlake_options_destroy(o);
  }
};

TEST(CopyInput, LengthsAndPointersAreChecked) {
  HostAllocator h;
  ASSERT_NE(h.a, nullptr) << memlake_last_error();
  void* dev = nullptr;
  ASSERT_EQ(memlake_alloc(h.a, 1 << 20, 0, nullptr, &dev), MEMLAKE_OK);
  std::vector<unsigned char> host(1 << 20, 7);
  // SIZE_MAX (Python's copy(..., -1) through ctypes) ran off both ends.
  EXPECT_EQ(memlake_copy(h.a, dev, host.data(), SIZE_MAX, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("wrap around"), std::string::npos) << memlake_last_error();
  // Past the end of device memory: refused before a byte moves.
  EXPECT_EQ(memlake_copy(h.a, host.data(), dev, std::size_t{1} << 36, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("run past device memory"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_copy(h.a, dev, host.data(), 16, -1, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_copy(h.a, nullptr, host.data(), 16, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_copy(h.a, dev, host.data(), 0, 0, nullptr), MEMLAKE_OK) << "nothing to copy";
  // And a valid copy still works.
  ASSERT_EQ(memlake_copy(h.a, dev, host.data(), host.size(), 0, nullptr), MEMLAKE_OK) << memlake_last_error();
  std::vector<unsigned char> back(host.size(), 0);
  ASSERT_EQ(memlake_copy(h.a, back.data(), dev, back.size(), 0, nullptr), MEMLAKE_OK) << memlake_last_error();
  EXPECT_EQ(back, host);
  EXPECT_EQ(memlake_free(h.a, dev, 0, nullptr), MEMLAKE_OK);
}

}  // namespace
}  // namespace memlake::test
