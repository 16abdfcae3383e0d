// Thread safety of handle lifetimes: destroying a queue or event while other
// threads use it, churn of create/destroy, and deep queues of outstanding work.
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

// Copies accepted before the destroy must land; after it, submits fail cleanly.
TEST(Concurrency, DestroyQueueWhileOtherThreadsSubmit) {
    kupl_queue_h q = kupl_queue_create();
    ASSERT_NE(q, nullptr);
    const size_t n = 64u << 10;
    const auto src = pattern(n, 1);
    std::atomic<int> accepted{0}, rejected{0}, broken{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            std::vector<unsigned char> dst(n);
            Event e = make_event();
            while (!go.load()) {
            }
            for (;;) {
                std::fill(dst.begin(), dst.end(), 0);
                if (kupl_memcpy_async(dst.data(), src.data(), n, q, e.get()) != KUPL_OK) {
                    rejected.fetch_add(1);
                    break;
                }
                accepted.fetch_add(1);
                if (kupl_event_wait(e.get()) != KUPL_OK || dst != src)
                    broken.fetch_add(1);
            }
        });
    go = true;
    auto t0 = std::chrono::steady_clock::now(); // let every thread get some copies in first
    while (accepted.load() < 40 && seconds_since(t0) < 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kupl_queue_destroy(q);
    for (auto &t : threads)
        t.join();
    EXPECT_GT(accepted.load(), 0);
    EXPECT_EQ(rejected.load(), 4) << "every thread must see its queue gone";
    EXPECT_EQ(broken.load(), 0) << "an accepted copy did not complete correctly";
}

// Waiters on an event that another thread destroys must return (either way), not hang or crash.
TEST(Concurrency, DestroyEventWhileOtherThreadsWaitOnIt) {
    Queue q = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    kupl_event_h e = kupl_event_create();
    ASSERT_EQ(kupl_event_record(e, q.get()), KUPL_OK);
    std::atomic<int> returned{0};
    std::vector<std::thread> waiters;
    for (int t = 0; t < 4; ++t)
        waiters.emplace_back([&] {
            int rc = kupl_event_wait(e);
            if (rc == KUPL_OK || rc == KUPL_ERROR)
                returned.fetch_add(1);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kupl_event_destroy(e);
    gate.open();
    for (auto &t : waiters)
        t.join();
    EXPECT_EQ(returned.load(), 4);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

// Handles are recycled many times without leaking capacity or confusing old ones.
TEST(Concurrency, CreateDestroyChurnFromSeveralThreads) {
    const int rounds = scaled(2000);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            unsigned char src[256], dst[256];
            std::memset(src, t + 1, sizeof src);
            for (int i = 0; i < rounds; ++i) {
                kupl_queue_h q = kupl_queue_create();
                kupl_event_h e = kupl_event_create();
                std::memset(dst, 0, sizeof dst);
                if (!q || !e || kupl_memcpy_async(dst, src, sizeof dst, q, e) != KUPL_OK ||
                    kupl_event_wait(e) != KUPL_OK || std::memcmp(dst, src, sizeof dst) != 0)
                    failures.fetch_add(1);
                kupl_event_destroy(e);
                kupl_queue_destroy(q);
            }
        });
    for (auto &t : threads)
        t.join();
    EXPECT_EQ(failures.load(), 0);
}

// A stale handle must not reach the object that reused its slot.
TEST(Concurrency, StaleHandleDoesNotAliasANewObject) {
    kupl_queue_h old_q = kupl_queue_create();
    kupl_event_h old_e = kupl_event_create();
    kupl_queue_destroy(old_q);
    kupl_event_destroy(old_e);
    std::vector<Queue> queues;
    std::vector<Event> events;
    for (int i = 0; i < 64; ++i) {
        queues.push_back(make_queue());
        events.push_back(make_event());
    }
    for (auto &q : queues)
        if (q.get() == old_q)
            ADD_FAILURE() << "a new queue got the destroyed queue's handle value";
    for (auto &e : events)
        if (e.get() == old_e)
            ADD_FAILURE() << "a new event got the destroyed event's handle value";
    EXPECT_EQ(kupl_queue_wait(old_q), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(old_e), KUPL_ERROR);
}

// Deep queues: many small copies outstanding (held behind a gate) before one wait.
TEST(Concurrency, ManySmallCopiesOutstandingThenOneWait) {
    const size_t count = size_t(scaled(100000));
    std::vector<uint64_t> src(count), dst(count, 0);
    for (size_t i = 0; i < count; ++i)
        src[i] = i * 0x9e3779b97f4a7c15ull + 1;
    Queue q = make_queue();
    Gate gate(std::chrono::seconds(30)); // everything queues up behind it, nothing runs inline
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(kupl_memcpy_async(&dst[i], &src[i], sizeof(uint64_t), q.get(), nullptr), KUPL_OK) << i;
    EXPECT_EQ(std::count(dst.begin(), dst.end(), 0u), long(count)) << "copies ran ahead of the gate";
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), count * sizeof(uint64_t)), SIZE_MAX);
}

