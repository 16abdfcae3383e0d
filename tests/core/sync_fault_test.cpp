// Injected faults (kuplx_inject_copy_faults) on the synchronous paths that go through the copy
// engine: kupl_memcpy and kupl_memcpy2d from KUPL_MEMCPY_SDMA_THRESHOLD on, and copies on the
// synchronous queue (KUPL_ASYNC_SYNC). The fault is raised inside the software backend and comes
// back through its completion, from a channel thread, as a hardware engine's failure would: the
// call returns KUPL_ERROR, writes nothing, and the next copy works.
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

namespace {

struct SyncFault : ::testing::Test {
    void SetUp() override { info = engine_info(); }
    void TearDown() override { kuplx_inject_copy_faults(0); }
    // Large enough for the engine on the synchronous path, and split across channels.
    size_t engine_size() const {
        return std::max<size_t>({info.sync_threshold, info.mt_threshold, 4096}) * 3;
    }
    kuplx_engine_info_t info{};
};

} // namespace

TEST_F(SyncFault, MemcpyThroughTheEngineReturnsErrorAndWritesNothing) {
    const size_t n = engine_size();
    auto src = pattern(n, 1);
    std::vector<unsigned char> dst(n, 0);
    const uint64_t failed = counters().copies_failed;
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), n), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst)) << "a failed copy wrote to its destination";
    EXPECT_EQ(counters().copies_failed - failed, 1u);
    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), n), KUPL_OK);
    EXPECT_EQ(dst, src);
}

TEST_F(SyncFault, Memcpy2dThroughTheEngineReturnsErrorAndWritesNothing) {
    const size_t width = 1000, pitch = 1024, rows = engine_size() / pitch;
    auto src = pattern(pitch * rows, 2);
    std::vector<unsigned char> dst(pitch * rows, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    EXPECT_EQ(kupl_memcpy2d(dst.data(), pitch, src.data(), pitch, width, rows), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst));
    ASSERT_EQ(kupl_memcpy2d(dst.data(), pitch, src.data(), pitch, width, rows), KUPL_OK);
    for (size_t r = 0; r < rows; ++r)
        ASSERT_EQ(first_difference(dst.data() + r * pitch, src.data() + r * pitch, width), SIZE_MAX)
            << "row " << r;
}

TEST_F(SyncFault, SynchronousQueueCopyReturnsErrorAndItsEventReportsIt) {
    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    ASSERT_NE(sync, nullptr);
    const size_t n = engine_size();
    auto src = pattern(n, 3);
    std::vector<unsigned char> dst(n, 0);
    Event e = make_event();
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, sync, e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    char why[256] = "";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_ERROR);
    EXPECT_NE(std::string(why).find("injected copy fault"), std::string::npos) << why;
    EXPECT_TRUE(all_zero(dst));
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, sync, e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
}

// Faults armed for several copies from several threads at once: exactly that many calls fail,
// each failed one wrote nothing, each other one is exact.
TEST_F(SyncFault, ConcurrentSynchronousCopiesFailExactlyTheArmedNumber) {
    const size_t n = engine_size();
    const int threads = 4, each = scaled(16);
    const unsigned armed = 10;
    auto src = pattern(n, 4);
    std::atomic<int> failures{0}, wrong{0};
    ASSERT_EQ(kuplx_inject_copy_faults(armed), KUPL_OK);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&] {
            std::vector<unsigned char> dst(n);
            for (int i = 0; i < each; ++i) {
                std::fill(dst.begin(), dst.end(), 0);
                if (kupl_memcpy(dst.data(), src.data(), n) == KUPL_OK) {
                    if (dst != src)
                        ++wrong;
                } else {
                    ++failures;
                    if (!all_zero(dst))
                        ++wrong;
                }
            }
        });
    for (auto &thread : pool)
        thread.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(failures.load(), static_cast<int>(std::min<unsigned>(armed, threads * each)));
}
