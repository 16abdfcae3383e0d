// Waits from inside an item that can never be satisfied there (issue 10 item 6): an event
// recorded on the item's own queue after the item cannot complete before the item returns, so
// kupl_event_wait fails as kupl_queue_wait does in the same place, instead of hanging.
#include "test_support.h"

#include <gtest/gtest.h>

#include <atomic>

using namespace kupl_test;

namespace {

TEST(OwnItemWait, EventRecordedBehindTheItemFails) {
    Queue queue = make_queue();
    Event behind = make_event();
    Event before = make_event();
    ASSERT_EQ(kupl_event_record(before.get(), queue.get()), KUPL_OK);
    std::atomic<int> queue_wait_rc{0}, behind_rc{0}, before_rc{0}, record_rc{0};
    ASSERT_EQ(submit_fn(queue.get(),
                        [&] {
                            record_rc.store(kupl_event_record(behind.get(), queue.get()));
                            behind_rc.store(kupl_event_wait(behind.get()));
                            queue_wait_rc.store(kupl_queue_wait(queue.get()));
                            before_rc.store(kupl_event_wait(before.get())); // ahead of the item: done
                        }),
              KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(queue.get()), KUPL_OK);
    EXPECT_EQ(record_rc.load(), KUPL_OK);
    EXPECT_EQ(behind_rc.load(), KUPL_ERROR);
    EXPECT_EQ(queue_wait_rc.load(), KUPL_ERROR);
    EXPECT_EQ(before_rc.load(), KUPL_OK);
    // Once the item has returned, the record completes as usual.
    EXPECT_EQ(kupl_event_wait(behind.get()), KUPL_OK);
}

// The event of a copy enqueued behind the item, from inside it, is just as unreachable.
TEST(OwnItemWait, CopyEventBehindTheItemFails) {
    Queue queue = make_queue();
    Event copied = make_event();
    const auto src = pattern(1 << 20, 8);
    std::vector<unsigned char> dst(src.size());
    std::atomic<int> rc{0};
    ASSERT_EQ(submit_fn(queue.get(),
                        [&] {
                            kupl_memcpy_async(dst.data(), src.data(), src.size(), queue.get(), copied.get());
                            rc.store(kupl_event_wait(copied.get()));
                        }),
              KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(queue.get()), KUPL_OK);
    EXPECT_EQ(rc.load(), KUPL_ERROR);
    EXPECT_EQ(kupl_event_wait(copied.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
}

// Recorded on another queue, the event is waited for normally from the item.
TEST(OwnItemWait, EventOnAnotherQueueIsWaitedFor) {
    Queue queue = make_queue();
    Queue other = make_queue();
    Event event = make_event();
    Gate gate;
    ASSERT_EQ(gate.block(other.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_record(event.get(), other.get()), KUPL_OK);
    std::atomic<int> rc{0};
    ASSERT_EQ(submit_fn(queue.get(), [&] { rc.store(kupl_event_wait(event.get())); }), KUPL_OK);
    gate.open();
    ASSERT_EQ(kupl_queue_wait(queue.get()), KUPL_OK);
    EXPECT_EQ(rc.load(), KUPL_OK);
    EXPECT_FALSE(gate.timed_out());
}

} // namespace
