// The loop every runtime worker thread runs: take work while there is some, spin briefly when
// there is none (a hand-off to a spinning thread costs ~1 us, to a sleeping one ~100 us), then
// park. Never spins indefinitely: an idle spinner slows the other core's compute by ~25%.
#pragma once

#include "support/counters.h"
#include "support/parking.h"

#include <atomic>

namespace kupl::support {

// try_run() does one unit of work and returns true, or returns false if there is none.
// has_work() is a cheap, racy hint used while spinning. Returns once `stopping` is set and
// try_run() finds nothing.
template <typename TryRun, typename HasWork>
void run_worker_loop(TryRun try_run, HasWork has_work, const std::atomic<bool> &stopping, EventCount &idle,
                     unsigned spin_us, Counters &counters) {
    for (;;) {
        if (try_run())
            continue;
        const std::uint64_t deadline = now_ns() + std::uint64_t{spin_us} * 1000;
        bool found = false;
        while (!found && now_ns() < deadline) {
            for (int i = 0; i < 16; ++i)
                cpu_relax();
            found = has_work();
        }
        if (found)
            continue;
        const std::uint32_t key = idle.prepare_wait();
        if (try_run()) {
            idle.cancel_wait();
            continue;
        }
        if (stopping.load(std::memory_order_acquire)) {
            idle.cancel_wait();
            return;
        }
        bump(counters.worker_parks);
        idle.commit_wait(key);
    }
}

} // namespace kupl::support
