// Queue semantics: strict order, destroy waits, item descriptors, acquired and
// synchronous queues, the C++ submit, priorities and copies with no queue.
#include "test_support.h"

#include <gtest/gtest.h>

#include <climits>
#include <mutex>
#include <set>

using namespace kupl_test;

namespace {

struct OrderLog {
    std::vector<int> seen; // written only by items of one queue: order gives happens-before
    std::atomic<int> running{0};
    std::atomic<int> overlaps{0};
};

struct OrderArgs {
    OrderLog *log;
    int index;
};

void record_order(void *p) {
    auto *a = static_cast<OrderArgs *>(p);
    if (a->log->running.fetch_add(1) != 0)
        a->log->overlaps.fetch_add(1);
    a->log->seen.push_back(a->index);
    a->log->running.fetch_sub(1);
}

} // namespace

TEST(QueueOrder, HostItemsRunOneAtATimeInSubmissionOrder) {
    Queue q = make_queue();
    ASSERT_NE(q, nullptr);
    const int n = scaled(2000);
    OrderLog log;
    std::vector<OrderArgs> args(n);
    for (int i = 0; i < n; ++i) {
        args[i] = {&log, i};
        kupl_queue_item_desc_t desc{};
        desc.func = record_order;
        desc.args = &args[i];
        ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);
    }
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    ASSERT_EQ(log.seen.size(), size_t(n));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(log.seen[i], i) << "item " << i << " ran out of order";
    EXPECT_EQ(log.overlaps.load(), 0) << "two items of one queue ran at the same time";
}

// Each round: an item writes src, a copy moves it to dst, an item checks dst.
// Sizes cross the inline and multi-thread thresholds, so every copy path is ordered.
TEST(QueueOrder, CopiesAndItemsInterleaveInOrder) {
    kuplx_engine_info_t info = engine_info();
    std::vector<size_t> sizes = {1, 100, 4096};
    for (size_t t : {info.inline_threshold, info.mt_threshold, info.sync_threshold})
        if (t > 1 && t < (64u << 20))
            for (size_t s : {t - 1, t, t + 1})
                sizes.push_back(s);
    sizes.push_back(3u << 20);

    Queue q = make_queue();
    ASSERT_NE(q, nullptr);
    for (size_t n : sizes) {
        std::vector<unsigned char> src(n), dst(n, 0);
        std::atomic<int> bad{0};
        const int rounds = scaled(24);
        for (int r = 0; r < rounds; ++r) {
            unsigned char v = static_cast<unsigned char>(r + 1);
            ASSERT_EQ(submit_fn(q.get(), [&src, v] { std::memset(src.data(), v, src.size()); }), KUPL_OK);
            ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
            ASSERT_EQ(submit_fn(q.get(),
                                [&dst, &bad, v] {
                                    if (dst.front() != v || dst.back() != v ||
                                        std::count(dst.begin(), dst.end(), v) != long(dst.size()))
                                        bad.fetch_add(1);
                                }),
                      KUPL_OK);
        }
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        EXPECT_EQ(bad.load(), 0) << "size " << n << ": an item saw a copy that was not done, or done early";
    }
}

// Two copies to the same destination: the later one must land last, even when
// both are split across channels.
TEST(QueueOrder, LaterCopyToSameDestinationWins) {
    kuplx_engine_info_t info = engine_info();
    const size_t n = std::max<size_t>(info.mt_threshold * 4, 4u << 20);
    auto a = pattern(n, 1), b = pattern(n, 2);
    std::vector<unsigned char> dst(n, 0);
    Queue q = make_queue();
    ASSERT_NE(q, nullptr);
    for (int i = 0; i < scaled(16); ++i) {
        ASSERT_EQ(kupl_memcpy_async(dst.data(), a.data(), n, q.get(), nullptr), KUPL_OK);
        ASSERT_EQ(kupl_memcpy_async(dst.data(), b.data(), n, q.get(), nullptr), KUPL_OK);
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        ASSERT_EQ(first_difference(dst.data(), b.data(), n), SIZE_MAX) << "round " << i;
    }
}

