// A hardware copy engine plugged in through KUPL_BACKEND (include/kupl_backend.h), played by the
// fake provider library of tests/core/fake_backend/: a real shared library with its own completion
// thread. Run with KUPL_BACKEND set to it (tests/core/CMakeLists.txt). Checks the routing (eligible
// copies to the provider, every byte right; the rest to software), that a provider's failure
// reaches events, queues and synchronous calls, refusals, out-of-order completions, many threads,
// and exit with copies in flight.
#include "test_support.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace kupl_test;

namespace {

// The fake's counters (fake_backend.c).
struct FakeStats {
    uint64_t submits, taken, refused, completed, failed, bytes, out_of_order, foreign_thread, max_outstanding,
        opens, closes;
};

// The fake provider's control functions, found in the copy libkupl loaded.
struct Fake {
    void (*configure)(const char *, long) = nullptr;
    void (*get_stats)(FakeStats *) = nullptr;

    FakeStats stats() const {
        FakeStats s{};
        get_stats(&s);
        return s;
    }
};

Fake fake() {
    Fake f;
    kuplx_engine_info_t info{};
    kuplx_get_engine_info(&info); // starts the runtime, which loads the provider
    const char *path = std::getenv("KUPL_BACKEND");
    void *library = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    if (library != nullptr) {
        f.configure =
            reinterpret_cast<void (*)(const char *, long)>(dlsym(library, "fake_backend_configure"));
        f.get_stats = reinterpret_cast<void (*)(FakeStats *)>(dlsym(library, "fake_backend_get_stats"));
        dlclose(library); // drops our reference only: libkupl holds its own
    }
    return f;
}

// Buffers aligned to 64 bytes (the fake's alignment rule), zeroed.
struct Buffer {
    explicit Buffer(size_t n) : bytes(n + 128, 0) {}
    unsigned char *data() {
        auto address = reinterpret_cast<std::uintptr_t>(bytes.data());
        return bytes.data() + ((64 - address % 64) % 64);
    }
    std::vector<unsigned char> bytes;
};

constexpr size_t kEligible = 1u << 20; // within the fake's 64 KiB .. 8 MiB

struct Provider : ::testing::Test {
    void SetUp() override {
        f = fake();
        ASSERT_NE(f.configure, nullptr) << "KUPL_BACKEND is not the fake provider, or it was not loaded";
        ASSERT_NE(f.get_stats, nullptr);
    }
    void TearDown() override {
        if (f.configure != nullptr) {
            f.configure("fail_nth", 0);
            f.configure("fail_every", 0);
            f.configure("refuse", 0);
        }
    }
    Fake f;
};

// A 1D copy of n bytes, src offset by `misalign`, through `copy(dst, src)`; checks every byte.
template <class Copy> void check_copy(size_t n, size_t misalign, uint64_t seed, Copy copy) {
    Buffer src(n + misalign), dst(n);
    fill_pattern(src.data() + misalign, n, seed);
    copy(dst.data(), src.data() + misalign);
    EXPECT_EQ(first_difference(dst.data(), src.data() + misalign, n), SIZE_MAX) << "size " << n;
}

} // namespace

TEST_F(Provider, IsLoadedAndShownWithItsRoutingRule) {
    kuplx_engine_info_t info = engine_info();
    EXPECT_STREQ(info.backend, "fake+software");
    char provider[512], rule[512];
    ASSERT_EQ(kuplx_get_copy_routing(provider, sizeof provider, rule, sizeof rule), KUPL_OK);
    EXPECT_NE(std::string(provider).find("fake ("), std::string::npos) << provider;
    EXPECT_NE(std::string(provider).find(std::getenv("KUPL_BACKEND")), std::string::npos) << provider;
    EXPECT_STREQ(rule,
                 "to fake: 1D and 2D copies of 64K..8M, pitches up to 1M, aligned to 64 B; the rest, and "
                 "what it refuses: software");
    EXPECT_EQ(kuplx_get_copy_routing(nullptr, 0, nullptr, 0), KUPL_OK);
    EXPECT_EQ(f.stats().opens, 1u);
}

