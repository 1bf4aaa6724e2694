// The virtual tensor (src/vt): pages mapped only where data lives, at
// addresses that never move; shared zero and sink pages; errors; faults.
// Run on both backends (the cuda instance skips without a GPU).
#include <cstring>

#include "memlake/memlake.h"
#include "prim/decorators.h"
#include "support.h"
#include "vt/virtual_tensor.h"

namespace memlake::test {
namespace {

using vt::PageState;
using vt::VirtualTensor;

class VirtualTensorTest : public BackendTest {
 protected:
  std::vector<unsigned char> bytes_at(prim::Backend& be, std::uintptr_t va, std::size_t n) {
    std::vector<unsigned char> v(n);
    be.read(v.data(), va, n);
    return v;
  }
  bool all_zero(prim::Backend& be, std::uintptr_t va, std::size_t n) {
    auto v = bytes_at(be, va, n);
    for (unsigned char c : v)
      if (c) return false;
    return true;
  }
};

TEST_P(VirtualTensorTest, FreshTensorReadsZerosAndCostsTwoPages) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 5 * pg + 1);  // rounded up to 6 pages
  EXPECT_EQ(t.pages(), 6u);
  EXPECT_EQ(t.size(), 6 * pg);
  auto s = t.stats();
  EXPECT_EQ(s.zero_pages, 6u);
  EXPECT_EQ(s.private_pages, 0u);
  EXPECT_EQ(s.physical_bytes, 2 * pg);
  EXPECT_TRUE(all_zero(*be, t.base(), 4096));
  EXPECT_TRUE(all_zero(*be, t.base() + 5 * pg + pg - 4096, 4096));
  // Writable (tools copy back what they read), one page behind every address.
  const unsigned char zero = 0;
  be->write(t.base() + 3 * pg, &zero, 1);
}

TEST_P(VirtualTensorTest, MappedPagesAreZeroedPrivateAndKeepTheirBytes) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 8 * pg);
  const std::uintptr_t base = t.base();
  t.map(2, 3);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(t.state(i), (i >= 2 && i < 5) ? PageState::priv : PageState::zero) << i;
  EXPECT_EQ(t.stats().physical_bytes, 5 * pg);
  be->synchronize_device();
  EXPECT_TRUE(all_zero(*be, base + 2 * pg, 3 * pg));
  fill(*be, reinterpret_cast<void*>(base + 2 * pg), 3 * pg, 7);
  // Mapping again (overlapping) keeps what is there, maps only the new page.
  t.map(4, 2);
  EXPECT_EQ(t.base(), base);  // addresses never move
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(base + 2 * pg), 3 * pg, 7));
  EXPECT_TRUE(all_zero(*be, base + 5 * pg, pg));
  EXPECT_EQ(t.stats().private_pages, 4u);
  EXPECT_EQ(t.stats().pages_mapped, 4u);
  // Other pages still read zeros.
  EXPECT_TRUE(all_zero(*be, base, 2 * pg));
  EXPECT_TRUE(all_zero(*be, base + 6 * pg, 2 * pg));
}

TEST_P(VirtualTensorTest, UnmapGivesMemoryBackToZeroOrSink) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 6 * pg);
  t.map(0, 6);
  fill(*be, reinterpret_cast<void*>(t.base()), 6 * pg, 3);
  t.unmap(1, 2);  // -> zero
  t.unmap(4, 2, PageState::sink);
  auto s = t.stats();
  EXPECT_EQ(s.private_pages, 2u);
  EXPECT_EQ(s.zero_pages, 2u);
  EXPECT_EQ(s.sink_pages, 2u);
  EXPECT_EQ(s.physical_bytes, 4 * pg);
  EXPECT_EQ(s.physical_peak, 8 * pg);
  EXPECT_EQ(s.pages_unmapped, 4u);
  EXPECT_TRUE(all_zero(*be, t.base() + pg, 2 * pg));
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(t.base()), pg, 3));
  // The sink page is writable and one page behind every sink address.
  const char msg[] = "sink";
  be->write(t.base() + 4 * pg + 100, msg, sizeof msg);
  char got[sizeof msg] = {};
  be->read(got, t.base() + 5 * pg + 100, sizeof msg);
  EXPECT_STREQ(got, msg);
  // Re-mapping a sink page gives a zeroed private page.
  t.map(4, 1);
  be->synchronize_device();
  EXPECT_TRUE(all_zero(*be, t.base() + 4 * pg, pg));
  // Unmapping what is already in that state changes nothing.
  const auto before = t.stats();
  t.unmap(1, 2);
  EXPECT_EQ(t.stats().syncs, before.syncs);
  if (is_host()) {
    auto* host = dynamic_cast<prim::HostBackend*>(be.get());
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(host->live_handles(), 3u + 2u);  // pages 0, 3, 4 and the two shared pages
  }
}

