// Issue 13: whether a copy submitted while every channel sleeps is worth waking one for is
// judged from measurements (core/support/wake_cost.h): the estimator itself, and the software
// backend with real channel threads measuring real wake-ups and pieces on this machine.
#include "copy/software/software_backend.h"
#include "copy_done.h"
#include "support/wake_cost.h"
#include "topo/topology.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

using kupl::support::RunningEstimate;
using kupl::support::WakeCost;

TEST(RunningEstimate, StartsAtItsFirstSampleThenMovesAQuarterOfTheWay) {
    RunningEstimate e;
    EXPECT_EQ(e.get(), 0u);
    e.add(1000);
    EXPECT_EQ(e.get(), 1000u);
    e.add(2000);
    EXPECT_EQ(e.get(), 1250u);
    e.add(500);
    EXPECT_EQ(e.get(), 1250u - (1250u - 500u) / 4);
}

TEST(RunningEstimate, OneOutlierMovesItAtMostAsFourTimesTheEstimateWould) {
    RunningEstimate e;
    e.add(1000);
    e.add(1000000000); // a preempted thread: counts as 4000
    EXPECT_EQ(e.get(), 1750u);
    e.add(0); // counts as a quarter of the estimate
    EXPECT_EQ(e.get(), 1750u - (1750u - 437u) / 4);
}

// The estimate is read on other threads' hot paths: a store that would move it by 1/32 or less is
// left out (each store takes the cache line from those threads).
TEST(RunningEstimate, AMoveOfAThirtySecondOrLessIsNotStored) {
    RunningEstimate e;
    e.add(1000);
    e.add(1100); // would move it by 25 (1000 / 40)
    EXPECT_EQ(e.get(), 1000u);
    e.add(1200); // by 50
    EXPECT_EQ(e.get(), 1050u);
}

TEST(WakeCost, TheFirstWorkerToWakeAfterACallMeasuresItsLatency) {
    WakeCost cost;
    EXPECT_EQ(cost.latency_ns(), 0u);
    EXPECT_EQ(cost.call_ns(), 0u);
    cost.woke(5000); // no call outstanding: spurious, measures nothing
    EXPECT_EQ(cost.latency_ns(), 0u);
    cost.call_made(10000, 12000);
    EXPECT_EQ(cost.call_ns(), 2000u);
    cost.woke(40000);
    EXPECT_EQ(cost.latency_ns(), 30000u);
    cost.woke(90000); // a second worker woken by the same call
    EXPECT_EQ(cost.latency_ns(), 30000u);
}

TEST(WakeCost, AWakeUpThatTookLongerThanAnyWakeUpMeasuresNothing) {
    WakeCost cost;
    cost.call_made(1000, 2000);
    cost.woke(1000 + 200'000'000); // 200 ms: woken by something else, not slowly by that call
    EXPECT_EQ(cost.latency_ns(), 0u);
}

using Done = kupl_test::CopyDone;

TEST(WorthWaking, JudgedFromWakeUpsAndPiecesMeasuredOnThisMachine) {
    kupl::topo::Topology topology;
    kupl::support::Counters counters;
    kupl::copy::SoftwareBackendOptions options;
    options.plan = topology.plan(kupl::topo::PlacementInputs{});
    options.num_channels = 1;
    options.helpers = 0; // nobody helps: the channel copies every piece
    options.spin_us = 0; // parks at once
    kupl::copy::SoftwareBackend backend(options, topology, counters);

    // Nothing measured yet: every copy is worth waking for (and waking measures).
    EXPECT_TRUE(backend.worth_waking(1));

    constexpr std::size_t kBytes = 1 << 20;
    std::vector<unsigned char> src(kBytes), dst(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i)
        src[i] = static_cast<unsigned char>(i * 13 + 5);
    // A 64-byte copy takes nanoseconds, a wake-up microseconds at the very least: asked right
    // after a measured wake-up, it is not worth one. On a loaded machine a round may measure
    // nothing (the channel had not parked yet) and the last measurement may be older than the
    // 50 ms the backend trusts, so one of a few rounds must say so.
    bool tiny_copy_worth_waking = true;
    for (int round = 0; round < 20 && tiny_copy_worth_waking; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10)); // the channel parks
        std::memset(dst.data(), 0, kBytes);
        kupl::copy::CopyDescriptor copy;
        copy.dst = dst.data();
        copy.src = src.data();
        copy.width = copy.dpitch = copy.spitch = kBytes;
        Done done;
        ASSERT_EQ(backend.submit(copy, &done), nullptr);
        ASSERT_TRUE(done.wait_for(std::chrono::seconds(60)));
        tiny_copy_worth_waking = backend.worth_waking(64);
        ASSERT_EQ(std::memcmp(dst.data(), src.data(), kBytes), 0);
    }
    EXPECT_GE(counters.total(kupl::support::Counter::worker_wakes), 1u);
    EXPECT_FALSE(tiny_copy_worth_waking);

    // Long copies always wake a channel, whatever was measured (8 split thresholds and more).
    EXPECT_TRUE(backend.worth_waking(8 * options.split_threshold));
    EXPECT_TRUE(backend.worth_waking(std::size_t{1} << 30));
    // A measurement 50 ms old is taken again: the next copy is handed off, whatever its size.
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    EXPECT_TRUE(backend.worth_waking(64));
}

} // namespace
