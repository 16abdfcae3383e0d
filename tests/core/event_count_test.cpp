// support::EventCount, the sleep/wake-up primitive under every wait in the runtime: no
// notification may be lost. A variant that skipped the wake-up system call for sleepers that
// seemed to have one coming lost one here (in the third pass of CI's repeated core suites): a
// sleeper that read the epoch just after a notify's increment was counted as woken, blocked,
// and no later notify woke it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/parking.h"

namespace {

using kupl::support::EventCount;

// Consumers each wait for their own target of a shared counter; producers raise it one step at
// a time with notify(false) or notify(true) at random. Every consumer must see its target:
// a skipped notification that left a sleeper without a wake-up would hang one (the watchdog
// then fails the test instead of letting it hang).
TEST(EventCount, NoNotificationIsLostUnderContention) {
    constexpr int kConsumers = 6, kProducers = 2, kSteps = 100000;
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
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (shared->done.load() < kConsumers + kProducers && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int stuck = kConsumers + kProducers - shared->done.load();
    if (stuck > 0) {
        ADD_FAILURE() << stuck << " threads still waiting after 30 s: a notification was lost";
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
