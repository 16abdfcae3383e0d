// Issue 13: with a channel awake, a copy is handed off only where the channel keeps up with the
// caller copying it itself (Engine::channels_keep_up): the speeds by copy size
// (core/support/speed_by_size.h), the software backend's judgement from speeds its real channel
// measured on this machine, and halved copies cut where the channel and the caller end together.
#include "copy/software/software_backend.h"
#include "copy_done.h"
#include "support/speed_by_size.h"
#include "topo/topology.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using kupl::support::SpeedBySize;

TEST(SpeedBySize, CopiesOfOnePowerOfTwoAndShapeShareOneSpeed) {
    SpeedBySize speeds;
    EXPECT_EQ(speeds.ns_per_kib(64 << 10, false), 0u);
    speeds.add(64 << 10, false, 100);
    EXPECT_EQ(speeds.ns_per_kib(64 << 10, false), 100u);
    EXPECT_EQ(speeds.ns_per_kib((128 << 10) - 1, false), 100u);
    EXPECT_EQ(speeds.ns_per_kib(128 << 10, false), 0u);
    EXPECT_EQ(speeds.ns_per_kib((64 << 10) - 1, false), 0u);
    EXPECT_EQ(speeds.ns_per_kib(64 << 10, true), 0u) << "2D copies have speeds of their own";
    speeds.add(64 << 10, true, 300);
    EXPECT_EQ(speeds.ns_per_kib(64 << 10, true), 300u);
    EXPECT_EQ(speeds.ns_per_kib(64 << 10, false), 100u);
}

TEST(SpeedBySize, CopiesBelowAKibibyteAreNotMeasured) {
    SpeedBySize speeds;
    speeds.add(1023, false, 100);
    EXPECT_EQ(speeds.ns_per_kib(1023, false), 0u);
    EXPECT_EQ(speeds.ns_per_kib(1024, false), 0u);
    speeds.add(1024, false, 100);
    EXPECT_EQ(speeds.ns_per_kib(2047, false), 100u);
}

TEST(SpeedBySize, TheLargestClassTakesEveryLargerCopy) {
    SpeedBySize speeds;
    speeds.add(std::size_t{1} << 41, false, 7);
    EXPECT_EQ(speeds.ns_per_kib(std::size_t{1} << 50, false), 7u);
    EXPECT_EQ(speeds.ns_per_kib(~std::size_t{0}, false), 7u);
}

TEST(SpeedBySize, EachSampleMovesASpeedHalfWayAndAnOutlierAsFourTimesIt) {
    SpeedBySize speeds;
    speeds.add(1 << 20, false, 100);
    speeds.add(1 << 20, false, 200);
    EXPECT_EQ(speeds.ns_per_kib(1 << 20, false), 150u);
    speeds.add(1 << 20, false, 1000000); // a preempted copy: counts as 600
    EXPECT_EQ(speeds.ns_per_kib(1 << 20, false), 375u);
}

TEST(ShareToEndTogether, TheSlowerWorkerGetsTheSmallerShareAndEachKeepsAnEighth) {
    using kupl::support::share_to_end_together;
    EXPECT_DOUBLE_EQ(share_to_end_together(0, 100), 0.5) << "unmeasured: halves";
    EXPECT_DOUBLE_EQ(share_to_end_together(100, 0), 0.5);
    EXPECT_DOUBLE_EQ(share_to_end_together(100, 100), 0.5);
    EXPECT_DOUBLE_EQ(share_to_end_together(300, 100), 0.25); // 3x slower: a quarter, 0.75 of B's time each
    EXPECT_DOUBLE_EQ(share_to_end_together(100, 300), 0.75);
    EXPECT_DOUBLE_EQ(share_to_end_together(10000, 10), 0.125);
    EXPECT_DOUBLE_EQ(share_to_end_together(10, 10000), 0.875);
}

TEST(ShareToEndTogether, AWorkerThatComesLaterGetsLessAndBothStillEndTogether) {
    using kupl::support::share_to_end_together;
    // 100 KiB; A copies at 200 ns/KiB, B at 100: 1/3 without a delay (both end at 6.67 us).
    EXPECT_DOUBLE_EQ(share_to_end_together(200, 100, 100.0, 0), 1.0 / 3.0);
    // A comes 3 us late: 7 us of B's 10 are left to share, A takes 7/30 and both end at 7.67 us.
    const double share = share_to_end_together(200, 100, 100.0, 3000);
    EXPECT_DOUBLE_EQ(share, 7.0 / 30.0);
    EXPECT_NEAR(3000 + share * 100 * 200, (1 - share) * 100 * 100, 1e-6);
    // Later than B's whole copy: A keeps its eighth.
    EXPECT_DOUBLE_EQ(share_to_end_together(200, 100, 100.0, 20000), 0.125);
    EXPECT_DOUBLE_EQ(share_to_end_together(0, 100, 100.0, 3000), 0.5) << "unmeasured: halves";
}

using Done = kupl_test::CopyDone;