// kupl_queue_wait covers everything enqueued before the call, also when other
// threads keep submitting to and waiting on the same queue.
TEST(Concurrency, SharedQueueSubmitAndWaitFromManyThreads) {
    Queue q = make_queue();
    const size_t n = 100u << 10;
    std::atomic<int> broken{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            std::vector<unsigned char> src = pattern(n, t), dst(n);
            for (int i = 0; i < scaled(200); ++i) {
                src[0] = static_cast<unsigned char>(i);
                std::fill(dst.begin(), dst.end(), 0);
                if (kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr) != KUPL_OK ||
                    kupl_queue_wait(q.get()) != KUPL_OK || dst != src)
                    broken.fetch_add(1);
            }
        });
    for (auto &t : threads)
        t.join();
    EXPECT_EQ(broken.load(), 0);
}

// Two queues hand a token back and forth through events: every step's item runs
// strictly after the other queue's previous step. A lost wake-up hangs (ctest timeout). Many
// steps: under qemu-aarch64 an op that began waiting for an event as its record completed was
// lost (see Event::complete) once in 10 to 200 runs of 4,000 steps, so a run takes 16,000.
TEST(Concurrency, PingPongAcrossQueues) {
    const int steps = scaled(16000);
    Queue qs[2] = {make_queue(), make_queue()};
    std::vector<Event> events;
    for (int i = 0; i < steps; ++i)
        events.push_back(make_event());
    std::atomic<int> next{0}, out_of_order{0};
    for (int i = 0; i < steps; ++i) {
        kupl_queue_h q = qs[i % 2].get();
        if (i > 0) {
            ASSERT_EQ(kuplx_queue_wait_event_async(q, events[i - 1].get()), KUPL_OK);
        }
        ASSERT_EQ(submit_fn(q,
                            [&, i] {
                                if (next.load() != i)
                                    out_of_order.fetch_add(1);
                                next.store(i + 1);
                            }),
                  KUPL_OK);
        ASSERT_EQ(kupl_event_record(events[i].get(), q), KUPL_OK);
    }
    ASSERT_EQ(kupl_event_wait(events.back().get()), KUPL_OK);
    EXPECT_EQ(next.load(), steps);
    EXPECT_EQ(out_of_order.load(), 0);
}

// Many live queues, each with pending copies that go through the channels.
TEST(Concurrency, AThousandQueuesWithPendingCopies) {
    const int count = scaled(1000);
    const size_t n = std::max<size_t>(engine_info().inline_threshold * 2, 4096);
    auto src = pattern(n, 3);
    std::vector<Queue> queues;
    std::vector<std::vector<unsigned char>> dsts(count, std::vector<unsigned char>(n, 0));
    for (int i = 0; i < count; ++i) {
        queues.push_back(make_queue());
        ASSERT_NE(queues.back(), nullptr) << i;
        ASSERT_EQ(kupl_memcpy_async(dsts[i].data(), src.data(), n, queues.back().get(), nullptr), KUPL_OK);
    }
    for (int i = 0; i < count; ++i) {
        ASSERT_EQ(kupl_queue_wait(queues[i].get()), KUPL_OK) << i;
        ASSERT_EQ(dsts[i], src) << i;
    }
}
