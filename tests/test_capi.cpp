// The C ABI, on the host backend (and on cuda where present).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memlake/memlake.h"
#include "support.h"

namespace memlake::test {
namespace {

class CApiTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(memlake_options_create(&opts, 0), MEMLAKE_OK);
    ASSERT_EQ(memlake_options_set(opts, "backend", GetParam().c_str()), MEMLAKE_OK);
    ASSERT_EQ(memlake_create(opts, &a), MEMLAKE_OK) << memlake_last_error();
  }
  void TearDown() override {
    memlake_destroy(a);
    memlake_options_destroy(opts);
  }
  memlake_options* opts = nullptr;
  memlake_allocator* a = nullptr;
};

TEST_P(CApiTest, AllocFreeStatsJson) {
  void* p = nullptr;
  ASSERT_EQ(memlake_alloc(a, 5 << 20, 0, nullptr, &p), MEMLAKE_OK) << memlake_last_error();
  ASSERT_NE(p, nullptr);
  memlake_stats s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(memlake_get_stats(a, 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.requested_bytes.current, 5u << 20);
  EXPECT_EQ(s.active_blocks.current, 1u);
  EXPECT_GE(s.reserved_bytes.current, 5u << 20);
  EXPECT_GE(s.primitive_calls[MEMLAKE_OP_CREATE], 1u);
  EXPECT_GT(s.primitive_ns[MEMLAKE_OP_CREATE], 0u);  // time inside the driver calls is measured
  EXPECT_EQ(s.primitive_ns[MEMLAKE_OP_UNMAP], 0u);   // ... and only where calls were made
  EXPECT_GT(s.host_ns, 0u);                           // and all of the allocation's time
  EXPECT_STREQ(memlake_prim_op_name(MEMLAKE_OP_SET_ACCESS), "set_access");
  std::size_t n = memlake_stats_json(a, nullptr, 0);
  std::string j(n + 1, '\0');
  memlake_stats_json(a, j.data(), j.size());
  EXPECT_NE(j.find("\"reserved_bytes\":{\"current\":"), std::string::npos) << j;
  EXPECT_NE(j.find("\"host_ns\":"), std::string::npos) << j;
  std::size_t size = 0;
  void* stream = reinterpret_cast<void*>(1);
  EXPECT_EQ(memlake_lookup(a, p, 0, &size, &stream), MEMLAKE_OK);
  EXPECT_EQ(size, 5u << 20);
  EXPECT_EQ(stream, nullptr);
  EXPECT_EQ(memlake_lookup(a, static_cast<char*>(p) + 512, 0, &size, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_lookup(a, p, 1, nullptr, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);  // other device
  EXPECT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
  EXPECT_EQ(memlake_lookup(a, p, 0, nullptr, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);  // freed
  EXPECT_EQ(memlake_empty_cache(a, 0), MEMLAKE_OK);
  ASSERT_EQ(memlake_get_stats(a, 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.reserved_bytes.current, 0u);
  EXPECT_EQ(s.reserved_bytes.peak, 6u << 20);
  EXPECT_EQ(memlake_reset_peak_stats(a, 0), MEMLAKE_OK);
  ASSERT_EQ(memlake_get_stats(a, 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.reserved_bytes.peak, 0u);
}

// The watermark measures what a stretch of work allocated and freed inside
// itself (activation tiering's per-module transients) without touching the
// peaks the user sees, and the user's peak reset leaves it alone.
TEST_P(CApiTest, WatermarkIsApartFromThePeaks) {
  auto allocated = [&] {
    memlake_stats s{};
    s.struct_size = sizeof s;
    EXPECT_EQ(memlake_get_stats(a, 0, &s), MEMLAKE_OK);
    return s.allocated_bytes;
  };
  memlake_stat w{1, 1};
  ASSERT_EQ(memlake_watermark(a, 0, 0, &w), MEMLAKE_OK);  // a device never used
  EXPECT_EQ(w.current, 0u);
  EXPECT_EQ(w.peak, 0u);
  void *p = nullptr, *q = nullptr, *r = nullptr;
  ASSERT_EQ(memlake_alloc(a, 4 << 20, 0, nullptr, &p), MEMLAKE_OK) << memlake_last_error();
  const std::uint64_t base = allocated().current;
  ASSERT_EQ(memlake_watermark(a, 0, 1, &w), MEMLAKE_OK);  // read, then start a stretch here
  EXPECT_EQ(w.current, base);
  EXPECT_EQ(w.peak, base);
  ASSERT_EQ(memlake_alloc(a, 8 << 20, 0, nullptr, &q), MEMLAKE_OK) << memlake_last_error();
  const std::uint64_t high = allocated().current;
  ASSERT_GT(high, base);
  ASSERT_EQ(memlake_free(a, q, 0, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_watermark(a, 0, 0, &w), MEMLAKE_OK);
  EXPECT_EQ(w.current, base);
  EXPECT_EQ(w.peak, high) << "what the stretch allocated and freed inside itself: peak - start";
  ASSERT_EQ(memlake_watermark(a, 0, 1, &w), MEMLAKE_OK);  // a read without reset left it as it was
  EXPECT_EQ(w.peak, high);
  ASSERT_EQ(memlake_watermark(a, 0, 0, &w), MEMLAKE_OK);
  EXPECT_EQ(w.peak, base) << "reset restarts the watermark at the current bytes";
  EXPECT_EQ(allocated().peak, high) << "the watermark's reset leaves the user's peak alone";
  // The other way round: the user's reset leaves the watermark alone.
  ASSERT_EQ(memlake_alloc(a, 2 << 20, 0, nullptr, &r), MEMLAKE_OK) << memlake_last_error();
  const std::uint64_t mid = allocated().current;
  ASSERT_EQ(memlake_free(a, r, 0, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_reset_peak_stats(a, 0), MEMLAKE_OK);
  EXPECT_EQ(allocated().peak, base);
  ASSERT_EQ(memlake_watermark(a, 0, 0, &w), MEMLAKE_OK);
  EXPECT_EQ(w.peak, mid);
  EXPECT_EQ(w.current, base);
  EXPECT_EQ(memlake_watermark(nullptr, 0, 0, &w), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_watermark(a, 0, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
}

TEST_P(CApiTest, FreeIfOwnedFreesOnlyLiveAllocationsAndLogsNothingOtherwise) {
  void* p = nullptr;
  void* q = nullptr;
  auto be = make_backend();  // a real stream of the backend's device
  void* s1 = be->create_stream();
  ASSERT_EQ(memlake_alloc(a, 3 << 20, 0, s1, &p), MEMLAKE_OK) << memlake_last_error();
  ASSERT_EQ(memlake_alloc(a, 700, 0, nullptr, &q), MEMLAKE_OK) << memlake_last_error();
  int x = 0;
  memlake_free(a, &x, 0, nullptr);  // leaves a message behind
  const std::string before = memlake_last_error();
  void* stream = nullptr;
  EXPECT_EQ(memlake_free_if_owned(a, &x, 0, &stream), MEMLAKE_ERROR_INVALID_ARGUMENT);               // foreign
  EXPECT_EQ(memlake_free_if_owned(a, static_cast<char*>(p) + 512, 0, &stream), MEMLAKE_ERROR_INVALID_ARGUMENT);  // interior
  EXPECT_EQ(memlake_free_if_owned(a, p, 1, &stream), MEMLAKE_ERROR_INVALID_ARGUMENT);                // other device
  EXPECT_EQ(memlake_free_if_owned(a, nullptr, 0, &stream), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(before, memlake_last_error());
  memlake_stats st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(memlake_get_stats(a, 0, &st), MEMLAKE_OK);
  EXPECT_EQ(st.active_blocks.current, 2u);  // nothing was freed by the refusals
  EXPECT_EQ(memlake_free_if_owned(a, p, 0, &stream), MEMLAKE_OK);
  EXPECT_EQ(stream, s1);
  EXPECT_EQ(memlake_free_if_owned(a, p, 0, &stream), MEMLAKE_ERROR_INVALID_ARGUMENT);  // second time: gone
  EXPECT_EQ(memlake_free_if_owned(a, q, 0, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_get_stats(a, 0, &st), MEMLAKE_OK);
  EXPECT_EQ(st.active_blocks.current, 0u);
  EXPECT_EQ(st.num_frees, 2u);
  memlake_destroy(a);  // synchronises before the stream goes
  a = nullptr;
  be->destroy_stream(s1);
}

TEST_P(CApiTest, ErrorsAreCodesWithMessages) {
  void* p = nullptr;
  int x;
  EXPECT_EQ(memlake_free(a, &x, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("has no allocations"), std::string::npos) << memlake_last_error();
  ASSERT_EQ(memlake_alloc(a, 100, 0, nullptr, &p), MEMLAKE_OK);
  EXPECT_EQ(memlake_free(a, &x, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("not a live allocation"), std::string::npos);
  ASSERT_EQ(memlake_set_memory_cap(a, 4 << 20), MEMLAKE_OK);
  void* big = nullptr;
  EXPECT_EQ(memlake_alloc(a, 8 << 20, 0, nullptr, &big), MEMLAKE_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(big, nullptr);
  EXPECT_NE(std::string(memlake_last_error()).find("out of memory"), std::string::npos);
  EXPECT_EQ(memlake_alloc(a, 0, 0, nullptr, &big), MEMLAKE_OK);
  EXPECT_EQ(big, nullptr);
  EXPECT_EQ(memlake_alloc(a, 100, -1, nullptr, &big), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
  EXPECT_EQ(memlake_free(a, nullptr, 0, nullptr), MEMLAKE_OK);
  memlake_stats s{};
  EXPECT_EQ(memlake_get_stats(a, 0, &s), MEMLAKE_ERROR_INVALID_ARGUMENT) << "struct_size unset";
  // Restores: unknown flags, a null pointer, an allocation that is not evicted; ready() of a
  // foreign pointer. Each a clear error; the allocation stays as it was.
  void* r = nullptr;
  ASSERT_EQ(memlake_alloc(a, 4 << 20, 0, nullptr, &r), MEMLAKE_OK);
  EXPECT_EQ(memlake_restore_ex(a, r, 0, 0x40), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("unknown flags 64"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_restore_ex(a, nullptr, 0, MEMLAKE_RESTORE_NO_WAIT), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_restore_ex(a, r, 0, MEMLAKE_RESTORE_NO_WAIT), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("not evicted"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_restore_ready(a, &x, 0), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_restore_ready(a, nullptr, 0), MEMLAKE_OK) << "nothing pending: nothing to do";
  // Disk moves: unknown flags, a null pointer, no disk tier. Clear errors; the allocation stays.
  EXPECT_EQ(memlake_demote_ex(a, r, 0, 0x40), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("memlake_demote_ex: unknown flags 64"), std::string::npos)
      << memlake_last_error();
  EXPECT_EQ(memlake_demote_ex(a, nullptr, 0, MEMLAKE_DEMOTE_ASYNC), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_fetch(a, nullptr, 0), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_evict(a, r, 0, MEMLAKE_SLEEP_OFFLOAD), MEMLAKE_OK) << memlake_last_error();
  EXPECT_EQ(memlake_demote_ex(a, r, 0, MEMLAKE_DEMOTE_ASYNC), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("disk_tier"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_fetch(a, r, 0), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("no disk tier"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_restore(a, r, 0), MEMLAKE_OK) << "still evicted in the host tier";
  EXPECT_EQ(memlake_free(a, r, 0, nullptr), MEMLAKE_OK);
}

// A pageable host buffer with a pattern, copied to device memory and back.
void round_trip(memlake_allocator* a, int device, std::size_t n) {
  void* d = nullptr;
  ASSERT_EQ(memlake_alloc(a, n, device, nullptr, &d), MEMLAKE_OK) << memlake_last_error();
  std::vector<unsigned char> src(n), back(n, 0);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 131 + (i >> 20));
  ASSERT_EQ(memlake_copy(a, d, src.data(), n, device, nullptr), MEMLAKE_OK) << memlake_last_error();
  ASSERT_EQ(memlake_copy(a, back.data(), d, n, device, nullptr), MEMLAKE_OK) << memlake_last_error();
  EXPECT_TRUE(src == back) << "bytes differ after a round trip of " << n << " bytes";
  EXPECT_EQ(memlake_free(a, d, device, nullptr), MEMLAKE_OK);
}

TEST_P(CApiTest, CopiesAndTheirStatistics) {
  memlake_copy_stats c{};
  EXPECT_EQ(memlake_get_copy_stats(a, 0, &c), MEMLAKE_ERROR_INVALID_ARGUMENT) << "struct_size unset";
  c.struct_size = sizeof c;
  ASSERT_EQ(memlake_get_copy_stats(a, 0, &c), MEMLAKE_OK);
  EXPECT_EQ(c.copies, 0u);
  EXPECT_EQ(c.threads, 0u) << "a query never starts an engine";
  round_trip(a, 0, (std::size_t{24} << 20) + 4093);
  ASSERT_EQ(memlake_get_copy_stats(a, 0, &c), MEMLAKE_OK);
  EXPECT_EQ(c.copies, 2u);
  EXPECT_EQ(c.bytes, 2 * ((std::size_t{24} << 20) + 4093));
  EXPECT_EQ(c.staged, 2u) << "large pageable copies are pipelined through staging";
  EXPECT_GE(c.threads, 1u);
  EXPECT_GT(c.chunks, 2u);
  EXPECT_EQ(c.paths_gpus, 0u) << "no topology: the direct path only";
  EXPECT_EQ(c.transfers, 0u);
}

MEMLAKE_INSTANTIATE_BACKENDS(CApiTest);

// MEMLAKE_COPY_TOPOLOGY on the host backend: "GPUs" are host backends of
// several device ordinals; the planner splits a transfer over their links.
TEST(CApi, CopiesOverSeveralPathsWithADescribedTopology) {
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "backend", "host"), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "copy_threads", "2"), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "copy_chunk", "1M"), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "copy_topology", "gpus 3; pcie 24; nvlink all 200"), MEMLAKE_OK);
  memlake_allocator* a = nullptr;
  ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK) << memlake_last_error();
  const std::size_t n = (std::size_t{96} << 20) + 12345;
  round_trip(a, 0, n);
  memlake_copy_stats c{};
  c.struct_size = sizeof c;
  ASSERT_EQ(memlake_get_copy_stats(a, 0, &c), MEMLAKE_OK);
  EXPECT_EQ(c.paths_gpus, 3u);
  EXPECT_EQ(c.transfers, 2u);
  EXPECT_EQ(c.split, 2u) << "96 MiB over three equal links: both directions split";
  EXPECT_GT(c.bytes_via[1], 0u);
  EXPECT_GT(c.bytes_via[2], 0u);
  EXPECT_EQ(c.bytes_via[0] + c.bytes_via[1] + c.bytes_via[2], 2 * n);
  round_trip(a, 4, std::size_t{16} << 20);  // a device outside the topology: its direct path
  ASSERT_EQ(memlake_get_copy_stats(a, 4, &c), MEMLAKE_OK);
  EXPECT_EQ(c.paths_gpus, 0u);
  EXPECT_EQ(c.copies, 2u);
  memlake_destroy(a);
  // A topology that does not parse is refused at creation, naming the line; so is a missing file.
  ASSERT_EQ(memlake_options_set(o, "copy_topology", "gpus 2; pcie fast"), MEMLAKE_OK);
  EXPECT_EQ(memlake_create(o, &a), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("copy_topology"), std::string::npos) << memlake_last_error();
  EXPECT_NE(std::string(memlake_last_error()).find("line 2: 'fast'"), std::string::npos) << memlake_last_error();
  ASSERT_EQ(memlake_options_set(o, "copy_topology", "@/nonexistent/topology.txt"), MEMLAKE_OK);
  EXPECT_EQ(memlake_create(o, &a), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("cannot read /nonexistent/topology.txt"), std::string::npos);
  // One GPU (or 'measure' on the host backend): the direct path.
  ASSERT_EQ(memlake_options_set(o, "copy_topology", "measure"), MEMLAKE_OK);
  ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK) << memlake_last_error();
  round_trip(a, 0, std::size_t{16} << 20);
  ASSERT_EQ(memlake_get_copy_stats(a, 0, &c), MEMLAKE_OK);
  EXPECT_EQ(c.paths_gpus, 0u);
  EXPECT_EQ(c.copies, 2u);
  memlake_destroy(a);
  memlake_options_destroy(o);
}

TEST(CApi, OptionsByKey) {
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  EXPECT_EQ(memlake_options_set(o, "memory_cap", "1.5G"), MEMLAKE_OK);
  char buf[64];
  memlake_options_get(o, "memory_cap", buf, sizeof buf);
  EXPECT_STREQ(buf, "1610612736");
  EXPECT_EQ(memlake_options_set(o, "no_such_option", "1"), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("unknown option 'no_such_option'"), std::string::npos);
  EXPECT_EQ(memlake_options_set(o, "stitch", "maybe"), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_options_set(o, "backend", "tpu"), MEMLAKE_ERROR_INVALID_ARGUMENT);
  memlake_options_destroy(o);
}

TEST(CApi, CudaBackendWithoutDriverFailsAtCreate) {
  std::string why;
  if (prim::cuda_available(&why)) GTEST_SKIP() << "a CUDA driver is present";
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  memlake_options_set(o, "backend", "cuda");
  memlake_allocator* a = nullptr;
  EXPECT_EQ(memlake_create(o, &a), MEMLAKE_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(memlake_last_error()).find("libcuda"), std::string::npos) << memlake_last_error();
  memlake_options_destroy(o);
}

TEST(CApi, TorchSignaturesUseTheDefaultAllocator) {
  // The default allocator reads MEMLAKE_* once, on first use.
  ::setenv("MEMLAKE_BACKEND", "host", 1);
  void* p = memlake_torch_malloc(3 << 20, 0, nullptr);
  ASSERT_NE(p, nullptr) << memlake_last_error();
  EXPECT_EQ(memlake_torch_malloc(-5, 0, nullptr), nullptr);
  memlake_stats s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(memlake_get_stats(memlake_default(), 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.requested_bytes.current, 3u << 20);
  memlake_torch_free(p, 3 << 20, 0, nullptr);
  ASSERT_EQ(memlake_get_stats(memlake_default(), 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.active_blocks.current, 0u);
  EXPECT_EQ(memlake_default_init(nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT) << "too late: it exists";

  // Out of memory: the pool entry point returns NULL, the full-swap one throws.
  ASSERT_EQ(memlake_set_memory_cap(memlake_default(), 8 << 20), MEMLAKE_OK);
  EXPECT_EQ(memlake_torch_pool_malloc(64 << 20, 0, nullptr), nullptr);
  EXPECT_NE(std::string(memlake_last_error()).find("out of memory"), std::string::npos);
  try {
    memlake_torch_malloc(64 << 20, 0, nullptr);
    ADD_FAILURE() << "memlake_torch_malloc returned on out-of-memory";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).rfind("memlake: CUDA out of memory. cannot allocate 64.00 MiB", 0), 0u) << e.what();
  }
  EXPECT_EQ(memlake_torch_malloc(0, 0, nullptr), nullptr) << "size 0 is not an error";
  memlake_set_memory_cap(memlake_default(), 0);
  // A failure that is not out-of-memory is not reported as one (PyTorch would retry it as OOM).
  try {
    memlake_torch_malloc(1 << 20, -1, nullptr);
    ADD_FAILURE() << "memlake_torch_malloc returned for device -1";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("out of memory"), std::string::npos) << what;
    EXPECT_EQ(what.rfind("memlake: allocation of 1048576 bytes failed: device -1 is not a device ordinal", 0), 0u) << what;
  }
  ASSERT_EQ(memlake_get_stats(memlake_default(), 0, &s), MEMLAKE_OK);
  EXPECT_EQ(s.active_blocks.current, 0u) << "the failed request left nothing behind";
}

}  // namespace
}  // namespace memlake::test

TEST(CApi, PlanReturnsTheLatestStartPlanAndClearErrors) {
  const char* profile =
      "memlake-profile 1\n"
      "tensor a 1048576 persistent\ntensor b 1048576 persistent\ntensor c 1048576 persistent\n"
      "kernel forward 0.01\nkernel sa 0.001 0\nkernel sb 0.001 1\nkernel sc 0.001 2\n";
  size_t need = 0;
  ASSERT_EQ(memlake_plan(profile, "gpu_bytes=2097152", nullptr, nullptr, 0, &need), MEMLAKE_OK) << memlake_last_error();
  ASSERT_GT(need, 0u);
  std::string buf(need + 1, '\0');
  ASSERT_EQ(memlake_plan(profile, "gpu_bytes=2097152", "latest-start", buf.data(), buf.size(), &need), MEMLAKE_OK);
  buf.resize(need);
  EXPECT_EQ(buf.rfind("policy latest-start\n", 0), 0u) << buf;
  EXPECT_NE(buf.find("tensor 2 tiered"), std::string::npos) << buf;
  EXPECT_NE(buf.find("\nsim iteration_s "), std::string::npos) << buf;
  // A short buffer is cut and NUL-terminated; the length needed is still said.
  char small[8];
  ASSERT_EQ(memlake_plan(profile, nullptr, nullptr, small, sizeof small, &need), MEMLAKE_OK);
  EXPECT_EQ(std::strlen(small), 7u);
  EXPECT_GT(need, 7u);
  // The other policies simulate too.
  ASSERT_EQ(memlake_plan(profile, "gpu_bytes=2097152", "memlake", nullptr, 0, &need), MEMLAKE_OK);
  // Too small a budget, a malformed profile, an unknown key or policy, NULLs.
  EXPECT_EQ(memlake_plan(profile, "gpu_bytes=1000", nullptr, nullptr, 0, &need), MEMLAKE_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(memlake_last_error()).find("needs 1048576 bytes"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_plan("memlake-profile 1\nkernel k x\n", nullptr, nullptr, nullptr, 0, &need),
            MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("profile:2:"), std::string::npos) << memlake_last_error();
  EXPECT_EQ(memlake_plan(profile, "warp=9", nullptr, nullptr, 0, &need), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_plan(profile, nullptr, "belady", nullptr, 0, &need), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_plan(nullptr, nullptr, nullptr, nullptr, 0, &need), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_plan(profile, nullptr, nullptr, nullptr, 0, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
}