class ChannelSpeed : public ::testing::Test {
  protected:
    ChannelSpeed() {
        options_.plan = topology_.plan(kupl::topo::PlacementInputs{});
        options_.num_channels = 1;
        options_.split_threshold = 512 << 10;
        options_.halve_threshold = 64 << 10;
        options_.helpers = 1; // copies are halved; the channel copies both parts unless a test helps
    }
    // Copies `bytes` on the backend and checks every byte.
    void copy_on(kupl::copy::SoftwareBackend &backend, std::size_t bytes) {
        std::vector<unsigned char> src(bytes), dst(bytes);
        for (std::size_t i = 0; i < bytes; ++i)
            src[i] = static_cast<unsigned char>(i * 7 + 1);
        Done done;
        ASSERT_EQ(backend.submit(descriptor(dst.data(), src.data(), bytes), &done), nullptr);
        ASSERT_TRUE(done.wait_for(std::chrono::seconds(60)));
        ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0);
    }
    static kupl::copy::CopyDescriptor descriptor(void *dst, const void *src, std::size_t bytes) {
        kupl::copy::CopyDescriptor copy;
        copy.dst = dst;
        copy.src = src;
        copy.width = copy.dpitch = copy.spitch = bytes;
        return copy;
    }

    kupl::topo::Topology topology_;
    kupl::support::Counters counters_;
    kupl::copy::SoftwareBackendOptions options_;
};

TEST_F(ChannelSpeed, UnmeasuredChannelsCannotTell) {
    kupl::copy::SoftwareBackend backend(options_, topology_, counters_);
    const kupl::copy::CopyDescriptor copy = descriptor(nullptr, nullptr, 100 << 10);
    EXPECT_EQ(backend.ns_per_kib(copy.cost_bytes(), false), 0u);
    EXPECT_EQ(backend.hand_off_slowdown(copy, 1), 0.0);
}

TEST_F(ChannelSpeed, AWholeCopyMustBeAsFastAsTheCallerAHalvedOneAlwaysKeepsUp) {
    kupl::copy::SoftwareBackend backend(options_, topology_, counters_);
    const std::size_t halved = 100 << 10, whole = 40 << 10; // 64 KiB and more are halved
    copy_on(backend, halved);
    copy_on(backend, whole);
    // No caller helped: the channel took its part of the halved copy, then the caller's in 4
    // pieces; the whole copy in one.
    EXPECT_EQ(counters_.total(kupl::support::Counter::pieces_executed), 6u);

    const std::uint64_t halved_speed = backend.ns_per_kib(halved, false);
    ASSERT_GT(halved_speed, 0u) << "the channel measured its pieces";
    EXPECT_EQ(backend.ns_per_kib(halved, true), 0u) << "no 2D copy ran";
    const kupl::copy::CopyDescriptor halved_copy = descriptor(nullptr, nullptr, halved);
    // Cut where both end together: at equal speeds each copies half, in half the caller's time.
    EXPECT_DOUBLE_EQ(backend.hand_off_slowdown(halved_copy, halved_speed), 0.5);
    EXPECT_DOUBLE_EQ(backend.hand_off_slowdown(halved_copy, 3 * halved_speed), 0.25);
    EXPECT_LT(backend.hand_off_slowdown(halved_copy, 1), 1.0) << "however fast the caller";
    EXPECT_EQ(backend.hand_off_slowdown(halved_copy, 0), 0.0) << "the caller unmeasured: cannot tell";

    const std::uint64_t whole_speed = backend.ns_per_kib(whole, false);
    ASSERT_GT(whole_speed, 0u);
    const kupl::copy::CopyDescriptor whole_copy = descriptor(nullptr, nullptr, whole);
    EXPECT_DOUBLE_EQ(backend.hand_off_slowdown(whole_copy, whole_speed), 1.0);
    EXPECT_DOUBLE_EQ(backend.hand_off_slowdown(whole_copy, 4 * whole_speed), 0.25);
}

