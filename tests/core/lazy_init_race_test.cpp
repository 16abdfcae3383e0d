// The runtime starts on first use. Eight threads make their first call at the same
// moment, each a different kind of call; every one must find a fully started
// runtime. Runs first in fresh forked children (the parent has not touched the
// library yet), then once in this process. Its own executable so nothing runs before.
#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

using namespace kupl_test;

namespace {

constexpr int kThreads = 8;

// Returns 0 if every thread's first call and follow-up copy worked, else a code
// naming the first kind of call that failed.
int race_once() {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::atomic<int> failed_kind{0};
    kupl_queue_h acquired[kThreads] = {};
    const size_t n = 1u << 20;
    const std::vector<unsigned char> src = pattern(n, 42);

    auto body = [&](int id) {
        std::vector<unsigned char> dst(n, 0);
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
        }
        auto fail = [&](int kind) {
            int expected = 0;
            failed_kind.compare_exchange_strong(expected, kind);
        };
        switch (id % 4) {
        case 0: { // first call: acquire a runtime queue
            acquired[id] = kupl_queue_acquire(0);
            if (!acquired[id])
                fail(1);
            break;
        }
        case 1: { // first call: ask about the engine
            kuplx_engine_info_t info{};
            if (kuplx_get_engine_info(&info) != KUPL_OK || info.num_channels < 1 || info.num_executors < 1)
                fail(2);
            break;
        }
        case 2: { // first call: create a queue and copy on it
            kupl_queue_h q = kupl_queue_create();
            kupl_event_h e = kupl_event_create();
            if (!q || !e || kupl_memcpy_async(dst.data(), src.data(), n, q, e) != KUPL_OK ||
                kupl_event_wait(e) != KUPL_OK || dst != src)
                fail(3);
            kupl_event_destroy(e);
            kupl_queue_destroy(q);
            break;
        }
        default: { // first call: a large synchronous copy (through the engine)
            if (kupl_memcpy(dst.data(), src.data(), n) != KUPL_OK || dst != src)
                fail(4);
            break;
        }
        }
        // Then every thread copies through one shared acquired queue.
        std::fill(dst.begin(), dst.end(), 0);
        kupl_event_h e = kupl_event_create();
        if (!e || kupl_memcpy_async(dst.data(), src.data(), n, kupl_queue_acquire(1), e) != KUPL_OK ||
            kupl_event_wait(e) != KUPL_OK || dst != src)
            fail(5);
        kupl_event_destroy(e);
    };

    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back(body, i);
    while (ready.load() < kThreads)
        std::this_thread::yield();
    go.store(true, std::memory_order_release);
    for (auto &t : threads)
        t.join();
    for (int i = 0; i < kThreads; i += 4)
        for (int j = 0; j < kThreads; j += 4)
            if (acquired[i] != acquired[j])
                return 6; // two threads got different queues for index 0
    return failed_kind.load();
}

} // namespace

TEST(LazyInit, EightThreadsRaceOnFirstCall) {
    const int children = scaled(12);
    for (int c = 0; c < children; ++c) {
        std::fflush(nullptr);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            alarm(20); // a hang ends as SIGALRM
            _exit(race_once());
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_FALSE(WIFSIGNALED(status)) << "child " << c << " died of signal " << WTERMSIG(status)
                                          << (WTERMSIG(status) == SIGALRM ? " (hung)" : "");
        ASSERT_EQ(WEXITSTATUS(status), 0)
            << "child " << c
            << ": failing first-call kind (1 acquire, 2 engine info, 3 queue copy, "
               "4 sync copy, 5 follow-up copy, 6 acquire(0) differed)";
    }
    EXPECT_EQ(race_once(), 0) << "in-process race";
}
