// Event semantics: states, records, waits, and cross-queue dependencies (blocking
// kupl_queue_wait_event and non-blocking kuplx_queue_wait_event_async).
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

// A Gate item occupies an executor thread while it holds its queue; tests that
// also need other host items to run meanwhile need a second executor.
#define NEED_TWO_EXECUTORS()                                                                                 \
    do {                                                                                                     \
        if (engine_info().num_executors < 2)                                                                 \
            GTEST_SKIP() << "needs two executors: the gate item holds one";                                  \
    } while (0)

TEST(EventQuery, GoesCreatedSubmittedComplete) {
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED);
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_SUBMITTED);
    gate.open();
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    EXPECT_TRUE(gate.finished());
    EXPECT_FALSE(gate.timed_out());
}

TEST(EventQuery, InvalidEventIsError) {
    EXPECT_EQ(kupl_event_query(nullptr), KUPL_ERROR);
}

TEST(EventQuery, RecordOnIdleQueueCompletes) {
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK) << "waiting twice on a complete event";
}

TEST(EventRecord, WhileSubmittedIsAnErrorAndLeavesTheFirstRecord) {
    Queue q = make_queue(), other = make_queue();
    Event e = make_event();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_record(e.get(), q.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_record(e.get(), other.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_SUBMITTED);
    gate.open();
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_TRUE(gate.finished()) << "the event completed before the work of its first record";
}

TEST(EventRecord, CopyWithSubmittedEventIsRejectedAndNotRun) {
    Queue q = make_queue();
    Event e = make_event();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    const size_t n = 4096;
    auto src = pattern(n, 1);
    std::vector<unsigned char> dst(n, 0);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(dst.data(), 64, src.data(), 64, 64, 64, q.get(), e.get()), KUPL_ERROR);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(all_zero(dst)) << "a rejected copy still wrote";
}

TEST(EventRecord, RerecordAfterCompleteOnSameAndOtherQueue) {
    Queue q1 = make_queue(), q2 = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), q1.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q1.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);

    Gate gate;
    ASSERT_EQ(gate.block(q2.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q2.get()), KUPL_OK) << "re-record on another queue";
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_SUBMITTED)
        << "the new record must be the one tracked";
    gate.open();
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_TRUE(gate.finished());
}

TEST(EventRecord, CopyRecordsTheEventWhenBytesHaveLanded) {
    kuplx_engine_info_t info = engine_info();
    Queue q = make_queue();
    for (size_t n : {size_t(16), info.inline_threshold + 5, info.mt_threshold * 2 + 7}) {
        auto src = pattern(n, n);
        std::vector<unsigned char> dst(n, 0);
        Event e = make_event();
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK);
        EXPECT_NE(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED) << "a copy must record its event";
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
        EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX) << n;
        // The same event can be used by the next copy now that it is complete.
        ASSERT_EQ(kupl_memcpy_async(src.data(), dst.data(), n, q.get(), e.get()), KUPL_OK);
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    }
}

TEST(EventWait, NeverRecordedIsAnError) {
    Event e = make_event();
    Queue q = make_queue();
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_queue_wait_event(q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kuplx_queue_wait_event_async(q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED);
    // The queue is unharmed.
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

TEST(EventWait, SeveralThreadsWaitOnOneEvent) {
    Queue q = make_queue();
    Event e = make_event();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    std::atomic<int> ok{0}, early{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 6; ++i)
        waiters.emplace_back([&] {
            if (kupl_event_wait(e.get()) == KUPL_OK)
                ok.fetch_add(1);
            if (!gate.finished())
                early.fetch_add(1);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.open();
    for (auto &t : waiters)
        t.join();
    EXPECT_EQ(ok.load(), 6);
    EXPECT_EQ(early.load(), 0);
}

TEST(EventDestroy, SafeWhileInFlight) {
    Queue q = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    const size_t n = 2u << 20;
    auto src = pattern(n, 2);
    std::vector<unsigned char> dst(n, 0);
    kupl_event_h e1 = kupl_event_create(), e2 = kupl_event_create();
    ASSERT_EQ(kupl_event_record(e1, q.get()), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e2), KUPL_OK);
    kupl_event_destroy(e1);
    kupl_event_destroy(e2);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
}

TEST(EventDestroy, SafeWhileAnotherQueueWaitsOnIt) {
    Queue q1 = make_queue(), q2 = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q1.get()), KUPL_OK);
    kupl_event_h e = kupl_event_create();
    ASSERT_EQ(kupl_event_record(e, q1.get()), KUPL_OK);
    ASSERT_EQ(kuplx_queue_wait_event_async(q2.get(), e), KUPL_OK);
    std::atomic<bool> after{false};
    ASSERT_EQ(submit_fn(q2.get(), [&] { after = gate.finished(); }), KUPL_OK);
    kupl_event_destroy(e);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q2.get()), KUPL_OK);
    EXPECT_TRUE(after.load()) << "destroying the event dropped the dependency";
}

