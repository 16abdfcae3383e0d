// fork(): the child of a process whose runtime is running (even busy, with other
// threads submitting at the moment of the fork) can use the library at once and
// exit normally; the parent goes on working. alarm() turns a hang into a failure.
// Under the sanitizers only the fork of a single-threaded parent runs (fork_child.h): TSan keeps
// the parent's threads registered in the child, and a child thread that glibc gives
// a reclaimed parent stack (the same pthread_t) aborts TSan ("dup thread with used id"), and
// gcc 12's ASan allocator deadlocks a child forked while a runtime thread allocates.
#include "fork_child.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

namespace {

// What the child does; its exit status is the number of the step that failed.
int child_work() {
    const size_t n = 4u << 20;
    auto src = pattern(n, 7);
    std::vector<unsigned char> dst(n, 0);
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h e = kupl_event_create();
    if (!q || !e)
        return 1;
    if (kupl_memcpy_async(dst.data(), src.data(), n, q, e) != KUPL_OK || kupl_event_wait(e) != KUPL_OK)
        return 2;
    if (dst != src)
        return 3;
    std::atomic<int> ran{0};
    if (submit_fn(q, [&ran] { ran = 1; }) != KUPL_OK || kupl_queue_wait(q) != KUPL_OK || ran.load() != 1)
        return 4;
    std::fill(dst.begin(), dst.end(), 0);
    if (kupl_memcpy(dst.data(), src.data(), n) != KUPL_OK || dst != src)
        return 5;
    kupl_event_destroy(e);
    kupl_queue_destroy(q);
    return 0;
}

// Forks; the child runs child_work() and exits; a hang in it fails after 20 s.
::testing::AssertionResult run_child() {
    return kupl_test::run_in_child(child_work, 20, " (1 create, 2 async copy, 3 bytes, 4 item, 5 sync copy)");
}

// The parent's runtime is started and has done work on every path.
void warm_up() {
    const size_t n = 4u << 20;
    auto src = pattern(n, 8);
    std::vector<unsigned char> dst(n, 0);
    Queue q = make_queue();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), nullptr), KUPL_OK);
    ASSERT_EQ(submit_fn(q.get(), [] {}), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    ASSERT_EQ(dst, src);
}

} // namespace

TEST(Fork, ChildOfARunningRuntimeCanCopy) {
    KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS();
    warm_up();
    EXPECT_TRUE(run_child());
}

TEST(Fork, ChildBeforeAnyUseCanCopy) {
    EXPECT_TRUE(run_child());
}

TEST(Fork, ForkWhileOtherThreadsSubmit) {
    KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS();
    warm_up();
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    std::vector<std::thread> busy;
    for (int t = 0; t < 2; ++t)
        busy.emplace_back([&, t] {
            const size_t n = t == 0 ? 1u << 20 : 3000;
            auto src = pattern(n, t);
            std::vector<unsigned char> dst(n);
            Queue q = make_queue();
            Event e = make_event();
            while (!stop.load()) {
                if (kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()) != KUPL_OK ||
                    submit_fn(q.get(), [] {}) != KUPL_OK || kupl_event_wait(e.get()) != KUPL_OK ||
                    kupl_queue_wait(q.get()) != KUPL_OK || dst != src)
                    errors.fetch_add(1);
            }
        });
    for (int i = 0; i < scaled(8); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        EXPECT_TRUE(run_child()) << "fork number " << i;
    }
    stop = true;
    for (auto &t : busy)
        t.join();
    EXPECT_EQ(errors.load(), 0) << "the parent's work broke around fork";
}

TEST(Fork, ParentKeepsWorkingAfterFork) {
    KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS();
    warm_up();
    ASSERT_TRUE(run_child());
    warm_up();
    kupl_queue_h q0 = kupl_queue_acquire(0);
    ASSERT_NE(q0, nullptr);
    std::atomic<bool> ran{false};
    ASSERT_EQ(submit_fn(q0, [&] { ran = true; }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait_all(), KUPL_OK);
    EXPECT_TRUE(ran.load());
}
