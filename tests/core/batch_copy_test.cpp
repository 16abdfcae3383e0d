// kuplx_memcpy_batch_async: many 1D and 2D copies as one operation with one event. Every copied
// byte is checked, and every byte around the copies is checked untouched; bad pieces are refused
// before anything runs; a piece that fails in the engine fails the operation's wait while the
// other pieces still land; batches keep their queue's order and run from many threads at once.
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace kupl_test;

namespace {

// A source and a destination arena, and pieces cut out of them: 1D and 2D, tiny to large (so
// some run inline and some on the channels), never overlapping one another.
struct Arena {
    std::vector<unsigned char> src, dst, before;
    std::vector<kuplx_copy_piece_t> pieces;

    explicit Arena(uint64_t seed, size_t large = 512 << 10) {
        // {width, height, dpitch, spitch}: height 1 is a 1D copy (its pitches are ignored).
        const size_t shapes[][4] = {{8, 1, 0, 0},           {4096, 1, 0, 0},     {large, 1, 0, 0},
                                    {24, 300, 40, 56},      {64, 2048, 96, 128}, {1, 1000, 3, 2},
                                    {4000, 70, 4096, 4100}, {3, 1, 7, 7}};
        size_t src_at = 64, dst_at = 64;
        for (const auto &s : shapes) {
            const size_t width = s[0], height = s[1];
            const size_t dpitch = height == 1 ? 12345 : s[2], spitch = height == 1 ? 54321 : s[3];
            const size_t dspan = height == 1 ? width : (height - 1) * dpitch + width;
            const size_t sspan = height == 1 ? width : (height - 1) * spitch + width;
            pieces.push_back({reinterpret_cast<void *>(dst_at), dpitch,
                              reinterpret_cast<const void *>(src_at), spitch, width, height});
            src_at += sspan + 64;
            dst_at += dspan + 64;
        }
        src = pattern(src_at, seed);
        dst = pattern(dst_at, seed + 1);
        before = dst;
        for (auto &p : pieces) { // offsets become addresses
            p.dst = dst.data() + reinterpret_cast<uintptr_t>(p.dst);
            p.src = src.data() + reinterpret_cast<uintptr_t>(p.src);
        }
    }

