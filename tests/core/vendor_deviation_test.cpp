// Inputs vendor KUPL refuses with KUPL_ERROR and we accept on purpose (README, "Where we
// deliberately differ"): an async copy with a NULL event, a queue item whose field_mask has
// the NAME bit with a NULL name, and kupl::queue_submit with a NULL desc. These tests pin what we do instead,
// so that the difference stays a decision, not an accident: a NULL-event copy is an ordinary queued copy (in
// order, every byte, failures reported by the queue's next wait); a NULL name is no name.
#include <gtest/gtest.h>

#include "test_support.h"

using namespace kupl_test;

namespace {

// Sizes that take each path: inline on the caller, one channel, split across channels.
const size_t kSizes[] = {4u << 10, 1u << 20, 6u << 20};

TEST(VendorDeviation, CopyWithNullEventLandsInQueueOrder) {
    for (size_t n : kSizes) {
        SCOPED_TRACE(n);
        Queue q = make_queue();
        std::vector<unsigned char> src = pattern(n, n), dst(n, 0);
        // Held behind a gate: the copy must wait for the item ahead of it, and the item
        // after it must see every byte.
        Gate gate;
        ASSERT_EQ(gate.block(q.get()), KUPL_OK);
        ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
        std::atomic<size_t> seen_difference{0};
        ASSERT_EQ(kupl::queue_submit(q.get(), nullptr,
                                     [&] { seen_difference = first_difference(dst.data(), src.data(), n); }),
                  KUPL_OK);
        gate.wait_entered();
        EXPECT_TRUE(all_zero(dst)) << "the copy ran before the item queued ahead of it";
        gate.open();
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        EXPECT_FALSE(gate.timed_out());
        EXPECT_EQ(seen_difference.load(), SIZE_MAX) << "the next item saw the copy unfinished";
        EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
    }
}

TEST(VendorDeviation, Copy2dWithNullEventCopiesEveryRowAndNothingElse) {
    const size_t width = 40, spitch = 64, dpitch = 72, height = 3000;
    std::vector<unsigned char> src = pattern(spitch * height, 7), dst(dpitch * height, 0);
    Queue q = make_queue();
    ASSERT_EQ(kupl_memcpy2d_async(dst.data(), dpitch, src.data(), spitch, width, height, q.get(), nullptr),
              KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    for (size_t r = 0; r < height; ++r) {
        ASSERT_EQ(memcmp(&dst[r * dpitch], &src[r * spitch], width), 0) << "row " << r;
        for (size_t c = width; c < dpitch; ++c)
            ASSERT_EQ(dst[r * dpitch + c], 0) << "gap byte " << c << " of row " << r;
    }
}

// Without an event the failure is not lost: the queue's next wait reports it, once.
TEST(VendorDeviation, FailedCopyWithNullEventIsReportedByTheQueueWait) {
    Queue q = make_queue();
    const size_t n = 64u << 10;
    std::vector<unsigned char> src = pattern(n, 3), dst(n, 0);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
    kuplx_inject_copy_faults(0);
    EXPECT_TRUE(all_zero(dst)) << "a failed copy writes nothing";
    // The next copy on the same queue runs, and the error is not reported twice.
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), n), SIZE_MAX);
}

TEST(VendorDeviation, NameBitWithNullNameIsAnUnnamedItem) {
    Queue q = make_queue();
    struct Args {
        int *target;
        int value;
    };
    int target = 0;
    Args args{&target, 42};
    kupl_queue_item_desc_t desc{};
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME | KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
    desc.func = [](void *p) {
        auto *a = static_cast<Args *>(p);
        *a->target += a->value;
    };
    desc.args = &args;
    desc.args_size = sizeof args;
    desc.name = nullptr;
    ASSERT_EQ(kupl_queue_submit(q.get(), &desc), KUPL_OK);
    args.value = -1000; // copied at submit (ARGS_SIZE): the item must add 42
    int ran = 0;
    kupl_queue_item_desc_t named{};
    named.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    named.name = nullptr;
    ASSERT_EQ(kupl::queue_submit(q.get(), &named, [&ran] { ++ran; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(target, 42);
    EXPECT_EQ(ran, 1);
}

TEST(VendorDeviation, CxxSubmitWithNullDescRunsInOrder) {
    Queue q = make_queue();
    std::vector<int> order;
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(kupl::queue_submit(q.get(), nullptr, [&order, i] { order.push_back(i); }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

} // namespace