TEST_F(Provider, EligibleCopiesGoToItAndEveryByteLands) {
    const FakeStats before = f.stats();
    Queue q = make_queue();
    Event e = make_event();
    check_copy(kEligible, 0, 1, [&](void *d, const void *s) {
        ASSERT_EQ(kupl_memcpy_async(d, s, kEligible, q.get(), e.get()), KUPL_OK);
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    });
    check_copy(kEligible, 0, 2,
               [&](void *d, const void *s) { ASSERT_EQ(kupl_memcpy(d, s, kEligible), KUPL_OK); });
    check_copy(kEligible, 0, 3, [&](void *d, const void *s) {
        ASSERT_EQ(kupl_memcpy_async(d, s, kEligible, nullptr, e.get()), KUPL_OK); // no queue
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    });
    // 2D: 256 rows of 4000 bytes at pitch 4096 (dst) and 8192 (src).
    const size_t width = 4000, rows = 256, dpitch = 4096, spitch = 8192;
    for (int sync = 0; sync < 2; ++sync) {
        Buffer src(spitch * rows), dst(dpitch * rows);
        fill_pattern(src.data(), spitch * rows, 4 + sync);
        if (sync)
            ASSERT_EQ(kupl_memcpy2d(dst.data(), dpitch, src.data(), spitch, width, rows), KUPL_OK);
        else
            ASSERT_EQ(
                kupl_memcpy2d_async(dst.data(), dpitch, src.data(), spitch, width, rows, q.get(), nullptr),
                KUPL_OK);
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        for (size_t r = 0; r < rows; ++r) {
            ASSERT_EQ(first_difference(dst.data() + r * dpitch, src.data() + r * spitch, width), SIZE_MAX)
                << "row " << r;
            for (size_t b = width; b < dpitch; ++b)
                ASSERT_EQ(dst.data()[r * dpitch + b], 0) << "gap written, row " << r;
        }
    }
    const FakeStats after = f.stats();
    EXPECT_EQ(after.taken - before.taken, 5u);
    EXPECT_EQ(after.completed - before.completed, 5u);
    EXPECT_EQ(after.bytes - before.bytes, 3 * kEligible + 2 * width * rows);
    EXPECT_EQ(after.failed, before.failed);
    EXPECT_EQ(after.foreign_thread - before.foreign_thread, 5u) << "completions come from the fake's thread";
}

TEST_F(Provider, IneligibleCopiesGoToSoftware) {
    const FakeStats before = f.stats();
    Queue q = make_queue();
    Event e = make_event();
    auto async = [&](size_t n) {
        return [&, n](void *d, const void *s) {
            ASSERT_EQ(kupl_memcpy_async(d, s, n, q.get(), e.get()), KUPL_OK);
            ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
        };
    };
    check_copy(32u << 10, 0, 10, async(32u << 10)); // below the fake's 64 KiB, above the inline threshold
    check_copy(12u << 20, 0, 11, async(12u << 20)); // above its 8 MiB
    check_copy(kEligible, 1, 12, async(kEligible)); // source not 64-byte aligned
    check_copy(12u << 20, 0, 13,
               [](void *d, const void *s) { ASSERT_EQ(kupl_memcpy(d, s, 12u << 20), KUPL_OK); });
    // 2D with a pitch above the fake's 1 MiB, and one with a pitch not a multiple of 64 (both
    // above the fake's minimum size and the inline threshold).
    for (size_t pitch : {size_t{2} << 20, size_t{4100}}) {
        const size_t width = 4000, rows = pitch > (1u << 20) ? 17 : 64;
        Buffer src(pitch * rows), dst(pitch * rows);
        fill_pattern(src.data(), pitch * rows, pitch);
        ASSERT_EQ(kupl_memcpy2d_async(dst.data(), pitch, src.data(), pitch, width, rows, q.get(), nullptr),
                  KUPL_OK);
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        for (size_t r = 0; r < rows; ++r)
            ASSERT_EQ(first_difference(dst.data() + r * pitch, src.data() + r * pitch, width), SIZE_MAX);
    }
    EXPECT_EQ(f.stats().submits, before.submits) << "an ineligible copy reached the provider";
}

