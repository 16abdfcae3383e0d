// Bad input: every call must return exactly KUPL_ERROR (NULL for creators), leave
// memory untouched and not crash — for NULL pointers, impossible shapes, sizes that
// overflow, and handles that are NULL, destroyed, of the wrong type or not ours.
#include "test_support.h"

#include <gtest/gtest.h>

#include <thread>

#include <algorithm>
#include <climits>

using namespace kupl_test;

namespace {

// Something that is not a KUPL object, to pass off as a handle.
struct Foreign {
    uint64_t words[64];
    Foreign() {
        for (auto &w : words)
            w = 0xabababababababab;
    }
};

struct BadHandles : ::testing::Test {
    void SetUp() override {
        kupl_queue_h q = kupl_queue_create();
        kupl_event_h e = kupl_event_create();
        ASSERT_NE(q, nullptr);
        ASSERT_NE(e, nullptr);
        kupl_queue_destroy(q);
        kupl_event_destroy(e);
        destroyed_queue = q;
        destroyed_event = e;
        heap_junk = std::make_unique<Foreign>();
    }

    std::vector<std::pair<const char *, kupl_queue_h>> bad_queues() {
        return {{"NULL", nullptr},
                {"destroyed", destroyed_queue},
                {"foreign (stack)", reinterpret_cast<kupl_queue_h>(&stack_junk)},
                {"foreign (heap)", reinterpret_cast<kupl_queue_h>(heap_junk.get())},
                {"an event", reinterpret_cast<kupl_queue_h>(good_event.get())}};
    }
    std::vector<std::pair<const char *, kupl_event_h>> bad_events() {
        return {{"NULL", nullptr},
                {"destroyed", destroyed_event},
                {"foreign (stack)", reinterpret_cast<kupl_event_h>(&stack_junk)},
                {"foreign (heap)", reinterpret_cast<kupl_event_h>(heap_junk.get())},
                {"a queue", reinterpret_cast<kupl_event_h>(good_queue.get())}};
    }

    kupl_queue_h destroyed_queue = nullptr;
    kupl_event_h destroyed_event = nullptr;
    Foreign stack_junk;
    std::unique_ptr<Foreign> heap_junk;
    Queue good_queue = make_queue();
    Event good_event = make_event();
    std::vector<unsigned char> src = pattern(4096, 1);
    std::vector<unsigned char> dst = std::vector<unsigned char>(4096, 0);

    bool dst_untouched() const { return all_zero(dst); }
};

void never_run(void *flag) {
    static_cast<std::atomic<bool> *>(flag)->store(true);
}

} // namespace

TEST(BadInput, CopyNullPointers) {
    std::vector<unsigned char> buf(64, 0);
    EXPECT_EQ(kupl_memcpy(nullptr, buf.data(), 8), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy(buf.data(), nullptr, 8), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy(nullptr, nullptr, 8), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy(nullptr, nullptr, 0), KUPL_OK) << "NULL is only an error with count > 0";
    Queue q = make_queue();
    Event e = make_event();
    EXPECT_EQ(kupl_memcpy_async(nullptr, buf.data(), 8, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy_async(buf.data(), nullptr, 8, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy_async(nullptr, buf.data(), 8, nullptr, nullptr), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED) << "a rejected copy recorded its event";
    EXPECT_EQ(kupl_memcpy2d(nullptr, 8, buf.data(), 8, 8, 2), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d(buf.data(), 8, nullptr, 8, 8, 2), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(nullptr, 8, buf.data(), 8, 8, 2, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(buf.data(), 8, nullptr, 8, 8, 2, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK) << "a rejected call must not poison the queue";
}

TEST(BadInput, WidthGreaterThanPitch) {
    std::vector<unsigned char> s = pattern(1024, 2), d(1024, 0);
    Queue q = make_queue();
    EXPECT_EQ(kupl_memcpy2d(d.data(), 8, s.data(), 16, 9, 2), KUPL_ERROR) << "width > dpitch";
    EXPECT_EQ(kupl_memcpy2d(d.data(), 16, s.data(), 8, 9, 2), KUPL_ERROR) << "width > spitch";
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), 8, s.data(), 16, 9, 2, q.get(), nullptr), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), 16, s.data(), 8, 9, 2, nullptr, nullptr), KUPL_ERROR);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(all_zero(d)) << "a rejected 2D copy wrote";
}

