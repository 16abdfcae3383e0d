// support::EventCount, the sleep/wake-up primitive under every wait in the runtime: a notify()
// issues a wake-up only for a sleeper that has none coming (a woken thread stays counted as a
// sleeper until it runs, which between vCPUs took up to 25 us here), and no notification is lost.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/parking.h"

namespace {

using kupl::support::EventCount;

TEST(EventCount, NotifiesOnlySleepersWithoutAWakeUpComing) {
    EventCount count;
    EXPECT_FALSE(count.notify(false)) << "nobody sleeps";
    EXPECT_FALSE(count.notify(true)) << "nobody sleeps";

    // The calling thread counts as a sleeper from prepare_wait() on (it never blocks here).
    // ASSERT where a commit_wait() follows: without the wake-up it would block for good.
    const std::uint32_t key = count.prepare_wait();
    ASSERT_TRUE(count.notify(false));
    EXPECT_FALSE(count.notify(false)) << "the one sleeper already has a wake-up coming";
    EXPECT_FALSE(count.notify(true));
    count.commit_wait(key); // the epoch moved on: returns at once, taking its wake-up with it
    EXPECT_FALSE(count.notify(false)) << "nobody sleeps any more";

    const std::uint32_t first = count.prepare_wait();
    const std::uint32_t second = count.prepare_wait();
    ASSERT_TRUE(count.notify(false));
    ASSERT_TRUE(count.notify(false)) << "the second sleeper has no wake-up coming yet";
    EXPECT_FALSE(count.notify(true));
    count.commit_wait(first);
    count.commit_wait(second);

    const std::uint32_t third = count.prepare_wait();
    count.prepare_wait();
    ASSERT_TRUE(count.notify(true)) << "wakes both";
    EXPECT_FALSE(count.notify(false));
    count.cancel_wait(); // a sleeper that found its condition true leaves, with a wake-up
    const std::uint32_t fourth = count.prepare_wait();
    ASSERT_TRUE(count.notify(false)) << "a sleeper that came after the wake-up needs its own";
    count.commit_wait(third);
    count.commit_wait(fourth);
    EXPECT_FALSE(count.notify(true));
}

// Consumers each wait for their own target of a shared counter; producers raise it one step at
// a time with notify(false) or notify(true) at random. Every consumer must see its target:
// a skipped notification that left a sleeper without a wake-up would hang one (the watchdog
// then fails the test instead of letting it hang).
TEST(EventCount, NoNotificationIsLostUnderContention) {
    constexpr int kConsumers = 6, kProducers = 2, kSteps = 20000;
    // On the heap, and leaked if a thread hangs: its threads are then left blocked, not joined.
    struct Shared {
        EventCount count;
        std::atomic<int> value{0};
        std::atomic<int> done{0};
    };
    auto *shared = new Shared;
    std::vector<std::thread> threads;
    for (int c = 0; c < kConsumers; ++c)
        threads.emplace_back([shared, c] {
            for (int target = c; target <= kProducers * kSteps; target += 97) {
                while (shared->value.load(std::memory_order_acquire) < target) {
                    const std::uint32_t key = shared->count.prepare_wait();
                    if (shared->value.load(std::memory_order_acquire) >= target) {
                        shared->count.cancel_wait();
                        break;
                    }
                    shared->count.commit_wait(key);
                }
            }
            shared->done.fetch_add(1);
        });
    for (int p = 0; p < kProducers; ++p)
        threads.emplace_back([shared, p] {
            unsigned seed = 12345u + static_cast<unsigned>(p);
            for (int i = 0; i < kSteps; ++i) {
                shared->value.fetch_add(1, std::memory_order_release);
                seed = seed * 1103515245u + 12345u;
                shared->count.notify((seed >> 16) % 4 == 0);
            }
            shared->done.fetch_add(1);
        });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (shared->done.load() < kConsumers + kProducers && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int stuck = kConsumers + kProducers - shared->done.load();
    if (stuck > 0) {
        ADD_FAILURE() << stuck << " threads still waiting after 60 s: a notification was lost";
        for (std::thread &thread : threads)
            thread.detach();
        return;
    }
    for (std::thread &thread : threads)
        thread.join();
    EXPECT_EQ(shared->value.load(), kProducers * kSteps);
    delete shared;
}

} // namespace
