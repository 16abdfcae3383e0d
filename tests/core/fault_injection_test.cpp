// Fault injection (kuplx_inject_copy_faults): a failed copy writes nothing, its
// waiter gets KUPL_ERROR with a reason, counters move, and the queue goes on working.
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

namespace {

struct FaultInjection : ::testing::Test {
    void SetUp() override { info = engine_info(); }
    void TearDown() override { kuplx_inject_copy_faults(0); }

    // Sizes that take each path: inline on the caller, one channel, split across channels.
    std::vector<size_t> sizes() const {
        std::vector<size_t> v = {64};
        if (info.inline_threshold > 0)
            v.push_back(info.inline_threshold + 1);
        v.push_back(std::max<size_t>(info.mt_threshold * 3, 2u << 20));
        return v;
    }
    kuplx_engine_info_t info{};
};

} // namespace

TEST_F(FaultInjection, EventWaiterGetsErrorWithReasonAndNothingIsWritten) {
    Queue q = make_queue();
    for (size_t n : sizes()) {
        SCOPED_TRACE("size " + std::to_string(n));
        auto src = pattern(n, n);
        std::vector<unsigned char> dst(n, 0);
        Event e = make_event();
        kuplx_counters_t before = counters();
        ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK)
            << "the failure belongs to the waiter, not the submit";
        EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
        EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE)
            << "a failed record is still complete";
        char why[256];
        std::memset(why, 'z', sizeof why);
        EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_ERROR);
        EXPECT_NE(std::memchr(why, '\0', sizeof why), nullptr) << "message not NUL-terminated";
        EXPECT_GT(std::strlen(why), 0u) << "no reason given";
        EXPECT_EQ(kuplx_event_get_error(e.get(), nullptr, 0), KUPL_ERROR);
        EXPECT_TRUE(all_zero(dst)) << "a failed copy wrote to its destination";
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR) << "queue_wait must report the failure too";
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK) << "a failure is reported once per queue wait";
        kuplx_counters_t after = counters();
        EXPECT_EQ(after.copies_failed - before.copies_failed, 1u);

        // The event can be recorded again and the next copy on the queue works.
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK);
        EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
        char clear[8] = "x";
        EXPECT_EQ(kuplx_event_get_error(e.get(), clear, sizeof clear), KUPL_OK);
        EXPECT_STREQ(clear, "");
        EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    }
}

TEST_F(FaultInjection, QueueWaitReportsFailureOfACopyWithoutEvent) {
    Queue q = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 1);
    std::vector<unsigned char> dst(n, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst));
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

TEST_F(FaultInjection, LaterWorkOnTheQueueIsUnaffected) {
    Queue q = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 2);
    std::vector<unsigned char> bad_dst(n, 0), good_dst(n, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    Event failed = make_event(), later = make_event();
    ASSERT_EQ(kupl_memcpy_async(bad_dst.data(), src.data(), n, q.get(), failed.get()), KUPL_OK);
    bool item_ran = false;
    ASSERT_EQ(submit_fn(q.get(), [&] { item_ran = true; }), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(good_dst.data(), src.data(), n, q.get(), later.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(later.get()), KUPL_OK) << "the failure leaked into a later record";
    EXPECT_EQ(kupl_event_wait(failed.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
    EXPECT_TRUE(item_ran);
    EXPECT_EQ(good_dst, src);
    EXPECT_TRUE(all_zero(bad_dst));
}

TEST_F(FaultInjection, CountsExactlyTheArmedNumberOfCopies) {
    Queue q = make_queue();
    const size_t n = std::max<size_t>(info.mt_threshold * 2, 1u << 20); // split copies count once
    auto src = pattern(n, 3);
    std::vector<std::vector<unsigned char>> dsts(5, std::vector<unsigned char>(n, 0));
    std::vector<Event> events;
    kuplx_counters_t before = counters();
    ASSERT_EQ(kuplx_inject_copy_faults(2), KUPL_OK);
    for (auto &d : dsts) {
        events.push_back(make_event());
        ASSERT_EQ(kupl_memcpy_async(d.data(), src.data(), n, q.get(), events.back().get()), KUPL_OK);
    }
    for (size_t i = 0; i < dsts.size(); ++i) {
        bool should_fail = i < 2;
        EXPECT_EQ(kupl_event_wait(events[i].get()), should_fail ? KUPL_ERROR : KUPL_OK) << "copy " << i;
        if (should_fail)
            EXPECT_TRUE(all_zero(dsts[i])) << "copy " << i;
        else
            EXPECT_EQ(dsts[i], src) << "copy " << i;
    }
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
    EXPECT_EQ(counters().copies_failed - before.copies_failed, 2u);
}

TEST_F(FaultInjection, ZeroDisarms) {
    Queue q = make_queue();
    ASSERT_EQ(kuplx_inject_copy_faults(3), KUPL_OK);
    ASSERT_EQ(kuplx_inject_copy_faults(0), KUPL_OK);
    auto src = pattern(5000, 4);
    std::vector<unsigned char> dst(5000, 0);
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), dst.size(), q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
}

TEST_F(FaultInjection, TwoDimensionalAndNullQueueCopies) {
    const size_t width = 300, height = 2000, pitch = 320;
    auto src = pattern(pitch * height, 5);
    std::vector<unsigned char> dst(pitch * height, 0);
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy2d_async(dst.data(), pitch, src.data(), pitch, width, height, q.get(), e.get()),
              KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst));
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);

    Event e2 = make_event();
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), 100000, nullptr, e2.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e2.get()), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst));
}

TEST_F(FaultInjection, SyncCopyThroughTheEngineReturnsError) {
    const size_t n = std::max<size_t>(info.sync_threshold, 4096) * 2;
    auto src = pattern(n, 6);
    std::vector<unsigned char> dst(n, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), n), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst));
    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), n), KUPL_OK);
    EXPECT_EQ(dst, src);
}

TEST_F(FaultInjection, ErrorMessageIsTruncatedToTheGivenSize) {
    Queue q = make_queue();
    std::vector<unsigned char> src(256, 1), dst(256, 0);
    Event e = make_event();
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), dst.size(), q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    char small[6];
    std::memset(small, 'z', sizeof small);
    EXPECT_EQ(kuplx_event_get_error(e.get(), small, 4), KUPL_ERROR);
    EXPECT_EQ(small[3], '\0') << "not NUL-terminated within size";
    EXPECT_EQ(small[4], 'z') << "wrote past size";
    EXPECT_EQ(small[5], 'z');
}

// An event recorded after a failed copy covers it, so its wait fails too.
TEST_F(FaultInjection, EventRecordedAfterAFailedCopyReportsIt) {
    Queue q = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 7);
    std::vector<unsigned char> dst(n, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    char why[128] = "";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_ERROR);
    EXPECT_GT(std::strlen(why), 0u);
    EXPECT_TRUE(all_zero(dst));
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
}
