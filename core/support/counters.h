// Engine counters (kuplx_get_counters, KUPL_STATS): monotonic totals bumped on the hot paths of
// every thread. Each thread adds to a slot of its own with a plain load and store, so a bump is no
// locked instruction and shares no cache line with other threads' bumps (three of them per small
// copy cost ~10% of a 4 KiB kupl_memcpy_async + wait as locked adds); a read sums the slots.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace kupl::support {

enum class Counter : unsigned {
    copies_submitted,
    copies_inline,
    copies_failed,
    bytes_copied,
    pieces_executed,
    host_items,
    worker_parks,
    worker_wakes,
    // Not in kuplx_counters_t (its layout is ABI); printed by KUPL_STATS.
    copies_engine,     // copies handed to the copy backend
    caller_waits,      // blocking waits that found the work unfinished
    caller_sleeps,     // times such a waiter went to sleep
    provider_copies,   // copies a KUPL_BACKEND provider accepted
    provider_refusals, // eligible copies it refused (done in software)
    ops_admitted,      // ops a queue took (or the engine, for a copy no queue orders)
    ops_settled,       // ops the engine settled (Engine::settle): equal to ops_admitted when idle
    count
};

// Threads that own a slot at once; more share one more slot, bumped with read-modify-writes.
inline constexpr unsigned kThreadSlots = 256;

namespace detail {
inline thread_local unsigned thread_slot_plus_one = 0; // 0: none claimed yet
unsigned claim_thread_slot();
unsigned slots_handed_out(); // the slots below this were ever owned
} // namespace detail

// The calling thread's slot: below kThreadSlots, no other living thread has it (a thread's slot
// is handed on when it exits); kThreadSlots is the shared one.
inline unsigned thread_slot() {
    const unsigned plus_one = detail::thread_slot_plus_one;
    return plus_one != 0 ? plus_one - 1 : detail::claim_thread_slot();
}

class Counters {
  public:
    void bump(Counter which, std::uint64_t by = 1) {
        const unsigned slot = thread_slot();
        std::atomic<std::uint64_t> &value = slots_[slot].value[static_cast<unsigned>(which)];
        if (slot < kThreadSlots) // this thread's alone: no other writer
            value.store(value.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
        else
            value.fetch_add(by, std::memory_order_relaxed);
    }

    // What every thread added so far (a later read by the same thread never reads less).
    std::uint64_t total(Counter which) const {
        const unsigned index = static_cast<unsigned>(which);
        std::uint64_t sum = slots_[kThreadSlots].value[index].load(std::memory_order_relaxed);
        for (unsigned slot = 0, used = detail::slots_handed_out(); slot < used; ++slot)
            sum += slots_[slot].value[index].load(std::memory_order_relaxed);
        return sum;
    }

  private:
    struct alignas(64) Slot {
        std::atomic<std::uint64_t> value[static_cast<unsigned>(Counter::count)]{};
    };
    // Held inline (33 KiB), not allocated apart: the first slots lie beside what the holder keeps
    // before them (see runtime.h).
    std::array<Slot, kThreadSlots + 1> slots_{};
};

} // namespace kupl::support