TEST(QueueDestroy, WaitsForPendingItemsAndCopies) {
    const size_t n = 8u << 20;
    auto src = pattern(n, 3);
    std::vector<unsigned char> dst(n, 0);
    std::atomic<bool> item_done{false};
    kupl_queue_h q = kupl_queue_create();
    ASSERT_NE(q, nullptr);
    ASSERT_EQ(submit_fn(q,
                        [&item_done] {
                            std::this_thread::sleep_for(std::chrono::milliseconds(100));
                            item_done = true;
                        }),
              KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q, nullptr), KUPL_OK);
    kupl_queue_destroy(q);
    EXPECT_TRUE(item_done.load()) << "queue_destroy returned before its item ran";
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX)
        << "queue_destroy returned before its copy";
}

TEST(QueueDestroy, EventsRecordedOnItStayValid) {
    kupl_queue_h q = kupl_queue_create();
    ASSERT_NE(q, nullptr);
    Event e = make_event();
    ASSERT_EQ(submit_fn(q, [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }), KUPL_OK);
    ASSERT_EQ(kupl_event_record(e.get(), q), KUPL_OK);
    kupl_queue_destroy(q);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    // It can be recorded again on another queue.
    Queue q2 = make_queue();
    EXPECT_EQ(kupl_event_record(e.get(), q2.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
}

namespace {
struct Payload {
    int number;
    char text[24];
    void *self; // where the caller's struct lives
};
struct SeenPayload {
    Payload copy;
    const void *where = nullptr;
};
SeenPayload g_seen;
void remember_payload(void *p) {
    g_seen.where = p;
    std::memcpy(&g_seen.copy, p, sizeof(Payload));
}
} // namespace

TEST(QueueSubmit, ArgsSizeCopiesArgsAtSubmit) {
    Queue q = make_queue();
    ASSERT_NE(q, nullptr);
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);

    Payload payload{42, "original", nullptr};
    payload.self = &payload;
    kupl_queue_item_desc_t desc{};
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE | KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    desc.func = remember_payload;
    desc.args = &payload;
    desc.args_size = sizeof payload;
    desc.name = "payload";
    ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);

    // The item cannot have run yet (the gate holds the queue): change everything.
    EXPECT_FALSE(gate.finished());
    payload.number = -1;
    std::strcpy(payload.text, "changed");
    desc.func = nullptr;
    desc.args = nullptr;
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_FALSE(gate.timed_out());

    EXPECT_EQ(g_seen.copy.number, 42);
    EXPECT_STREQ(g_seen.copy.text, "original");
    EXPECT_EQ(g_seen.copy.self, &payload);
    EXPECT_NE(g_seen.where, static_cast<const void *>(&payload)) << "args were not copied";
}

TEST(QueueSubmit, WithoutArgsSizeThePointerIsPassedThrough) {
    Queue q = make_queue();
    Payload payload{7, "by reference", nullptr};
    kupl_queue_item_desc_t desc{};
    desc.func = remember_payload;
    desc.args = &payload;
    desc.args_size = 3; // not in field_mask: must be ignored
    ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(g_seen.where, static_cast<const void *>(&payload));
    EXPECT_EQ(g_seen.copy.number, 7);
}

TEST(QueueSubmit, NameAndEgroupFieldsAreAccepted) {
    Queue q = make_queue();
    std::atomic<int> ran{0};
    kupl_queue_item_desc_t desc{};
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME | KUPL_QUEUE_ITEM_DESC_FIELD_EGROUP;
    desc.func = [](void *p) { static_cast<std::atomic<int> *>(p)->fetch_add(1); };
    desc.args = &ran;
    desc.name = "named item";
    desc.egroup = nullptr;
    ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);
    desc.name = nullptr; // a NULL name with the NAME bit is still a valid item
    ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(ran.load(), 2);
}

