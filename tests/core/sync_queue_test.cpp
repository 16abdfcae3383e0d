// The synchronous queue (kupl_queue_acquire(KUPL_ASYNC_SYNC)) runs its work inline, on the
// submitting thread, and behaves like any queue for calls made from its own items (issue 10
// item 5): a wait on it fails instead of deadlocking, a nested submit works (it runs at once,
// inside the item), and exit() works (exit_drain_test.cpp).
#include "test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace kupl_test;

namespace {

kupl_queue_h sync_queue() {
    return kupl_queue_acquire(KUPL_ASYNC_SYNC);
}

TEST(SyncQueue, WaitFromOwnItemFails) {
    kupl_queue_h sync = sync_queue();
    ASSERT_NE(sync, nullptr);
    int wait_rc = 0;
    int wait_event_rc = 0;
    Event event = make_event();
    ASSERT_EQ(kupl_event_record(event.get(), sync), KUPL_OK);
    ASSERT_EQ(submit_fn(sync,
                        [&] {
                            wait_rc = kupl_queue_wait(sync);
                            wait_event_rc = kupl_queue_wait_event(sync, event.get());
                        }),
              KUPL_OK);
    EXPECT_EQ(wait_rc, KUPL_ERROR);
    EXPECT_EQ(wait_event_rc, KUPL_ERROR);
    // Outside its items the queue is waited on as usual.
    EXPECT_EQ(kupl_queue_wait(sync), KUPL_OK);
    EXPECT_EQ(kupl_event_query(event.get()), KUPL_EVENT_STATUS_COMPLETE);
}

TEST(SyncQueue, NestedSubmitRunsInsideTheItem) {
    kupl_queue_h sync = sync_queue();
    ASSERT_NE(sync, nullptr);
    std::vector<int> steps;
    int nested_rc = 0;
    const auto caller = std::this_thread::get_id();
    std::thread::id nested_on;
    ASSERT_EQ(submit_fn(sync,
                        [&] {
                            steps.push_back(1);
                            nested_rc = submit_fn(sync, [&] {
                                nested_on = std::this_thread::get_id();
                                steps.push_back(2);
                            });
                            steps.push_back(3);
                        }),
              KUPL_OK);
    EXPECT_EQ(nested_rc, KUPL_OK);
    EXPECT_EQ(steps, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(nested_on, caller);
}

// Four threads submit items and copies at once: every item runs on its submitter, inside the
// call, and every copy has landed when the call returns.
TEST(SyncQueue, WorkRunsOnTheSubmittingThread) {
    kupl_queue_h sync = sync_queue();
    ASSERT_NE(sync, nullptr);
    constexpr int threads = 4;
    const int items = scaled(2000);
    std::atomic<int> elsewhere{0};
    std::atomic<int> not_done_on_return{0};
    std::atomic<int> errors{0};
    std::vector<std::thread> submitters;
    for (int t = 0; t < threads; ++t)
        submitters.emplace_back([&, t] {
            const auto self = std::this_thread::get_id();
            const auto src = pattern(4096 + 64 * t, static_cast<uint64_t>(t) + 1);
            std::vector<unsigned char> dst(src.size());
            for (int i = 0; i < items; ++i) {
                bool ran = false;
                if (submit_fn(sync, [&] {
                        ran = true;
                        if (std::this_thread::get_id() != self)
                            elsewhere.fetch_add(1);
                        // A moment of work, so the four threads' items overlap.
                        for (volatile int spin = 0; spin < 20000; spin = spin + 1) {
                        }
                    }) != KUPL_OK)
                    errors.fetch_add(1);
                if (!ran)
                    not_done_on_return.fetch_add(1);
                if (i % 16 == 0) {
                    std::fill(dst.begin(), dst.end(), 0);
                    if (kupl_memcpy_async(dst.data(), src.data(), src.size(), sync, nullptr) != KUPL_OK)
                        errors.fetch_add(1);
                    if (dst != src)
                        not_done_on_return.fetch_add(1);
                }
            }
        });
    for (auto &thread : submitters)
        thread.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(elsewhere.load(), 0)
        << "items of the synchronous queue ran on another thread than their submitter";
    EXPECT_EQ(not_done_on_return.load(), 0);
    EXPECT_EQ(kupl_queue_wait(sync), KUPL_OK);
}

// An item of an ordinary queue that submits to the synchronous queue runs that work inline
// too; from inside it, waiting on the outer queue is still a wait from its own item.
TEST(SyncQueue, InsideAnItemOfAnotherQueue) {
    kupl_queue_h sync = sync_queue();
    Queue outer = make_queue();
    std::atomic<int> inner_wait_rc{0};
    std::atomic<bool> same_thread{false};
    ASSERT_EQ(submit_fn(outer.get(),
                        [&] {
                            const auto self = std::this_thread::get_id();
                            submit_fn(sync, [&] {
                                same_thread.store(std::this_thread::get_id() == self);
                                inner_wait_rc.store(kupl_queue_wait(outer.get()));
                            });
                        }),
              KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(outer.get()), KUPL_OK);
    EXPECT_TRUE(same_thread.load());
    EXPECT_EQ(inner_wait_rc.load(), KUPL_ERROR);
}

// A failed copy on the synchronous queue fails its own call and its event, not a later wait.
TEST(SyncQueue, FailedCopyFailsItsCall) {
    kupl_queue_h sync = sync_queue();
    const auto src = pattern(64 << 10, 4);
    std::vector<unsigned char> dst(src.size());
    Event event = make_event();
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), src.size(), sync, event.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_wait(event.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), src.size(), sync, event.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
    EXPECT_EQ(kupl_event_wait(event.get()), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(sync), KUPL_OK);
}

// Its work is counted once, like any queue's (kuplx_get_counters): each item, and each copy's
// bytes, although the copies are counted as they run and the items when they are settled.
TEST(SyncQueue, WorkIsCountedOnce) {
    kupl_queue_h sync = sync_queue();
    ASSERT_NE(sync, nullptr);
    std::vector<unsigned char> src(1 << 20, 7), dst(1 << 20, 0);
    kuplx_counters_t before{}, after{};
    ASSERT_EQ(kuplx_get_counters(&before), KUPL_OK);
    int ran = 0;
    for (int i = 0; i < 5; ++i)
        ASSERT_EQ(submit_fn(sync, [&ran] { ++ran; }), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), src.size(), sync, nullptr), KUPL_OK);
    const kuplx_copy_piece_t pieces[2] = {{dst.data(), 0, src.data(), 0, 4096, 1},
                                          {dst.data() + 8192, 0, src.data(), 0, 100, 1}};
    ASSERT_EQ(kuplx_memcpy_batch_async(pieces, 2, sync, nullptr), KUPL_OK);
    ASSERT_EQ(kuplx_get_counters(&after), KUPL_OK);
    EXPECT_EQ(ran, 5);
    EXPECT_EQ(after.host_items - before.host_items, 5u);
    EXPECT_EQ(after.copies_submitted - before.copies_submitted, 3u);
    EXPECT_EQ(after.bytes_copied - before.bytes_copied, src.size() + 4096 + 100);
    EXPECT_EQ(after.copies_failed - before.copies_failed, 0u);
}

} // namespace