// A halved copy is cut where the measured speeds say, wherever that is: with this thread taking a
// part as a waiting caller does and the channel the other (so both speeds are measured and the
// cut moves from the middle), every byte lands, 1D (an odd length) and 2D (the gaps between rows
// untouched). In even rounds this thread helps only once the channel has come: the channel is
// parked between rounds, and a caller who helps at once, spinning while the channel wakes, may
// take the channel part too (help_one), so the channel would never measure its speed.
TEST_F(ChannelSpeed, UnevenlyCutCopiesCopyEveryByte) {
    kupl::copy::SoftwareBackend backend(options_, topology_, counters_);
    const auto help_as_a_waiting_caller = [&](int round, std::uint64_t pieces_before) {
        const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (round % 2 == 0 && backend.busy_threads() == 0 &&
               counters_.total(kupl::support::Counter::pieces_executed) == pieces_before) {
            ASSERT_LT(std::chrono::steady_clock::now(), limit) << "the channel never came";
            std::this_thread::yield();
        }
        backend.help_one(); // one part (either), as a caller who waits; the channel the other
    };
    const std::size_t bytes = (200 << 10) + 13;
    std::vector<unsigned char> src(bytes), dst(bytes + 64);
    for (std::size_t i = 0; i < bytes; ++i)
        src[i] = static_cast<unsigned char>(i * 11 + 7);
    const std::size_t width = 100, pitch = 4160, rows = 1000; // 1000 x 192 B of cost: halved
    std::vector<unsigned char> src2d(rows * pitch), dst2d(rows * pitch);
    for (std::size_t i = 0; i < src2d.size(); ++i)
        src2d[i] = static_cast<unsigned char>(i * 5 + 3);
    for (int round = 0; round < 50; ++round) {
        std::memset(dst.data(), 0xee, dst.size());
        Done done;
        std::uint64_t pieces = counters_.total(kupl::support::Counter::pieces_executed);
        ASSERT_EQ(backend.submit(descriptor(dst.data(), src.data(), bytes), &done), nullptr);
        help_as_a_waiting_caller(round, pieces);
        ASSERT_TRUE(done.wait_for(std::chrono::seconds(60)));
        ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << "round " << round;
        for (std::size_t i = bytes; i < dst.size(); ++i)
            ASSERT_EQ(dst[i], 0xee) << "round " << round << ", byte " << i << " past the end";

        std::memset(dst2d.data(), 0xee, dst2d.size());
        kupl::copy::CopyDescriptor copy2d;
        copy2d.dst = dst2d.data();
        copy2d.src = src2d.data();
        copy2d.width = width;
        copy2d.height = rows;
        copy2d.dpitch = copy2d.spitch = pitch;
        Done done2d;
        pieces = counters_.total(kupl::support::Counter::pieces_executed);
        ASSERT_EQ(backend.submit(copy2d, &done2d), nullptr);
        help_as_a_waiting_caller(round, pieces);
        ASSERT_TRUE(done2d.wait_for(std::chrono::seconds(60)));
        for (std::size_t r = 0; r < rows; ++r) {
            ASSERT_EQ(std::memcmp(dst2d.data() + r * pitch, src2d.data() + r * pitch, width), 0)
                << "round " << round << ", row " << r;
            for (std::size_t i = width; r + 1 < rows && i < pitch; ++i)
                ASSERT_EQ(dst2d[r * pitch + i], 0xee)
                    << "round " << round << ", row " << r << " gap byte " << i;
        }
    }
    // Two parts a copy; the caller's in up to 4 pieces when the channel came to it first.
    EXPECT_GE(counters_.total(kupl::support::Counter::pieces_executed), 200u);
    EXPECT_LE(counters_.total(kupl::support::Counter::pieces_executed), 500u);
    EXPECT_GT(backend.ns_per_kib(bytes, false), 0u);
    EXPECT_GT(backend.ns_per_kib(rows * 192, true), 0u);
}

// A caller who waits for a halved copy at once takes the part cut for it, the second, even when
// it comes before the channel (which then takes the first). Here the channel is busy with a
// piece of a long copy when the halved one (of higher priority) comes, so the caller is first,
// and the copy's last byte is its own.
TEST_F(ChannelSpeed, AWaitingCallerTakesThePartCutForItEvenWhenItComesFirst) {
    kupl::copy::SoftwareBackend backend(options_, topology_, counters_);
    const std::size_t long_bytes = 16 << 20; // split: pieces of 2 MiB, each far longer than a submit
    std::vector<unsigned char> long_src(long_bytes, 0x3c), long_dst(long_bytes);
    const std::size_t bytes = (100 << 10) + 5;
    std::vector<unsigned char> src(bytes), dst(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
        src[i] = static_cast<unsigned char>(i * 3 + 1);
    int first = 0;
    for (int round = 0; round < 20; ++round) {
        std::memset(dst.data(), 0, bytes);
        Done long_done, done;
        ASSERT_EQ(backend.submit(descriptor(long_dst.data(), long_src.data(), long_bytes), &long_done),
                  nullptr);
        kupl::copy::CopyDescriptor copy = descriptor(dst.data(), src.data(), bytes);
        copy.priority = 3;
        ASSERT_EQ(backend.submit(copy, &done), nullptr);
        if (backend.help_one()) {
            ++first;
            EXPECT_EQ(dst[bytes - 1], src[bytes - 1])
                << "round " << round << ": the caller took the channel's part";
        }
        ASSERT_TRUE(done.wait_for(std::chrono::seconds(60)));
        ASSERT_TRUE(long_done.wait_for(std::chrono::seconds(60)));
        ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << "round " << round;
    }
    ASSERT_EQ(long_dst[long_bytes - 1], 0x3c);
    EXPECT_GT(first, 0) << "the channel always came first: nothing tested";
}

TEST_F(ChannelSpeed, SplitCopiesLeaveTheSpeedsOfUnsplitOnesAlone) {
    kupl::copy::SoftwareBackend backend(options_, topology_, counters_);
    copy_on(backend, 2 << 20);
    EXPECT_EQ(backend.ns_per_kib(2 << 20, false), 0u);
    EXPECT_EQ(backend.ns_per_kib(256 << 10, false), 0u);
}

} // namespace
