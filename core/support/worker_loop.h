// The loop every runtime worker thread runs: take work while there is some, spin briefly when
// there is none (a hand-off to a spinning thread costs ~1 us, to a sleeping one 20-100 us), then
// park. Never spins indefinitely: an idle spinner slows the other core's compute by ~25%.
#pragma once

#include "support/counters.h"
#include "support/join_within.h"
#include "support/parking.h"
#include "support/wake_cost.h"

#include <atomic>
#include <chrono>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace kupl::support {

// Where idle workers wait: parked ones on an event count, while `spinning` counts those still
// spinning, which find new work without being woken. Each wake-up is measured (wake_cost).
struct IdleWorkers {
    EventCount parked;
    std::atomic<int> spinning{0};
    WakeCost wake_cost;

    // Call after publishing work. Wakes one parked worker unless one is spinning (it will take the
    // work: waking another would only make it spin in vain, on a core someone else needs), or every
    // parked worker when `all`. Returns true if it issued a wake-up.
    bool notify(bool all) {
        if (!all && spinning.fetch_add(0, std::memory_order_seq_cst) > 0)
            return false;
        return wake_parked(all);
    }
    // Wakes one parked worker (or all), spinning ones or not. Returns true if it issued a wake-up.
    bool wake_parked(bool all) {
        std::uint64_t began = 0;
        if (!parked.notify(all, &began))
            return false;
        wake_cost.call_made(began, now_ns());
        return true;
    }
};

// try_run() does one unit of work and returns true, or returns false if there is none.
// has_work() is a cheap, racy hint used while spinning. Returns once `stopping` is set and
// try_run() finds nothing.
template <typename TryRun, typename HasWork>
void run_worker_loop(TryRun try_run, HasWork has_work, const std::atomic<bool> &stopping, IdleWorkers &idle,
                     unsigned spin_us, Counters &counters) {
    for (;;) {
        if (try_run())
            continue;
        const std::uint64_t began = now_ns(), deadline = began + std::uint64_t{spin_us} * 1000;
        SpinWait spin(began);
        bool found = false;
        idle.spinning.fetch_add(1, std::memory_order_seq_cst);
        for (std::uint64_t now = began; !found && now < deadline; now = now_ns()) {
            spin.pause(now);
            found = has_work();
        }
        // Stop counting as a spinner before the last look, so a producer that saw us spinning
        // (and so woke nobody) has published its work before that look.
        idle.spinning.fetch_sub(1, std::memory_order_seq_cst);
        if (found)
            continue;
        const std::uint32_t key = idle.parked.prepare_wait();
        if (try_run()) {
            idle.parked.cancel_wait();
            continue;
        }
        if (stopping.load(std::memory_order_acquire)) {
            idle.parked.cancel_wait();
            return;
        }
        counters.bump(Counter::worker_parks);
        idle.parked.commit_wait(key);
        idle.wake_cost.woke(now_ns());
    }
}

// Starts up to `count` threads into `threads`, the i-th running make_body(i)(). Stops at the first
// the system refuses (too many threads for ulimit -u, no address space left for a stack) instead
// of throwing, so the caller can run with the threads that did start. Returns how many started.
template <typename MakeBody>
int start_threads(std::vector<std::thread> &threads, int count, MakeBody make_body) {
    for (int i = 0; i < count; ++i) {
        try {
            threads.emplace_back(make_body(i));
        } catch (const std::system_error &) {
            return i;
        } catch (const std::bad_alloc &) {
            return i;
        }
    }
    return count;
}

// Stops a pool of threads running run_worker_loop: they finish the work they can still find,
// then return; each is joined, for at most `limit` when one is given (see join_within).
inline void stop_workers(std::atomic<bool> &stopping, IdleWorkers &idle, std::vector<std::thread> &threads,
                         std::optional<std::chrono::milliseconds> limit = std::nullopt) {
    stopping.store(true, std::memory_order_release);
    idle.notify(true);
    for (std::thread &thread : threads) {
        if (limit)
            join_within(thread, *limit);
        else if (thread.joinable())
            thread.join();
    }
}

} // namespace kupl::support