    // The destination as the pieces should have left it (piece `skip`, if any, not copied).
    std::vector<unsigned char> expected(size_t skip = SIZE_MAX) const {
        std::vector<unsigned char> want = before;
        for (size_t i = 0; i < pieces.size(); ++i) {
            if (i == skip)
                continue;
            const kuplx_copy_piece_t &p = pieces[i];
            const size_t d = static_cast<const unsigned char *>(p.dst) - dst.data();
            const size_t s = static_cast<const unsigned char *>(p.src) - src.data();
            for (size_t r = 0; r < p.height; ++r)
                std::memcpy(want.data() + d + r * (p.height == 1 ? 0 : p.dpitch),
                            src.data() + s + r * (p.height == 1 ? 0 : p.spitch), p.width);
        }
        return want;
    }
};

TEST(BatchCopy, EveryPieceLandsAndNothingElseIsWritten) {
    Queue q = make_queue();
    Event e = make_event();
    Arena a(1);
    ASSERT_EQ(kuplx_memcpy_batch_async(a.pieces.data(), a.pieces.size(), q.get(), e.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(a.dst, a.expected());
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

TEST(BatchCopy, WithoutAQueueItsEventTellsWhenItIsDone) {
    Event e = make_event();
    Arena a(2);
    ASSERT_EQ(kuplx_memcpy_batch_async(a.pieces.data(), a.pieces.size(), nullptr, e.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(a.dst, a.expected());
}

TEST(BatchCopy, OnTheSynchronousQueueItIsDoneOnReturn) {
    Arena a(3);
    Event e = make_event();
    ASSERT_EQ(kuplx_memcpy_batch_async(a.pieces.data(), a.pieces.size(), kupl_queue_acquire(KUPL_ASYNC_SYNC),
                                       e.get()),
              KUPL_OK);
    EXPECT_EQ(a.dst, a.expected());
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
}

TEST(BatchCopy, KeepsQueueOrderWithCopiesAndItems) {
    // copy A -> B, then a batch reading B, then an item that checks the batch's result.
    Queue q = make_queue();
    Arena a(4);
    std::vector<unsigned char> staged(a.src.size());
    const std::vector<unsigned char> original_src = a.src;
    std::vector<kuplx_copy_piece_t> from_staged = a.pieces;
    for (auto &p : from_staged)
        p.src = staged.data() + (static_cast<const unsigned char *>(p.src) - a.src.data());
    ASSERT_EQ(kupl_memcpy_async(staged.data(), a.src.data(), a.src.size(), q.get(), nullptr), KUPL_OK);
    ASSERT_EQ(kuplx_memcpy_batch_async(from_staged.data(), from_staged.size(), q.get(), nullptr), KUPL_OK);
    const std::vector<unsigned char> want = a.expected();
    bool item_saw_result = false;
    ASSERT_EQ(submit_fn(q.get(), [&] { item_saw_result = a.dst == want; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_TRUE(item_saw_result);
    EXPECT_EQ(a.src, original_src);
}

TEST(BatchCopy, EmptyBatchRecordsItsEventInOrder) {
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_EQ(kuplx_memcpy_batch_async(nullptr, 0, q.get(), e.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    // Pieces of zero bytes are no work either.
    kuplx_copy_piece_t empty[2] = {{nullptr, 0, nullptr, 0, 0, 1}, {nullptr, 0, nullptr, 0, 8, 0}};
    ASSERT_EQ(kuplx_memcpy_batch_async(empty, 2, q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
}

TEST(BatchCopy, ABadPieceRefusesTheWholeBatch) {
    Queue q = make_queue();
    Event e = make_event();
    Arena a(5);
    const kuplx_copy_piece_t good = a.pieces[3];
    struct Case {
        const char *what;
        kuplx_copy_piece_t piece;
    };
    const Case bad[] = {
        {"NULL destination", {nullptr, good.dpitch, good.src, good.spitch, good.width, good.height}},
        {"NULL source", {good.dst, good.dpitch, nullptr, good.spitch, good.width, good.height}},
        {"width above the destination pitch",
         {good.dst, good.width - 1, good.src, good.spitch, good.width, 2}},
        {"width above the source pitch", {good.dst, good.dpitch, good.src, good.width - 1, good.width, 2}},
        {"source and destination overlap", {a.dst.data(), 1, a.dst.data() + 8, 1, 16, 1}},
        {"rows beyond the address space", {good.dst, SIZE_MAX / 2, good.src, good.spitch, 8, 4}},
    };
    for (const Case &c : bad) {
        std::vector<kuplx_copy_piece_t> pieces = a.pieces;
        pieces.insert(pieces.begin() + 2, c.piece);
        EXPECT_EQ(kuplx_memcpy_batch_async(pieces.data(), pieces.size(), q.get(), e.get()), KUPL_ERROR)
            << c.what;
    }
    EXPECT_EQ(kuplx_memcpy_batch_async(nullptr, 3, q.get(), e.get()), KUPL_ERROR);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(a.dst, a.before) << "a refused batch copied something";
    // The event was never recorded: a wait on it reports that.
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
}

TEST(BatchCopy, AFailedPieceFailsTheWaitAndTheOthersStillLand) {
    // Only the large pieces go to the channels (the inline ones would fail at once, too);
    // one injected fault fails exactly one piece, whichever the engine executes first.
    Queue q = make_queue();
    Event e = make_event();
    Arena a(6, 2 << 20);
    kuplx_counters_t before{}, after{};
    ASSERT_EQ(kuplx_get_counters(&before), KUPL_OK);
    ASSERT_EQ(kuplx_inject_copy_faults(1), KUPL_OK);
    ASSERT_EQ(kuplx_memcpy_batch_async(a.pieces.data(), a.pieces.size(), q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    char why[200] = "";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_ERROR);
    EXPECT_NE(std::string(why).find("injected"), std::string::npos) << why;
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR); // the queue saw it fail, once
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    ASSERT_EQ(kuplx_get_counters(&after), KUPL_OK);
    EXPECT_EQ(after.copies_failed - before.copies_failed, 1u);
    EXPECT_EQ(after.copies_submitted - before.copies_submitted, a.pieces.size());
    // Exactly one piece was left unwritten, every other one landed.
    size_t matches = 0;
    for (size_t skip = 0; skip < a.pieces.size(); ++skip)
        matches += a.dst == a.expected(skip);
    EXPECT_EQ(matches, 1u);
    // The queue goes on working.
    Arena b(7);
    ASSERT_EQ(kuplx_memcpy_batch_async(b.pieces.data(), b.pieces.size(), q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(b.dst, b.expected());
}

TEST(BatchCopy, ManyThreadsSubmitAndWaitAtOnce) {
    Queue shared = make_queue();
    const int rounds = scaled(40);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            Queue own = make_queue();
            Event e = make_event();
            for (int r = 0; r < rounds; ++r) {
                Arena a(100 + t * 1000 + r, (r % 3 + 1) * (64 << 10));
                kupl_queue_h q = (r + t) % 2 ? own.get() : shared.get();
                if (kuplx_memcpy_batch_async(a.pieces.data(), a.pieces.size(), q, e.get()) != KUPL_OK ||
                    kupl_event_wait(e.get()) != KUPL_OK || a.dst != a.expected())
                    wrong.fetch_add(1);
            }
        });
    for (auto &t : threads)
        t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(kupl_queue_wait(shared.get()), KUPL_OK);
}

} // namespace