TEST_P(VirtualTensorTest, BytesCoverTheirPages) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 4 * pg);
  t.map_bytes(pg - 1, 2);  // straddles pages 0 and 1
  EXPECT_EQ(t.state(0), PageState::priv);
  EXPECT_EQ(t.state(1), PageState::priv);
  EXPECT_EQ(t.state(2), PageState::zero);
  t.unmap_bytes(pg, 1);
  EXPECT_EQ(t.state(1), PageState::zero);
  t.map_bytes(0, 0);  // nothing
  EXPECT_EQ(t.stats().private_pages, 1u);
}

TEST_P(VirtualTensorTest, MisuseIsInvalidArgumentAndChangesNothing) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 4 * pg);
  std::string msg;
  EXPECT_EQ(error_of([&] { t.map(3, 2); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("outside"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { t.map(5, 0); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { t.unmap(0, 9); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { t.unmap(0, 1, PageState::priv); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { t.map_bytes(4 * pg, 1); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { t.state(4); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { VirtualTensor z(*be, 0); }), Errc::invalid_argument);
  EXPECT_EQ(t.stats().private_pages, 0u);
  EXPECT_EQ(t.stats().zero_pages, 4u);
}

TEST_P(VirtualTensorTest, MemoryLimitIsOutOfMemoryAndChangesNothing) {
  auto be = make_backend();
  const std::size_t pg = be->granularity();
  VirtualTensor t(*be, 8 * pg, 5 * pg);  // two shared pages + 3 private
  t.map(0, 2);
  fill(*be, reinterpret_cast<void*>(t.base()), 2 * pg, 11);
  std::string msg;
  EXPECT_EQ(error_of([&] { t.map(2, 2); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("memory limit"), std::string::npos) << msg;
  EXPECT_EQ(t.state(2), PageState::zero);
  EXPECT_EQ(t.state(3), PageState::zero);
  EXPECT_EQ(t.stats().physical_bytes, 4 * pg);
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(t.base()), 2 * pg, 11));
  t.map(2, 1);  // exactly at the limit
  t.unmap(0, 1);
  t.map(3, 1);  // room again
  EXPECT_EQ(t.stats().private_pages, 3u);
  t.set_memory_limit(0);
  t.map(0, 8);
  EXPECT_EQ(t.stats().private_pages, 8u);
}

TEST_P(VirtualTensorTest, DestructionGivesEverythingBack) {
  if (!is_host()) GTEST_SKIP() << "counts the host backend's handles";
  auto be = make_backend();
  auto* host = dynamic_cast<prim::HostBackend*>(be.get());
  const std::size_t pg = be->granularity();
  {
    VirtualTensor t(*be, 16 * pg);
    t.map(0, 5);
    t.unmap(3, 10, PageState::sink);
    EXPECT_GT(host->live_mappings(), 0u);
  }
  EXPECT_EQ(host->live_handles(), 0u);
  EXPECT_EQ(host->live_mappings(), 0u);
  EXPECT_EQ(host->live_reservations(), 0u);
}

MEMLAKE_INSTANTIATE_BACKENDS(VirtualTensorTest);

// Faults: a failed create is out of memory with nothing changed; a failed
// map, unmap or set_access leaves every page in a valid state (or a hole the
// next call maps again), bytes of private pages intact, and nothing leaks.
class VirtualTensorFaults : public ::testing::TestWithParam<prim::FaultSite> {};

TEST_P(VirtualTensorFaults, FailedRemapLeavesAConsistentTensor) {
  prim::BackendConfig c;
  c.kind = "host";
  auto host_owned = prim::make_backend(c);
  auto* host = dynamic_cast<prim::HostBackend*>(host_owned.get());
  prim::FaultyBackend faulty(std::move(host_owned));
  const std::size_t pg = faulty.granularity();
  {
    VirtualTensor t(faulty, 8 * pg);
    t.map(0, 2);
    fill(faulty, reinterpret_cast<void*>(t.base()), pg, 5);
    fill(faulty, reinterpret_cast<void*>(t.base() + pg), pg, 6);
    int failed_calls = 0;
    for (int nth = 1; nth <= 3; ++nth) {
      faulty.fail_nth(GetParam(), nth);
      const Errc e = error_of([&] { t.map(2, 3); });
      const Errc e2 = error_of([&] { t.unmap(0, 1, PageState::sink); });
      faulty.stop_failing();
      if (GetParam() == prim::FaultSite::create) {
        EXPECT_TRUE(e == Errc::ok || e == Errc::out_of_memory);
      }
      if (e != Errc::ok || e2 != Errc::ok) ++failed_calls;
      // Whatever failed, the next calls succeed and the tensor is usable.
      t.map(0, 8);
      EXPECT_EQ(t.stats().hole_pages, 0u);
      EXPECT_EQ(t.stats().private_pages, 8u);
      faulty.synchronize_device();
      EXPECT_TRUE(holds(faulty, reinterpret_cast<void*>(t.base() + pg), pg, 6));  // never touched
      t.unmap(2, 6);
      t.map(0, 1);
      fill(faulty, reinterpret_cast<void*>(t.base()), pg, 5);
      EXPECT_EQ(host->live_handles(), 2u + 2u);
    }
    EXPECT_GT(failed_calls, 0) << "no injected fault reached the tensor";
    EXPECT_GT(faulty.faults_injected(GetParam()), 0u);
  }
  EXPECT_EQ(host->live_handles(), 0u);
  EXPECT_EQ(host->live_mappings(), 0u);
  EXPECT_EQ(host->live_reservations(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Sites, VirtualTensorFaults,
                         ::testing::Values(prim::FaultSite::create, prim::FaultSite::map, prim::FaultSite::unmap,
                                           prim::FaultSite::set_access, prim::FaultSite::copy_device,
                                           prim::FaultSite::synchronize_stream),
                         [](const auto& p) { return std::string(prim::fault_site_name(p.param)); });

// The C ABI over the same mechanism.
TEST(VirtualTensorCApi, MapUnmapStatsAndErrors) {
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "backend", "host"), MEMLAKE_OK);
  memlake_allocator* a = nullptr;
  ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK);
  memlake_options_destroy(o);
  memlake_vt* v = nullptr;
  ASSERT_EQ(memlake_vt_create(a, 0, 10u << 20, 0, &v), MEMLAKE_OK);
  memlake_vt_stats s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(memlake_vt_get_stats(v, &s), MEMLAKE_OK);
  const std::size_t pg = s.page_size;
  EXPECT_EQ(s.pages, (10u << 20) / pg);
  EXPECT_EQ(s.physical_bytes, 2 * pg);
  EXPECT_NE(s.base, 0u);
  ASSERT_EQ(memlake_vt_map(v, 1, 2, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_vt_unmap(v, 2, 1, MEMLAKE_VT_SINK, nullptr), MEMLAKE_OK);
  std::vector<uint8_t> st(s.pages, 9);
  ASSERT_EQ(memlake_vt_pages(v, 0, st.size(), st.data()), MEMLAKE_OK);
  EXPECT_EQ(st[0], MEMLAKE_VT_ZERO);
  EXPECT_EQ(st[1], MEMLAKE_VT_PRIVATE);
  EXPECT_EQ(st[2], MEMLAKE_VT_SINK);
  EXPECT_EQ(memlake_vt_map(v, s.pages, 1, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(memlake_last_error(), "outside"), nullptr) << memlake_last_error();
  EXPECT_EQ(memlake_vt_unmap(v, 0, 1, MEMLAKE_VT_PRIVATE, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_vt_pages(v, s.pages, 1, st.data()), MEMLAKE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(memlake_vt_set_memory_limit(v, 3 * pg), MEMLAKE_OK);
  EXPECT_EQ(memlake_vt_map(v, 3, 1, nullptr), MEMLAKE_ERROR_OUT_OF_MEMORY);
  memlake_vt_stats bad{};
  EXPECT_EQ(memlake_vt_get_stats(v, &bad), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_vt_map(nullptr, 0, 1, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  memlake_vt_destroy(v);
  memlake_vt_destroy(nullptr);
  memlake_destroy(a);
}

}  // namespace
}  // namespace memlake::test
