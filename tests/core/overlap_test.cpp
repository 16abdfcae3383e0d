// Ranges the runtime refuses: copies whose source and destination overlap (1D exactly, 2D by
// footprint [base, base + (h-1)*pitch + w)), mlock/munlock ranges that are empty or wrap around
// the address space, and queue-item arguments too large to copy. Refused calls return KUPL_ERROR
// and touch nothing.
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace kupl_test;

namespace {

// One buffer, the copies within it, and a snapshot to prove a refused copy wrote nothing.
class OverlapTest : public ::testing::Test {
  protected:
    static constexpr size_t kBytes = 8u << 20; // the shape that went wrong: 8 MiB, dst > src
    void SetUp() override {
        buffer_ = pattern(2 * kBytes, 21);
        snapshot_ = buffer_;
    }
    unsigned char *at(size_t offset) { return buffer_.data() + offset; }
    bool untouched() const { return buffer_ == snapshot_; }

    std::vector<unsigned char> buffer_;
    std::vector<unsigned char> snapshot_;
};

TEST_F(OverlapTest, OneDimensionalOverlapIsRefusedEverywhere) {
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_NE(q, nullptr);
    ASSERT_NE(e, nullptr);
    // dst after src (where a forward copy smears), dst before src, the same range, one byte.
    const struct {
        size_t dst, src, n;
    } cases[] = {{4096, 0, kBytes},       {1, 0, kBytes},     {0, 4096, kBytes}, {kBytes - 1, 0, kBytes},
                 {0, kBytes - 1, kBytes}, {100, 100, kBytes}, {7, 7, 1},         {64, 0, 65}};
    for (const auto &c : cases) {
        SCOPED_TRACE(::testing::Message()
                     << "dst +" << c.dst << ", src +" << c.src << ", " << c.n << " bytes");
        EXPECT_EQ(kupl_memcpy(at(c.dst), at(c.src), c.n), KUPL_ERROR);
        EXPECT_EQ(kupl_memcpy_async(at(c.dst), at(c.src), c.n, q.get(), e.get()), KUPL_ERROR);
        EXPECT_EQ(kupl_memcpy_async(at(c.dst), at(c.src), c.n, nullptr, nullptr), KUPL_ERROR);
        EXPECT_EQ(kupl_memcpy2d(at(c.dst), c.n, at(c.src), c.n, c.n, 1), KUPL_ERROR);
        EXPECT_EQ(kupl_memcpy2d_async(at(c.dst), c.n, at(c.src), c.n, c.n, 1, q.get(), nullptr), KUPL_ERROR);
    }
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED) << "a refused copy recorded its event";
    EXPECT_TRUE(untouched());
}