// The blocking form returns only once e's record and q's earlier work are done.
TEST(QueueWaitEvent, BlocksUntilEventAndEarlierWorkAreDone) {
    Queue q = make_queue(), other = make_queue();
    Gate on_other;
    Gate on_q;
    ASSERT_EQ(on_other.block(other.get()), KUPL_OK);
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), other.get()), KUPL_OK);
    ASSERT_EQ(on_q.block(q.get()), KUPL_OK);

    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        on_other.open();
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        on_q.open();
    });
    ASSERT_EQ(kupl_queue_wait_event(q.get(), e.get()), KUPL_OK);
    EXPECT_TRUE(on_other.finished()) << "returned before the event completed";
    EXPECT_TRUE(on_q.finished()) << "returned before the queue's earlier work was done";
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    opener.join();

    // Later work on q runs after it (and the queue keeps working).
    bool later_ran = false;
    ASSERT_EQ(submit_fn(q.get(), [&] { later_ran = true; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(later_ran);
}

TEST(QueueWaitEvent, EventOnSameQueue) {
    Queue q = make_queue();
    Event e = make_event();
    const size_t n = 3u << 20;
    auto src = pattern(n, 3);
    std::vector<unsigned char> dst(n, 0);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait_event(q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
}

TEST(QueueWaitEvent, CompleteEventReturnsAtOnce) {
    Queue q = make_queue(), other = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), other.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(kupl_queue_wait_event(q.get(), e.get()), KUPL_OK);
    EXPECT_LT(seconds_since(t0), 1.0);
}

// The non-blocking form returns while the event is still pending, and later work on
// the waiting queue (items and copies) sees everything before the event.
TEST(QueueWaitEventAsync, OrdersWithoutBlocking) {
    Queue producer = make_queue(), consumer = make_queue();
    const size_t n = 2u << 20;
    std::vector<unsigned char> staged(n, 0), dst(n, 0);
    auto expected = pattern(n, 4);
    Gate gate;
    ASSERT_EQ(gate.block(producer.get()), KUPL_OK);
    ASSERT_EQ(submit_fn(producer.get(), [&] { std::memcpy(staged.data(), expected.data(), n); }), KUPL_OK);
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), producer.get()), KUPL_OK);

    ASSERT_EQ(kuplx_queue_wait_event_async(consumer.get(), e.get()), KUPL_OK);
    EXPECT_FALSE(gate.is_open());
    EXPECT_FALSE(gate.timed_out()) << "kuplx_queue_wait_event_async blocked the caller";
    bool saw_gate_done = false;
    ASSERT_EQ(submit_fn(consumer.get(), [&] { saw_gate_done = gate.finished(); }), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), staged.data(), n, consumer.get(), nullptr), KUPL_OK);
    Event done = make_event();
    ASSERT_EQ(kupl_event_record(done.get(), consumer.get()), KUPL_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(kupl_event_query(done.get()), KUPL_EVENT_STATUS_SUBMITTED)
        << "consumer did not wait for the event";

    gate.open();
    ASSERT_EQ(kupl_queue_wait(consumer.get()), KUPL_OK);
    EXPECT_TRUE(saw_gate_done);
    EXPECT_EQ(first_difference(dst.data(), expected.data(), n), SIZE_MAX)
        << "the consumer's copy ran before the producer's item";
}

TEST(QueueWaitEventAsync, LaterRecordsDoNotExtendTheDependency) {
    NEED_TWO_EXECUTORS();
    Queue q = make_queue(), other = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), other.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    ASSERT_EQ(kuplx_queue_wait_event_async(q.get(), e.get()), KUPL_OK);

    // Re-record e behind a closed gate: q must not wait for that record.
    Gate gate(std::chrono::seconds(5));
    ASSERT_EQ(gate.block(other.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), other.get()), KUPL_OK);
    bool ran = false;
    ASSERT_EQ(submit_fn(q.get(), [&] { ran = true; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(ran);
    EXPECT_FALSE(gate.is_open());
    EXPECT_FALSE(gate.timed_out()) << "q waited for a record made after kuplx_queue_wait_event_async";
    gate.open();
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
}

// Waiting queues hold no thread: many queues parked on one pending event must not
// stop an unrelated queue from running.
TEST(QueueWaitEventAsync, WaitingQueuesHoldNoThread) {
    NEED_TWO_EXECUTORS();
    Queue producer = make_queue();
    Gate gate(std::chrono::seconds(5));
    ASSERT_EQ(gate.block(producer.get()), KUPL_OK);
    gate.wait_entered();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), producer.get()), KUPL_OK);

    const int waiting = 32;
    std::vector<Queue> waiters;
    std::atomic<int> after_gate{0}, before_gate{0};
    for (int i = 0; i < waiting; ++i) {
        waiters.push_back(make_queue());
        ASSERT_EQ(kuplx_queue_wait_event_async(waiters.back().get(), e.get()), KUPL_OK);
        ASSERT_EQ(submit_fn(waiters.back().get(),
                            [&] { (gate.finished() ? after_gate : before_gate).fetch_add(1); }),
                  KUPL_OK);
    }
    Queue free_queue = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 5);
    std::vector<unsigned char> dst(n, 0);
    bool ran = false;
    ASSERT_EQ(submit_fn(free_queue.get(), [&] { ran = true; }), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, free_queue.get(), nullptr), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(free_queue.get()), KUPL_OK);
    EXPECT_TRUE(ran);
    EXPECT_EQ(dst, src);
    EXPECT_FALSE(gate.timed_out()) << "an unrelated queue had to wait for the event";
    gate.open();
    for (auto &w : waiters)
        ASSERT_EQ(kupl_queue_wait(w.get()), KUPL_OK);
    EXPECT_EQ(after_gate.load(), waiting);
    EXPECT_EQ(before_gate.load(), 0);
}