TEST_F(Provider, AFailedCopyReachesItsEventAndQueueAndLaterCopiesWork) {
    Queue q = make_queue();
    Event e = make_event();
    Buffer src(kEligible), dst(kEligible);
    fill_pattern(src.data(), kEligible, 20);
    const FakeStats before = f.stats();
    f.configure("fail_nth", 1);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), kEligible, q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_event_query(e.get()), KUPL_EVENT_STATUS_COMPLETE);
    char why[256] = "";
    EXPECT_EQ(kuplx_event_get_error(e.get(), why, sizeof why), KUPL_ERROR);
    EXPECT_STREQ(why, "copy engine fake: injected failure (FAKE_BACKEND_FAIL_NTH / FAIL_EVERY)");
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK) << "reported once";
    EXPECT_EQ(f.stats().failed - before.failed, 1u);

    // A failure with no event of its own: the queue's next wait and the next record report it.
    f.configure("fail_nth", 1);
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), kEligible, q.get(), nullptr), KUPL_OK);
    Event recorded = make_event();
    ASSERT_EQ(kupl_event_record(recorded.get(), q.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(recorded.get()), KUPL_ERROR);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_ERROR);

    // Later copies on the same queue and event work.
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), kEligible, q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), kEligible), SIZE_MAX);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(f.stats().failed - before.failed, 2u);
}

TEST_F(Provider, AFailedSynchronousCopyReturnsError) {
    Buffer src(kEligible), dst(kEligible);
    fill_pattern(src.data(), kEligible, 30);
    const FakeStats before = f.stats();
    const uint64_t failed_before = counters().copies_failed;
    f.configure("fail_nth", 1);
    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), kEligible), KUPL_ERROR);
    f.configure("fail_nth", 1);
    EXPECT_EQ(kupl_memcpy2d(dst.data(), 4096, src.data(), 4096, 4000, kEligible / 4096), KUPL_ERROR);
    // The synchronous queue reports a failed copy through its own call.
    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    ASSERT_NE(sync, nullptr);
    f.configure("fail_nth", 1);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), kEligible, sync, nullptr), KUPL_ERROR);
    EXPECT_EQ(f.stats().failed - before.failed, 3u);
    EXPECT_EQ(f.stats().taken - before.taken, 3u) << "the failures did not come from the provider";

    EXPECT_EQ(kupl_memcpy(dst.data(), src.data(), kEligible), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), kEligible), SIZE_MAX);
    std::fill(dst.bytes.begin(), dst.bytes.end(), 0);
    EXPECT_EQ(kupl_memcpy_async(dst.data(), src.data(), kEligible, sync, nullptr), KUPL_OK);
    EXPECT_EQ(first_difference(dst.data(), src.data(), kEligible), SIZE_MAX);
    EXPECT_EQ(counters().copies_failed - failed_before, 3u);
}

TEST_F(Provider, RefusedCopiesAreDoneInSoftware) {
    f.configure("refuse", 1);
    const FakeStats before = f.stats();
    Queue q = make_queue();
    Event e = make_event();
    check_copy(kEligible, 0, 40, [&](void *d, const void *s) {
        ASSERT_EQ(kupl_memcpy_async(d, s, kEligible, q.get(), e.get()), KUPL_OK);
        ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    });
    check_copy(kEligible, 0, 41,
               [&](void *d, const void *s) { ASSERT_EQ(kupl_memcpy(d, s, kEligible), KUPL_OK); });
    const FakeStats after = f.stats();
    EXPECT_EQ(after.refused - before.refused, 2u);
    EXPECT_EQ(after.taken, before.taken);
    EXPECT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
}

// Copies on many queues (and with no queue) complete in the fake's order, not KUPL's: each event
// still gets its own copy's result.
TEST_F(Provider, OutOfOrderCompletionsReachTheRightEvents) {
    f.configure("reorder", 6);
    const int n = 24;
    std::vector<Queue> queues;
    std::vector<Event> events;
    std::vector<Buffer> srcs, dsts;
    for (int i = 0; i < n; ++i) {
        queues.push_back(make_queue());
        events.push_back(make_event());
        srcs.emplace_back(kEligible / 4);
        dsts.emplace_back(kEligible / 4);
        fill_pattern(srcs.back().data(), kEligible / 4, 100 + i);
    }
    const FakeStats before = f.stats();
    f.configure("fail_every", 5); // every 5th accepted copy fails
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(kupl_memcpy_async(dsts[i].data(), srcs[i].data(), kEligible / 4,
                                    i % 3 == 0 ? nullptr : queues[i].get(), events[i].get()),
                  KUPL_OK);
    int failures = 0;
    for (int i = 0; i < n; ++i) {
        const int rc = kupl_event_wait(events[i].get());
        if (rc == KUPL_OK)
            EXPECT_EQ(first_difference(dsts[i].data(), srcs[i].data(), kEligible / 4), SIZE_MAX)
                << "copy " << i;
        else
            ++failures;
    }
    f.configure("reorder", 1);
    const FakeStats after = f.stats();
    EXPECT_EQ(after.taken - before.taken, static_cast<uint64_t>(n));
    EXPECT_EQ(static_cast<uint64_t>(failures), after.failed - before.failed);
    EXPECT_GE(failures, 1);
    EXPECT_GT(after.out_of_order, before.out_of_order) << "the fake never completed out of order";
}

