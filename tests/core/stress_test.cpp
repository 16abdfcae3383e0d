// Eight threads share four queues and mix copies (1D, 2D, NULL queue, sync), host
// items, event records and cross-queue waits of both kinds. Every copied byte is
// checked by an item that runs after a cross-queue wait, and all checksums are
// summed and compared at the end.
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using namespace kupl_test;

namespace {

constexpr int kThreads = 8;
constexpr int kQueues = 4;
constexpr size_t kMaxCopy = 512u << 10;

struct Totals {
    std::atomic<uint64_t> sum{0};
    std::atomic<int> mismatches{0};
    std::atomic<int> items{0};
    std::atomic<int> plain_items{0};
    std::atomic<int> api_errors{0};
};

// Verifies a landed copy from a queue item. Passed by value (ARGS_SIZE).
struct VerifyArgs {
    const unsigned char *dst;
    size_t n;
    uint64_t expected;
    Totals *totals;
};

void verify_item(void *p) {
    auto *a = static_cast<VerifyArgs *>(p);
    uint64_t got = checksum(a->dst, a->n);
    if (got != a->expected)
        a->totals->mismatches.fetch_add(1);
    a->totals->sum.fetch_add(got);
    a->totals->items.fetch_add(1);
}

// Two slots per thread: one can be in flight while the other is being refilled.
struct Slot {
    std::vector<unsigned char> src = std::vector<unsigned char>(kMaxCopy);
    std::vector<unsigned char> dst = std::vector<unsigned char>(kMaxCopy);
    Event copied = make_event();
    Event verified = make_event();
    bool busy = false;
};

void worker(int id, const std::vector<Queue> &queues, int iterations, Totals &totals,
            uint64_t &expected_sum) {
    std::mt19937_64 rng(1000 + id);
    auto pick = [&](int n) { return int(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    Slot slots[2];
    auto check = [&](int rc) {
        if (rc != KUPL_OK)
            totals.api_errors.fetch_add(1);
    };
    for (int it = 0; it < iterations; ++it) {
        Slot &s = slots[it % 2];
        if (s.busy)
            check(kupl_event_wait(s.verified.get()));
        size_t n = pick(4) == 0 ? 1 + size_t(pick(int(kMaxCopy))) : 1 + size_t(pick(8192));
        fill_pattern(s.src.data(), std::min(2 * n, kMaxCopy), (uint64_t(id) << 32) | uint64_t(it));
        uint64_t sum = checksum(s.src.data(), n);
        expected_sum += sum;

        kupl_queue_h qa = queues[pick(kQueues)].get();
        kupl_queue_h qb = queues[pick(kQueues)].get();
        switch (pick(4)) {
        case 0:
            check(kupl_memcpy_async(s.dst.data(), s.src.data(), n, qa, s.copied.get()));
            break;
        case 1: { // rows of up to 64 bytes from every other row-sized block of the source
            size_t width = std::min<size_t>(n, 64);
            size_t rows = std::min(n, kMaxCopy / 2) / width;
            n = rows * width;
            std::vector<unsigned char> packed(n);
            for (size_t r = 0; r < rows; ++r)
                std::memcpy(&packed[r * width], &s.src[r * 2 * width], width);
            expected_sum -= sum;
            sum = checksum(packed.data(), n);
            expected_sum += sum;
            check(kupl_memcpy2d_async(s.dst.data(), width, s.src.data(), 2 * width, width, rows, qa,
                                      s.copied.get()));
            break;
        }
        case 2:
            check(kupl_memcpy_async(s.dst.data(), s.src.data(), n, nullptr, s.copied.get()));
            break;
        default:
            check(kupl_memcpy(s.dst.data(), s.src.data(), n));
            check(kupl_event_record(s.copied.get(), qa));
            break;
        }
        // Cross-queue dependency: qb's verify item must see the copy landed.
        if (pick(3) == 0)
            check(kupl_queue_wait_event(qb, s.copied.get()));
        else
            check(kuplx_queue_wait_event_async(qb, s.copied.get()));
        VerifyArgs args{s.dst.data(), n, sum, &totals};
        kupl_queue_item_desc_t desc{};
        desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
        desc.func = verify_item;
        desc.args = &args;
        desc.args_size = sizeof args;
        check(kupl_queue_submit(qb, &desc));
        check(kupl_event_record(s.verified.get(), qb));
        s.busy = true;
        if (pick(16) == 0) // now and then a plain host item and a full queue wait
            check(kupl::queue_submit(qa, nullptr, [&totals] { totals.plain_items.fetch_add(1); }));
        if (pick(64) == 0)
            check(kupl_queue_wait(qb));
    }
    for (Slot &s : slots)
        if (s.busy)
            check(kupl_event_wait(s.verified.get()));
}

} // namespace

TEST(Stress, EightThreadsMixedWorkChecksumMatches) {
    std::vector<Queue> queues;
    for (int i = 0; i < kQueues; ++i)
        queues.push_back(make_queue());
    const int iterations = scaled(400);
    Totals totals;
    uint64_t expected[kThreads] = {};
    kuplx_counters_t before = counters();
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back(worker, t, std::cref(queues), iterations, std::ref(totals),
                             std::ref(expected[t]));
    for (auto &t : threads)
        t.join();
    for (auto &q : queues)
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    uint64_t expected_sum = 0;
    for (uint64_t e : expected)
        expected_sum += e;
    EXPECT_EQ(totals.api_errors.load(), 0);
    EXPECT_EQ(totals.mismatches.load(), 0) << "a verify item ran before its copy landed";
    EXPECT_EQ(totals.items.load(), kThreads * iterations);
    EXPECT_EQ(totals.sum.load(), expected_sum);
    kuplx_counters_t after = counters();
    EXPECT_GE(after.host_items - before.host_items,
              uint64_t(kThreads * iterations + totals.plain_items.load()));
    EXPECT_EQ(after.copies_failed, before.copies_failed);
    std::printf("stress: %d threads x %d iterations in %.2f s\n", kThreads, iterations, seconds_since(t0));
}
