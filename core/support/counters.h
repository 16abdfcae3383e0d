// Engine counters (exposed by kuplx_get_counters); relaxed atomics, monotonic.
#pragma once

#include <atomic>
#include <cstdint>

namespace kupl::support {

struct Counters {
    std::atomic<std::uint64_t> copies_submitted{0};
    std::atomic<std::uint64_t> copies_inline{0};
    std::atomic<std::uint64_t> copies_failed{0};
    std::atomic<std::uint64_t> bytes_copied{0};
    std::atomic<std::uint64_t> pieces_executed{0};
    std::atomic<std::uint64_t> host_items{0};
    std::atomic<std::uint64_t> worker_parks{0};
    std::atomic<std::uint64_t> worker_wakes{0};
    // Not in kuplx_counters_t (its layout is ABI); printed by KUPL_STATS.
    std::atomic<std::uint64_t> copies_engine{0};     // copies handed to the copy backend
    std::atomic<std::uint64_t> caller_waits{0};      // blocking waits that found the work unfinished
    std::atomic<std::uint64_t> caller_sleeps{0};     // times such a waiter went to sleep
    std::atomic<std::uint64_t> provider_copies{0};   // copies a KUPL_BACKEND provider accepted
    std::atomic<std::uint64_t> provider_refusals{0}; // eligible copies it refused (done in software)
};

inline void bump(std::atomic<std::uint64_t> &counter, std::uint64_t by = 1) {
    counter.fetch_add(by, std::memory_order_relaxed);
}

} // namespace kupl::support
