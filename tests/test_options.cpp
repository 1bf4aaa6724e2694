#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/options.h"
#include "support.h"

namespace memlake::test {
namespace {

TEST(Options, ParseSize) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("2M"), 2u << 20);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_EQ(parse_size("1.5g"), 3u << 29);
  EXPECT_EQ(parse_size("24 GB"), std::size_t{24} << 30);
  EXPECT_EQ(error_of([] { parse_size("lots"); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([] { parse_size("3X"); }), Errc::invalid_argument);
}

TEST(Options, EnvironmentIsReadThroughTheTable) {
  ::setenv("MEMLAKE_MEMORY_CAP", "8G", 1);
  ::setenv("MEMLAKE_STITCH", "off", 1);
  Options o = Options::from_env();
  EXPECT_EQ(o.memory_cap, std::size_t{8} << 30);
  EXPECT_FALSE(o.stitch);
  ::setenv("MEMLAKE_SMALL_MAX", "huge", 1);
  std::string msg;
  EXPECT_EQ(error_of([] { Options::from_env(); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("MEMLAKE_SMALL_MAX"), std::string::npos) << msg;
  ::unsetenv("MEMLAKE_MEMORY_CAP");
  ::unsetenv("MEMLAKE_STITCH");
  ::unsetenv("MEMLAKE_SMALL_MAX");
}

TEST(Options, FailedSetLeavesOptionsUnchanged) {
  Options o;
  EXPECT_EQ(error_of([&] { o.set("max_mapped_ratio", "0.5"); }), Errc::invalid_argument);
  EXPECT_EQ(o.max_mapped_ratio, 2.0);
}

TEST(Options, EveryOptionIsDocumentedInTheReadme) {
  std::ifstream f(MEMLAKE_SOURCE_DIR "/README.md");
  ASSERT_TRUE(f) << "README.md not found";
  std::stringstream ss;
  ss << f.rdbuf();
  for (const auto& o : option_table()) {
    EXPECT_NE(ss.str().find(o.env), std::string::npos) << o.env << " missing from README.md";
    EXPECT_NE(ss.str().find(std::string("`") + o.key + "`"), std::string::npos) << o.key << " missing from README.md";
  }
}

TEST(Options, SmallMaxMustBeBelowThePage) {
  Options o;
  o.backend = "host";
  o.small_max = 2 << 20;
  std::string msg;
  EXPECT_EQ(error_of([&] { core::DeviceAllocator d(0, o); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("small_max"), std::string::npos);
}

}  // namespace
}  // namespace memlake::test