TEST(BadInput, RegionSizeOverflowingSizeT) {
    std::vector<unsigned char> s(64, 1), d(64, 0);
    Queue q = make_queue();
    Event e = make_event();
    const size_t half = SIZE_MAX / 2;
    // height * pitch overflows (and so does the extent (height - 1) * pitch + width).
    EXPECT_EQ(kupl_memcpy2d(d.data(), half, s.data(), 8, 1, 4), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d(d.data(), 8, s.data(), half, 1, 4), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), half, s.data(), 8, 1, 4, q.get(), e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), 8, s.data(), half, 1, 4, nullptr, e.get()), KUPL_ERROR);
    // width * height overflows with pitch == width.
    const size_t w = size_t(1) << 33, h = size_t(1) << 32;
    EXPECT_EQ(kupl_memcpy2d(d.data(), w, s.data(), w, w, h), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), w, s.data(), w, w, h, q.get(), e.get()), KUPL_ERROR);
    // Two rows: pitch + width overflows.
    EXPECT_EQ(kupl_memcpy2d(d.data(), SIZE_MAX - 3, s.data(), 8, 8, 2), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy2d_async(d.data(), 8, s.data(), SIZE_MAX - 3, 8, 2, q.get(), nullptr), KUPL_ERROR);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_CREATED);
    EXPECT_TRUE(all_zero(d)) << "a rejected 2D copy wrote";
}

TEST_F(BadHandles, CopiesOnBadQueues) {
    for (auto [what, q] : bad_queues()) {
        if (q == nullptr)
            continue; // a NULL queue is valid for async copies (kupl-interop)
        EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), 100, q, nullptr), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), 100, q, good_event.get()), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_memcpy2d_async(dst.data(), 64, src.data(), 64, 10, 10, q, nullptr), KUPL_ERROR)
            << what;
    }
    EXPECT_EQ(kupl_event_query(good_event.get()), KUPL_EVENT_STATUS_CREATED);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(dst_untouched());
}

TEST_F(BadHandles, CopiesWithBadEvents) {
    for (auto [what, e] : bad_events()) {
        if (e == nullptr)
            continue; // no event is valid
        EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), 100, good_queue.get(), e), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), 100, nullptr, e), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_memcpy2d_async(dst.data(), 64, src.data(), 64, 10, 10, good_queue.get(), e),
                  KUPL_ERROR)
            << what;
    }
    ASSERT_EQ(kupl_queue_wait(good_queue.get()), KUPL_OK);
    EXPECT_TRUE(dst_untouched());
}

TEST_F(BadHandles, QueueCalls) {
    ASSERT_EQ(kupl_event_record(good_event.get(), good_queue.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(good_event.get()), KUPL_OK);
    std::atomic<bool> ran{false};
    kupl_queue_item_desc_t desc{};
    desc.func = never_run;
    desc.args = &ran;
    for (auto [what, q] : bad_queues()) {
        EXPECT_EQ(kupl_queue_wait(q), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_queue_wait_event(q, good_event.get()), KUPL_ERROR) << what;
        EXPECT_EQ(kuplx_queue_wait_event_async(q, good_event.get()), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_queue_submit(q, &desc), KUPL_ERROR) << what;
        EXPECT_EQ(kupl::queue_submit(q, nullptr, [&ran] { ran = true; }), KUPL_ERROR) << what;
        if (q != nullptr) { // recording on "no queue" is not defined by the API
            EXPECT_EQ(kupl_event_record(good_event.get(), q), KUPL_ERROR) << what;
        }
        kupl_queue_destroy(q); // ignored
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(ran.load()) << "an item submitted to a bad queue ran";
    EXPECT_EQ(kupl_event_query(good_event.get()), KUPL_EVENT_STATUS_COMPLETE);
    EXPECT_EQ(kupl_queue_wait(good_queue.get()), KUPL_OK) << "the good queue was disturbed";
}

TEST_F(BadHandles, EventCalls) {
    for (auto [what, e] : bad_events()) {
        EXPECT_EQ(kupl_event_query(e), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_event_wait(e), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_event_record(e, good_queue.get()), KUPL_ERROR) << what;
        EXPECT_EQ(kupl_queue_wait_event(good_queue.get(), e), KUPL_ERROR) << what;
        EXPECT_EQ(kuplx_queue_wait_event_async(good_queue.get(), e), KUPL_ERROR) << what;
        char msg[32] = "untouched";
        EXPECT_EQ(kuplx_event_get_error(e, msg, sizeof msg), KUPL_ERROR) << what;
        EXPECT_EQ(kuplx_event_get_error(e, nullptr, 0), KUPL_ERROR) << what;
        kupl_event_destroy(e); // ignored
    }
    EXPECT_EQ(kupl_queue_wait(good_queue.get()), KUPL_OK);
}

TEST_F(BadHandles, DestroyTwiceIsIgnored) {
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h e = kupl_event_create();
    kupl_queue_destroy(q);
    kupl_queue_destroy(q);
    kupl_event_destroy(e);
    kupl_event_destroy(e);
    kupl_queue_destroy(nullptr);
    kupl_event_destroy(nullptr);
    EXPECT_EQ(kupl_queue_wait(q), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e), KUPL_ERROR);
    // The runtime still works.
    Queue fresh = make_queue();
    ASSERT_NE(fresh, nullptr);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), 4096, fresh.get(), nullptr), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(fresh.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
}