TEST(QueueWaitEventAsync, ChainAcrossManyQueues) {
    // q0 -> q1 -> ... each stage waits for the previous and adds one to every byte.
    const int stages = 12;
    const size_t n = 256u << 10;
    std::vector<Queue> qs;
    std::vector<Event> evs;
    std::vector<unsigned char> buf(n, 0);
    Gate gate;
    for (int i = 0; i < stages; ++i) {
        qs.push_back(make_queue());
        evs.push_back(make_event());
    }
    ASSERT_EQ(gate.block(qs[0].get()), KUPL_OK);
    for (int i = 0; i < stages; ++i) {
        if (i > 0) {
            ASSERT_EQ(kuplx_queue_wait_event_async(qs[i].get(), evs[i - 1].get()), KUPL_OK);
        }
        ASSERT_EQ(submit_fn(qs[i].get(),
                            [&buf] {
                                for (auto &b : buf)
                                    ++b;
                            }),
                  KUPL_OK);
        ASSERT_EQ(kupl_event_record(evs[i].get(), qs[i].get()), KUPL_OK);
    }
    gate.open();
    ASSERT_EQ(kupl_event_wait(evs.back().get()), KUPL_OK);
    EXPECT_EQ(std::count(buf.begin(), buf.end(), stages), long(n));
}

TEST(EventRecord, CopyEventIsSubmittedUntilTheCopyRuns) {
    Queue q = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    std::vector<unsigned char> src(100, 1), dst(100, 0);
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), dst.size(), q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_SUBMITTED);
    char why[16] = "x";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_OK) << "not complete yet is not an error";
    EXPECT_STREQ(why, "");
    gate.open();
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
}

TEST(EventRecord, GetErrorOfANeverRecordedEventIsOk) {
    Event e = make_event();
    char why[16] = "x";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_OK);
    EXPECT_STREQ(why, "");
}

// A queue waiting on an event recorded on itself: already ordered, must not deadlock.
TEST(QueueWaitEventAsync, EventRecordedOnTheSameQueue) {
    Queue q = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    ASSERT_EQ(kuplx_queue_wait_event_async(q.get(), e.get()), KUPL_OK);
    bool after = false;
    ASSERT_EQ(submit_fn(q.get(), [&] { after = gate.finished(); }), KUPL_OK);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(after);
}

// One thread records an event on a queue again and again while another makes the same queue wait
// for that event. A record's generation is taken before its op is in the queue; a wait that took
// that generation in between was queued ahead of the record it waited for, and the queue never
// moved again (the storm test hung so, about once in a hundred runs). A wait orders after the
// latest record already placed on a queue, so the queue always drains.
TEST(QueueWaitEventAsync, RecordsAndWaitsRacingOnOneQueueNeverDeadlock) {
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_event_record(e.get(), q.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    std::atomic<bool> stop{false};
    std::atomic<long> records{0}, waits{0};
    std::thread recorder([&] {
        while (!stop.load())
            if (kupl_event_record(e.get(), q.get()) == KUPL_OK) // fails while the last is pending
                records.fetch_add(1);
    });
    // Three waits queued, then one waited for: the blocking wait keeps the queue short (queued
    // without end, the waits alone would keep the records from running).
    std::thread waiter([&] {
        for (long i = 0; !stop.load(); ++i) {
            const int status = i % 4 == 3 ? kupl_queue_wait_event(q.get(), e.get())
                                          : kuplx_queue_wait_event_async(q.get(), e.get());
            ASSERT_EQ(status, KUPL_OK);
            waits.fetch_add(1);
        }
    });
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    long last_records = -1, last_waits = -1;
    auto moved_at = std::chrono::steady_clock::now();
    while ((records.load() < 50000 || waits.load() < 50000) && std::chrono::steady_clock::now() < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (records.load() != last_records || waits.load() != last_waits) {
            last_records = records.load();
            last_waits = waits.load();
            moved_at = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - moved_at > std::chrono::seconds(10)) {
            // The waiter is blocked on a queue that can never drain: the process cannot end
            // normally (the queue's destruction would wait for it too).
            ADD_FAILURE() << "the queue deadlocked after " << last_records << " records and " << last_waits
                          << " waits: a wait was queued ahead of the record it waits for";
            std::fflush(stdout);
            std::_Exit(1);
        }
    }
    stop.store(true);
    recorder.join();
    waiter.join();
    EXPECT_GT(records.load(), 1000);
    EXPECT_GT(waits.load(), 1000);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}