TEST(QueueSubmit, ItemsCountInHostItemCounter) {
    Queue q = make_queue();
    kuplx_counters_t before = counters();
    for (int i = 0; i < 10; ++i)
        ASSERT_EQ(submit_fn(q.get(), [] {}), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    kuplx_counters_t after = counters();
    EXPECT_EQ(after.host_items - before.host_items, 10u);
}

TEST(QueueAcquire, SameIndexSameQueueAndNegativeIndexRejected) {
    kupl_queue_h q0 = kupl_queue_acquire(0);
    kupl_queue_h q1 = kupl_queue_acquire(1);
    ASSERT_NE(q0, nullptr);
    ASSERT_NE(q1, nullptr);
    EXPECT_NE(q0, q1);
    EXPECT_EQ(kupl_queue_acquire(0), q0);
    EXPECT_EQ(kupl_queue_acquire(1), q1);
    EXPECT_EQ(kupl_queue_acquire(-2), nullptr);
    EXPECT_EQ(kupl_queue_acquire(INT_MIN), nullptr);
    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    ASSERT_NE(sync, nullptr);
    EXPECT_EQ(kupl_queue_acquire(KUPL_ASYNC_SYNC), sync);
    EXPECT_NE(sync, q0);
}

TEST(QueueAcquire, SyncQueueRunsItemsAndCopiesInline) {
    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    ASSERT_NE(sync, nullptr);
    std::thread::id ran_on;
    bool ran = false;
    ASSERT_EQ(submit_fn(sync,
                        [&] {
                            ran_on = std::this_thread::get_id();
                            ran = true;
                        }),
              KUPL_OK);
    EXPECT_TRUE(ran) << "an item on the KUPL_ASYNC_SYNC queue did not run inside kupl_queue_submit";
    EXPECT_EQ(ran_on, std::this_thread::get_id());

    const size_t n = 2u << 20;
    auto src = pattern(n, 4);
    std::vector<unsigned char> dst(n, 0);
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, sync, e.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX)
        << "copy on the sync queue was not inline";
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(sync), KUPL_OK);
    // Nothing is ever pending on it: a record there is complete at once.
    ASSERT_EQ(kupl_event_record(e.get(), sync), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
}

TEST(QueueAcquire, WaitAllWaitsForEveryAcquiredQueue) {
    std::atomic<int> done{0};
    for (int i = 0; i < 3; ++i) {
        kupl_queue_h q = kupl_queue_acquire(i);
        ASSERT_NE(q, nullptr);
        ASSERT_EQ(submit_fn(q,
                            [&done] {
                                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                                done.fetch_add(1);
                            }),
                  KUPL_OK);
    }
    const size_t n = 4u << 20;
    auto src = pattern(n, 5);
    std::vector<unsigned char> dst(n, 0);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, kupl_queue_acquire(2), nullptr), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait_all(), KUPL_OK);
    EXPECT_EQ(done.load(), 3);
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
}

TEST(CppSubmit, RunsCallableAndKeepsItsOwnCopy) {
    Queue q = make_queue();
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    std::atomic<int> total{0};
    {
        int captured = 5;
        std::function<void(void)> fn = [&total, captured] { total.fetch_add(captured); };
        ASSERT_EQ(kupl::queue_submit(q.get(), nullptr, fn), KUPL_OK);
        kupl_queue_item_desc_t desc{};
        desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
        desc.name = "cpp item";
        ASSERT_EQ(kupl::queue_submit(q.get(), &desc, [&total] { total.fetch_add(100); }), KUPL_OK);
        fn = nullptr; // the queue must hold its own copy
    }
    EXPECT_EQ(total.load(), 0);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(total.load(), 105);
}