// Threads that submit, wait and destroy queues and events at once, with copies failing now and
// then: every copy settles, every byte of a successful one is right, nothing is left in flight.
TEST_F(Provider, ManyThreadsSubmitAndDestroyConcurrently) {
    f.configure("fail_every", 7);
    const FakeStats before = f.stats();
    const int threads = 8, rounds = scaled(40);
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const size_t sizes[] = {kEligible / 8, kEligible / 2, 32u << 10, kEligible * 9};
            for (int r = 0; r < rounds; ++r) {
                const size_t n = sizes[(t + r) % 4];
                Buffer src(n), dst(n);
                fill_pattern(src.data(), n, static_cast<uint64_t>(t * 1000 + r));
                kupl_queue_h q = kupl_queue_create();
                kupl_event_h e = kupl_event_create();
                kupl_event_h dropped = kupl_event_create();
                if (kupl_memcpy_async(dst.data(), src.data(), n, q, e) != KUPL_OK)
                    ++wrong;
                // A second copy whose event is destroyed while it flies.
                Buffer other(n);
                if (kupl_memcpy_async(other.data(), src.data(), n, q, dropped) != KUPL_OK)
                    ++wrong;
                kupl_event_destroy(dropped);
                const int rc = kupl_event_wait(e);
                if (rc == KUPL_OK && first_difference(dst.data(), src.data(), n) != SIZE_MAX)
                    ++wrong;
                if (rc != KUPL_OK)
                    ++failed;
                kupl_event_destroy(e);
                kupl_queue_destroy(q); // waits for the second copy
            }
        });
    }
    for (auto &thread : pool)
        thread.join();
    EXPECT_EQ(wrong.load(), 0);
    const FakeStats after = f.stats();
    EXPECT_EQ(after.taken - before.taken, after.completed - before.completed) << "a copy still flies";
    EXPECT_GT(after.taken - before.taken, 0u);
    EXPECT_LE(static_cast<uint64_t>(failed.load()), after.failed - before.failed);
}

namespace {

// The child: copies in flight (slow ones, on queues and without) when it calls exit(0).
void exit_with_copies_in_flight(int fd) {
    Fake control = fake();
    if (control.configure == nullptr)
        _exit(3);
    control.configure("delay_us", 20000);
    control.configure("report_fd", fd);
    static std::vector<Buffer> *buffers = new std::vector<Buffer>; // reachable at exit, never freed
    buffers->reserve(16);
    for (int i = 0; i < 8; ++i) {
        buffers->emplace_back(kEligible);
        buffers->emplace_back(kEligible);
        kupl_queue_h q = i % 2 == 0 ? kupl_queue_create() : nullptr;
        kupl_memcpy_async((*buffers)[2 * i + 1].data(), (*buffers)[2 * i].data(), kEligible, q, nullptr);
    }
    std::exit(0);
}

} // namespace

// Exit drains the provider's copies before it closes and unloads it. The parent never starts the
// runtime (the fork is then safe under ThreadSanitizer too); the fake's close() reports in a pipe.
TEST(ProviderExit, CopiesInFlightAtExitCompleteBeforeTheProviderCloses) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        alarm(20);
        exit_with_copies_in_flight(fds[1]);
        _exit(100);
    }
    close(fds[1]);
    std::string heard;
    char buffer[256];
    ssize_t got;
    while ((got = read(fds[0], buffer, sizeof buffer)) > 0)
        heard.append(buffer, static_cast<size_t>(got));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(heard, "fake closed: taken=8 completed=8 outstanding=0;");
}
