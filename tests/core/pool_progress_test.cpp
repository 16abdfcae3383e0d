// Host items of different queues all make progress (issue 10 item 4), however many executor
// threads the pool was configured with: items that block in a kupl wait for work that still
// needs a thread, and items that meet at a spin barrier without calling kupl at all (OpenMP
// target regions launched together do). Run with a small pool (KUPL_NUM_EXECUTORS, see
// CMakeLists.txt); each barrier gives up after 20 s so a starved pool fails instead of hanging.
#include "test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

using namespace kupl_test;

namespace {

int executors() {
    const int n = engine_info().num_executors;
    return n > 0 ? n : 1;
}

/// Waits until `count` reaches `target`, polling (no kupl call); false after 20 s.
bool spin_until(const std::atomic<int> &count, int target) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (count.load() < target)
        if (std::chrono::steady_clock::now() > end)
            return false;
    return true;
}

// N = executors queues each get an item that waits for queue S while S still holds host items.
TEST(PoolProgress, ItemsWaitingForAQueueLeaveItThreads) {
    const int n = executors();
    Queue s = make_queue();
    std::vector<Queue> waiters;
    for (int i = 0; i < n; ++i)
        waiters.push_back(make_queue());
    std::atomic<int> entered{0};
    std::atomic<bool> go{false};
    std::atomic<int> wait_ok{0};
    std::atomic<int> s_items{0};
    for (auto &q : waiters)
        ASSERT_EQ(submit_fn(q.get(),
                            [&] {
                                entered.fetch_add(1);
                                while (!go.load())
                                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                                if (kupl_queue_wait(s.get()) == KUPL_OK && s_items.load() == 4)
                                    wait_ok.fetch_add(1);
                            }),
                  KUPL_OK);
    ASSERT_TRUE(spin_until(entered, n)); // every executor thread holds a waiter now
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(submit_fn(s.get(), [&] { s_items.fetch_add(1); }), KUPL_OK);
    go.store(true);
    for (auto &q : waiters)
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(s_items.load(), 4);
    EXPECT_EQ(wait_ok.load(), n);
}

// A chain: item i waits for the queue of item i + 1, the last one for host items on S; twice
// as many waits as threads.
TEST(PoolProgress, ChainOfWaitsLongerThanThePool) {
    const int n = 2 * executors() + 1;
    std::vector<Queue> queues;
    for (int i = 0; i <= n; ++i)
        queues.push_back(make_queue());
    std::atomic<int> ok{0};
    std::atomic<bool> s_ran{false};
    Gate gate;
    ASSERT_EQ(gate.block(queues[n].get()), KUPL_OK);
    ASSERT_EQ(submit_fn(queues[n].get(), [&] { s_ran.store(true); }), KUPL_OK);
    for (int i = n - 1; i >= 0; --i) {
        kupl_queue_h next = queues[i + 1].get();
        ASSERT_EQ(submit_fn(queues[i].get(),
                            [&, next] {
                                if (kupl_queue_wait(next) == KUPL_OK)
                                    ok.fetch_add(1);
                            }),
                  KUPL_OK);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open();
    EXPECT_EQ(kupl_queue_wait(queues[0].get()), KUPL_OK);
    for (auto &q : queues)
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(s_ran.load());
    EXPECT_EQ(ok.load(), n);
    EXPECT_FALSE(gate.timed_out());
}

// executors + 2 items on their own queues meet at a barrier they spin on, never calling kupl.
TEST(PoolProgress, ItemsMeetingAtASpinBarrierAllRun) {
    const int n = executors() + 2;
    std::vector<Queue> queues;
    for (int i = 0; i < n; ++i)
        queues.push_back(make_queue());
    std::atomic<int> arrived{0};
    std::atomic<int> passed{0};
    for (auto &q : queues)
        ASSERT_EQ(submit_fn(q.get(),
                            [&] {
                                arrived.fetch_add(1);
                                if (spin_until(arrived, n))
                                    passed.fetch_add(1);
                            }),
                  KUPL_OK);
    for (auto &q : queues)
        EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(passed.load(), n) << "only " << arrived.load() << " of " << n << " items ever ran";
}

} // namespace
