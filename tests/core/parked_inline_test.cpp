// Issue 13: a copy the engine would not split, submitted after a pause (every copy channel
// asleep), runs on the calling thread instead of waking a channel; a copy long enough to pay for
// the wake-up reaches the channels (which split copies pay is measured: wake_cost_test.cpp).
// Counters tell where each copy ran; every byte is checked.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "kupl.h"
#include "kupl_ext.h"

namespace {

struct Copied {
    std::uint64_t inline_copies, pieces; // pieces: run by channels or helping callers
};

// Sleeps until the channels have long finished spinning (KUPL_SPIN_US, 50 us by default), then
// copies `bytes` with kupl_memcpy_async + kupl_event_wait and returns where it ran.
Copied copy_after_pause(std::size_t bytes) {
    std::vector<unsigned char> src(bytes), dst(bytes, 0);
    for (std::size_t i = 0; i < bytes; ++i)
        src[i] = static_cast<unsigned char>(i * 7 + 3);
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    EXPECT_NE(queue, nullptr);
    EXPECT_NE(event, nullptr);
    kuplx_engine_info_t info{};
    EXPECT_EQ(kuplx_get_engine_info(&info), KUPL_OK);
    std::this_thread::sleep_for(std::chrono::microseconds(20 * info.spin_us + 20000));
    kuplx_counters_t before{}, after{};
    EXPECT_EQ(kuplx_get_counters(&before), KUPL_OK);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), bytes, queue, event), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(event), KUPL_OK);
    EXPECT_EQ(kuplx_get_counters(&after), KUPL_OK);
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0);
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
    return {after.copies_inline - before.copies_inline, after.pieces_executed - before.pieces_executed};
}

TEST(ParkedInline, UnsplitCopyAfterAPauseRunsOnTheCaller) {
    kuplx_engine_info_t info{};
    ASSERT_EQ(kuplx_get_engine_info(&info), KUPL_OK);
    // Above the inline threshold, below the split threshold: before issue 13 a channel took it.
    const std::size_t bytes =
        info.inline_threshold * 4 < info.mt_threshold ? info.inline_threshold * 4 : info.inline_threshold;
    ASSERT_LT(bytes, info.mt_threshold);
    // On an oversubscribed machine a channel can be preempted while it still counts as spinning
    // (and so as ready): then the copy is handed over, rightly. It cannot stay so for long: one of
    // a few tries finds every channel asleep, and that copy must run on the caller.
    bool ran_inline = false;
    for (int attempt = 0; attempt < 20 && !ran_inline; ++attempt) {
        const Copied c = copy_after_pause(bytes);
        // One copy, run in one place: on the caller, or handed over (then in two halves when it
        // is at least 4 inline thresholds long, which this one is by default).
        EXPECT_TRUE((c.inline_copies == 1 && c.pieces == 0) ||
                    (c.inline_copies == 0 && c.pieces >= 1 && c.pieces <= 2))
            << c.inline_copies << " inline, " << c.pieces << " pieces";
        ran_inline = c.inline_copies == 1;
    }
    EXPECT_TRUE(ran_inline) << "a copy below the split threshold was handed to sleeping channels";
}

TEST(ParkedInline, LongCopyAfterAPauseGoesToTheChannels) {
    // 64 MiB takes milliseconds anywhere; a wake-up, even on a virtual machine, far less.
    const Copied c = copy_after_pause(64 << 20);
    EXPECT_EQ(c.inline_copies, 0u);
    EXPECT_GE(c.pieces, 2u); // cut into pieces for the channels
}

// A stream of copies after a pause (submitted back to back, none waited for): the first runs on
// the caller, and once the stream adds up to what is worth a wake-up (at the latest 8 split
// thresholds: 4 MiB by default) the channels take the rest.
TEST(ParkedInline, AStreamOfCopiesAfterAPauseReachesTheChannels) {
    kuplx_engine_info_t info{};
    ASSERT_EQ(kuplx_get_engine_info(&info), KUPL_OK);
    const std::size_t each =
        info.inline_threshold * 4 < info.mt_threshold ? info.inline_threshold * 4 : info.inline_threshold;
    const std::size_t count = 10 * info.mt_threshold / each; // 10 split thresholds in all
    std::vector<unsigned char> src(each * count), dst(each * count);
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 11 + 1);
    kupl_queue_h queue = kupl_queue_create();
    ASSERT_NE(queue, nullptr);
    // Copies more than 100 us apart start a new stream: a preempted test may need another try.
    bool reached_channels = false;
    for (int attempt = 0; attempt < 10 && !reached_channels; ++attempt) {
        std::memset(dst.data(), 0, dst.size());
        std::this_thread::sleep_for(std::chrono::microseconds(20 * info.spin_us + 20000));
        kuplx_counters_t before{}, after{};
        ASSERT_EQ(kuplx_get_counters(&before), KUPL_OK);
        for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(kupl_memcpy_async(dst.data() + i * each, src.data() + i * each, each, queue, nullptr),
                      KUPL_OK);
        ASSERT_EQ(kupl_queue_wait(queue), KUPL_OK);
        ASSERT_EQ(kuplx_get_counters(&after), KUPL_OK);
        ASSERT_EQ(std::memcmp(dst.data(), src.data(), dst.size()), 0);
        EXPECT_GE(after.copies_inline - before.copies_inline, 1u); // the stream's first copy
        reached_channels = after.pieces_executed != before.pieces_executed;
    }
    EXPECT_TRUE(reached_channels) << "a stream of copies after a pause never woke a channel";
    kupl_queue_destroy(queue);
}

} // namespace