TEST(CppSubmit, EmptyCallableIsAnError) {
    Queue q = make_queue();
    std::function<void(void)> empty;
    EXPECT_EQ(kupl::queue_submit(q.get(), nullptr, empty), KUPL_ERROR);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

TEST(CppSubmit, OrderedWithCopies) {
    Queue q = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 6);
    std::vector<unsigned char> dst(n, 0);
    bool matched = false;
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    ASSERT_EQ(kupl::queue_submit(q.get(), nullptr, [&] { matched = dst == src; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(matched);
}

TEST(QueuePriority, RangeIsZeroToThree) {
    int least = -100, greatest = -100;
    ASSERT_EQ(kupl_get_queue_priority_range(&least, &greatest), KUPL_OK);
    EXPECT_EQ(least, 0);
    EXPECT_EQ(greatest, 3);
}

TEST(QueuePriority, EveryPriorityInRangeMakesAWorkingQueue) {
    const size_t n = 1u << 20;
    auto src = pattern(n, 7);
    for (int p = 0; p <= 3; ++p) {
        kupl_queue_h q = kupl_queue_create_with_priority(p);
        ASSERT_NE(q, nullptr) << "priority " << p;
        std::vector<unsigned char> dst(n, 0);
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q, nullptr), KUPL_OK);
        ASSERT_EQ(kupl_queue_wait(q), KUPL_OK);
        EXPECT_EQ(dst, src) << "priority " << p;
        kupl_queue_destroy(q);
    }
}

TEST(QueuePriority, OutOfRangeGivesNull) {
    for (int p : {-1, 4, 100, INT_MIN, INT_MAX}) {
        kupl_queue_h q = kupl_queue_create_with_priority(p);
        EXPECT_EQ(q, nullptr) << "priority " << p;
        if (q)
            kupl_queue_destroy(q);
    }
}

TEST(NullQueue, AsyncCopiesCompleteAndTheirEventSaysSo) {
    kuplx_engine_info_t info = engine_info();
    for (size_t n :
         {size_t(1), size_t(777), info.inline_threshold + 1, info.mt_threshold + 3, size_t(5u << 20)}) {
        auto src = pattern(n, n);
        std::vector<unsigned char> dst(n, 0);
        Event e = make_event();
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, nullptr, e.get()), KUPL_OK) << n;
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK) << n;
        EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
        EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX) << n;
    }
}

TEST(NullQueue, Async2DCopiesComplete) {
    const size_t width = 100, height = 300, spitch = 128, dpitch = 160;
    auto src = pattern(spitch * height, 8);
    std::vector<unsigned char> dst(dpitch * height, 0);
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy2d_async(dst.data(), dpitch, src.data(), spitch, width, height, nullptr, e.get()),
              KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    for (size_t r = 0; r < height; ++r) {
        ASSERT_EQ(std::memcmp(dst.data() + r * dpitch, src.data() + r * spitch, width), 0) << "row " << r;
        for (size_t c = width; c < dpitch; ++c)
            ASSERT_EQ(dst[r * dpitch + c], 0) << "row " << r << " gap byte " << c;
    }
}

// Items run on the runtime's pool of executors: never on the submitting thread of an
// ordinary queue.
TEST(QueueSubmit, ItemsRunOnThePoolOfExecutors) {
    std::mutex m;
    std::set<std::thread::id> ran_on;
    std::vector<Queue> queues;
    for (int i = 0; i < 16; ++i)
        queues.push_back(make_queue());
    for (int round = 0; round < 8; ++round)
        for (auto &q : queues)
            ASSERT_EQ(submit_fn(q.get(),
                                [&] {
                                    std::lock_guard<std::mutex> lock(m);
                                    ran_on.insert(std::this_thread::get_id());
                                }),
                      KUPL_OK);
    for (auto &q : queues)
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(ran_on.count(std::this_thread::get_id()), 0u) << "an item ran on the submitting thread";
    EXPECT_FALSE(ran_on.empty());
    // How many threads ran them is not asserted: the pool starts with num_executors threads and
    // may grow while all are busy and items wait (README, "Executors grow"; on a loaded or
    // emulated machine short items can look starved).
}

// Small async copies with nothing ahead run on the caller (kuplx_counters copies_inline);
// behind other work they wait their turn.
TEST(QueueOrder, SmallCopyRunsInlineOnlyWhenNothingIsAhead) {
    kuplx_engine_info_t info = engine_info();
    if (info.inline_threshold < 2)
        GTEST_SKIP() << "inline copies disabled";
    const size_t n = info.inline_threshold / 2;
    auto src = pattern(n, 21);
    std::vector<unsigned char> dst(n, 0);
    Queue q = make_queue();
    kuplx_counters_t before = counters();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    EXPECT_EQ(counters().copies_inline - before.copies_inline, 1u);
    EXPECT_EQ(dst, src) << "an inline copy is done when the call returns";

    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    std::vector<unsigned char> dst2(n, 0);
    before = counters();
    ASSERT_EQ(kupl_memcpy_async(dst2.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    EXPECT_EQ(counters().copies_inline - before.copies_inline, 0u) << "a copy behind work ran inline";
    EXPECT_FALSE(gate.finished());
    gate.open();
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(dst2, src);
}
