// support::Counters (core/support/counters.h): every thread bumps a slot of its own with a plain
// load and store, so the totals are exact only if no two living threads ever share a slot. These
// tests count with more threads than there are slots, with threads that come and go, and in a
// child forked while other threads held slots.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "support/counters.h"

namespace {

using kupl::support::Counter;
using kupl::support::Counters;
using kupl::support::kThreadSlots;

// Holds threads alive until all of them arrived, so they bump (and own their slots) at once.
class Gate {
  public:
    explicit Gate(unsigned parties) : left_(parties) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--left_ == 0)
            open_.notify_all();
        else
            open_.wait(lock, [this] { return left_ == 0; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable open_;
    unsigned left_;
};

// Threads alive at once, more than the slots: the last ones share the extra slot.
TEST(Counters, MoreThreadsThanSlotsAddUpExactly) {
    constexpr unsigned kThreads = kThreadSlots + 44, kBumps = 2000;
    Counters counters;
    Gate all_started(kThreads), all_bumped(kThreads);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            all_started.arrive_and_wait();
            for (unsigned i = 0; i < kBumps; ++i) {
                counters.bump(Counter::bytes_copied, 3);
                counters.bump(Counter::copies_inline);
            }
            all_bumped.arrive_and_wait(); // no slot is handed on before every thread is done
        });
    for (std::thread &thread : threads)
        thread.join();
    EXPECT_EQ(counters.total(Counter::bytes_copied), std::uint64_t{kThreads} * kBumps * 3);
    EXPECT_EQ(counters.total(Counter::copies_inline), std::uint64_t{kThreads} * kBumps);
    EXPECT_EQ(counters.total(Counter::copies_failed), 0u);
}

// Threads that exit hand their slots on; what they counted stays, and the next owner adds to it.
TEST(Counters, SlotsOfExitedThreadsAreReusedWithoutLosingCounts) {
    Counters counters;
    std::uint64_t expected = 0;
    for (unsigned round = 1; round <= 6; ++round) {
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 40; ++t)
            threads.emplace_back([&counters, round] {
                for (unsigned i = 0; i < 500; ++i)
                    counters.bump(Counter::host_items, round);
            });
        for (std::thread &thread : threads)
            thread.join();
        expected += 40u * 500u * round;
        ASSERT_EQ(counters.total(Counter::host_items), expected) << "round " << round;
    }
    Counters fresh; // counts of its own, in the same slots
    EXPECT_EQ(fresh.total(Counter::host_items), 0u);
}

// Living threads own distinct slots; a thread keeps its slot.
TEST(Counters, LivingThreadsOwnDistinctSlots) {
    constexpr unsigned kThreads = 64;
    Gate all_claimed(kThreads);
    std::mutex mutex;
    std::set<unsigned> slots;
    bool stable = true;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            const unsigned slot = kupl::support::thread_slot();
            all_claimed.arrive_and_wait();
            std::lock_guard<std::mutex> lock(mutex);
            slots.insert(slot);
            stable = stable && kupl::support::thread_slot() == slot;
        });
    for (std::thread &thread : threads)
        thread.join();
    EXPECT_EQ(slots.size(), kThreads);
    EXPECT_EQ(slots.count(kThreadSlots), 0u); // none needed the shared slot
    EXPECT_TRUE(stable);
}

// A child forked while threads held slots has only the forking thread: the others' slots are free
// there, so a full set of new threads each get one of their own.
TEST(Counters, AForkedChildGetsTheSlotsOfThreadsItDoesNotHave) {
#ifdef KUPL_TEST_TSAN
    GTEST_SKIP() << "TSan cannot follow threads created after a multi-threaded fork";
#endif
    constexpr unsigned kParentThreads = 32;
    Gate holding(kParentThreads + 1), release(kParentThreads + 1);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kParentThreads; ++t)
        threads.emplace_back([&] {
            (void)kupl::support::thread_slot();
            holding.arrive_and_wait();
            release.arrive_and_wait();
        });
    holding.arrive_and_wait();
    (void)kupl::support::thread_slot();
    const pid_t child = fork();
    if (child == 0) {
        // Every slot but this thread's: all of them must be owned, none shared.
        constexpr unsigned kChildThreads = kThreadSlots - 1;
        Gate all_claimed(kChildThreads);
        std::atomic<unsigned> shared{0};
        std::vector<std::thread> child_threads;
        for (unsigned t = 0; t < kChildThreads; ++t)
            child_threads.emplace_back([&] {
                if (kupl::support::thread_slot() == kThreadSlots)
                    shared.fetch_add(1);
                all_claimed.arrive_and_wait();
            });
        for (std::thread &thread : child_threads)
            thread.join();
        _exit(shared.load() == 0 ? 0 : 1);
    }
    release.arrive_and_wait();
    for (std::thread &thread : threads)
        thread.join();
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "threads of the child had to share a slot";
}

} // namespace