TEST(BadInput, SubmitDescriptors) {
    Queue q = make_queue();
    std::atomic<bool> ran{false};
    EXPECT_EQ(kupl_queue_submit(q.get(), nullptr), KUPL_ERROR) << "NULL desc";
    kupl_queue_item_desc_t desc{};
    desc.args = &ran;
    EXPECT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_ERROR) << "NULL func";
    desc.func = never_run;
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
    desc.args = nullptr;
    desc.args_size = 16;
    EXPECT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_ERROR) << "ARGS_SIZE with NULL args";
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_FALSE(ran.load());
    std::function<void(void)> empty;
    EXPECT_EQ(kupl::queue_submit(q.get(), nullptr, empty), KUPL_ERROR);
}

TEST(BadInput, NullOutputArguments) {
    int v = 0;
    EXPECT_EQ(kupl_get_queue_priority_range(nullptr, &v), KUPL_ERROR);
    EXPECT_EQ(kupl_get_queue_priority_range(&v, nullptr), KUPL_ERROR);
    EXPECT_EQ(kupl_get_version(nullptr), KUPL_ERROR);
    EXPECT_EQ(kuplx_get_engine_info(nullptr), KUPL_ERROR);
    EXPECT_EQ(kuplx_get_counters(nullptr), KUPL_ERROR);
    EXPECT_EQ(kuplx_get_channel_placement(0, nullptr, 16), KUPL_ERROR);
    char buf[16];
    EXPECT_EQ(kuplx_get_channel_placement(INT_MAX, buf, sizeof buf), KUPL_ERROR);
    EXPECT_EQ(kuplx_get_channel_placement(INT_MIN, buf, sizeof buf), KUPL_ERROR);
}

TEST(BadInput, CreatorsRejectBadArguments) {
    EXPECT_EQ(kupl_queue_create_with_priority(-1), nullptr);
    EXPECT_EQ(kupl_queue_create_with_priority(4), nullptr);
    EXPECT_EQ(kupl_queue_acquire(-2), nullptr);
    EXPECT_EQ(kupl_queue_acquire(INT_MIN), nullptr);
    EXPECT_EQ(kupl_malloc(KUPL_MEM_DEFAULT, 0), nullptr);
}

// A thread remembers the handle it looked up last (handle_table.h): a destroyed handle must be
// rejected all the same — on the thread that used it just before and on another thread that did,
// also while the object lives on (an event still referenced by a copy that has not run).
TEST(BadInput, HandlesUsedJustBeforeTheirDestructionAreRejected) {
    std::vector<unsigned char> src = pattern(4096, 3), dst(4096, 0);
    Queue q = make_queue();
    kupl_event_h e = kupl_event_create();
    ASSERT_NE(e, nullptr);
    Gate gate;
    ASSERT_EQ(gate.block(q.get()), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), src.size(), q.get(), e), KUPL_OK); // holds e
    std::atomic<int> step{0};
    int other_before = -1, other_after = -1;
    std::thread other([&] {
        other_before = kupl_event_query(e);
        step.store(1);
        while (step.load() != 2)
            std::this_thread::yield();
        other_after = kupl_event_query(e);
    });
    EXPECT_EQ(kupl_event_query(e), KUPL_EVENT_STATUS_SUBMITTED);
    while (step.load() != 1)
        std::this_thread::yield();
    kupl_event_destroy(e);
    EXPECT_EQ(kupl_event_query(e), KUPL_ERROR);
    step.store(2);
    other.join();
    EXPECT_EQ(other_before, KUPL_EVENT_STATUS_SUBMITTED);
    EXPECT_EQ(other_after, KUPL_ERROR);
    gate.open();
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
    // A queue used just before its destruction.
    kupl_queue_h doomed = kupl_queue_create();
    ASSERT_EQ(kupl_queue_wait(doomed), KUPL_OK);
    kupl_queue_destroy(doomed);
    EXPECT_EQ(kupl_queue_wait(doomed), KUPL_ERROR);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), src.size(), doomed, nullptr), KUPL_ERROR);
}