TEST_F(OverlapTest, AdjacentRangesAreCopied) {
    Queue q = make_queue();
    // dst right after src, and src right after dst: no byte shared.
    ASSERT_EQ(kupl_memcpy_async(at(kBytes), at(0), kBytes, q.get(), nullptr), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(first_difference(at(kBytes), snapshot_.data(), kBytes), SIZE_MAX);
    ASSERT_EQ(kupl_memcpy(at(0), at(kBytes), kBytes), KUPL_OK);
    EXPECT_EQ(first_difference(at(0), snapshot_.data(), kBytes), SIZE_MAX);
}

TEST_F(OverlapTest, TwoDimensionalFootprintsThatMeetAreRefused) {
    Queue q = make_queue();
    const size_t pitch = 4096, width = 100, height = 1000;
    const size_t footprint = (height - 1) * pitch + width;
    // The destination starts on the source's last row; or ends on its first; or (different
    // pitches) the footprints cross although their starts are far apart.
    const struct {
        size_t dst, dpitch, src, spitch;
    } cases[] = {{footprint - 1, pitch, 0, pitch},
                 {0, pitch, footprint - 1, pitch},
                 {(height - 1) * pitch, pitch, 0, pitch},
                 {0, 2 * pitch, (height - 1) * pitch, pitch}};
    for (const auto &c : cases) {
        SCOPED_TRACE(::testing::Message() << "dst +" << c.dst << " pitch " << c.dpitch << ", src +" << c.src
                                          << " pitch " << c.spitch);
        EXPECT_EQ(kupl_memcpy2d(at(c.dst), c.dpitch, at(c.src), c.spitch, width, height), KUPL_ERROR);
        EXPECT_EQ(
            kupl_memcpy2d_async(at(c.dst), c.dpitch, at(c.src), c.spitch, width, height, q.get(), nullptr),
            KUPL_ERROR);
    }
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(untouched());
}

TEST_F(OverlapTest, InterleavedColumnsOfOneMatrixAreRefusedByFootprint) {
    // Column 0 to column 1 of the same matrix: no byte is shared, but the footprints overlap, and
    // the rule is the footprint (documented in the README).
    const size_t pitch = 64, width = 8, height = 512;
    EXPECT_EQ(kupl_memcpy2d(at(width), pitch, at(0), pitch, width, height), KUPL_ERROR);
    EXPECT_TRUE(untouched());
}

TEST_F(OverlapTest, TwoDimensionalFootprintsThatOnlyTouchAreCopied) {
    const size_t pitch = 4096, width = 100, height = 1000;
    const size_t footprint = (height - 1) * pitch + width;
    ASSERT_EQ(kupl_memcpy2d(at(footprint), pitch, at(0), pitch, width, height), KUPL_OK);
    for (size_t row = 0; row < height; ++row)
        ASSERT_EQ(std::memcmp(at(footprint + row * pitch), snapshot_.data() + row * pitch, width), 0) << row;
}

TEST(MlockRange, EmptyAndWrappingRangesAreRefused) {
    std::vector<unsigned char> plain(1 << 16, 1);
    void *p = plain.data();
    EXPECT_EQ(kupl_mlock(p, SIZE_MAX), KUPL_ERROR) << "SIZE_MAX wraps to an empty range in the kernel";
    EXPECT_EQ(kupl_munlock(p, SIZE_MAX), KUPL_ERROR);
    EXPECT_EQ(kupl_mlock(p, SIZE_MAX - reinterpret_cast<uintptr_t>(p) + 1), KUPL_ERROR)
        << "ends exactly at 2^64";
    EXPECT_EQ(kupl_mlock(p, 0), KUPL_ERROR);
    EXPECT_EQ(kupl_munlock(p, 0), KUPL_ERROR);
    void *top = reinterpret_cast<void *>(UINTPTR_MAX - 100);
    EXPECT_EQ(kupl_mlock(top, 200), KUPL_ERROR);
    EXPECT_EQ(kupl_munlock(top, 200), KUPL_ERROR);
    // The last page: the range itself fits, its end rounded up to a page does not.
    void *last_page = reinterpret_cast<void *>(UINTPTR_MAX - 4095);
    EXPECT_EQ(kupl_mlock(last_page, 1), KUPL_ERROR);
    // A sound range still works.
    EXPECT_EQ(kupl_mlock(p, plain.size()), KUPL_OK);
    EXPECT_EQ(kupl_munlock(p, plain.size()), KUPL_OK);
}

TEST(QueueSubmitArgs, AbsurdArgsSizeIsRefused) {
    Queue q = make_queue();
    static std::atomic<int> runs{0};
    unsigned char args[16] = {};
    kupl_queue_item_desc_t desc{};
    desc.func = [](void *) { runs.fetch_add(1); };
    desc.args = args;
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
    desc.args_size = SIZE_MAX; // rounding it up to whole words used to wrap to 0
    EXPECT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_ERROR);
#ifndef KUPL_TEST_SANITIZED // ASan aborts on absurd allocation sizes instead of failing them
    desc.args_size = SIZE_MAX / 2;
    EXPECT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_ERROR);
#endif
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(runs.load(), 0);
}

} // namespace
