// Sleeping and waking without lost wake-ups, and without a system call when nobody sleeps.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kupl::support {

// Blocks while `word` still holds `expected` (may return spuriously). Linux futex.
void futex_wait(std::atomic<uint32_t> &word, uint32_t expected);
// As futex_wait, for at most timeout_ns nanoseconds.
void futex_wait_for(std::atomic<uint32_t> &word, uint32_t expected, std::uint64_t timeout_ns);
// Wakes up to `count` threads blocked on `word`.
void futex_wake(std::atomic<uint32_t> &word, int count);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// One step of a spin-wait: a short pause, then offers the core to any thread the kernel has
// waiting for it. On an idle core the yield returns at once; on an oversubscribed one (two cores
// shared by copy channels, executors and an application's own threads) it lets the thread that
// will produce the awaited work run instead of burning its time slice.
inline void spin_pause() {
    for (int i = 0; i < 16; ++i)
        cpu_relax();
    sched_yield();
}

inline std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// An event count (the prepare / re-check / commit protocol): a thread that found nothing to do
// calls prepare_wait(), checks its condition once more, then commit_wait() or cancel_wait().
// A producer that made the condition true calls notify(); it costs one load when nobody sleeps.
//
// A woken thread takes a while to run (here up to 25 us between vCPUs) and stays counted as a
// sleeper until it does: notify() also counts the wake-ups it issued that no sleeper has
// returned from yet, and makes no system call while every sleeper has one coming. A sleeper
// that returns always checks its condition again, so the skipped notification is not lost.
class EventCount {
  public:
    std::uint32_t prepare_wait() {
        state_.fetch_add(kOneSleeper, std::memory_order_seq_cst);
        return epoch_.load(std::memory_order_seq_cst);
    }
    void cancel_wait() { leave(); }
    void commit_wait(std::uint32_t key) {
        futex_wait(epoch_, key);
        leave();
    }
    // As commit_wait, returning after timeout_ns at the latest.
    void commit_wait_for(std::uint32_t key, std::uint64_t timeout_ns) {
        futex_wait_for(epoch_, key, timeout_ns);
        leave();
    }
    // Returns true if a sleeper was signalled.
    bool notify(bool all) {
        // A read-modify-write rather than fence + load: it orders the caller's earlier stores
        // against a sleeper's prepare_wait() just as well, and ThreadSanitizer understands it.
        std::uint64_t state = state_.fetch_add(0, std::memory_order_seq_cst);
        for (;;) {
            const std::uint64_t sleepers = state >> 32, woken = state & kWokenMask;
            if (sleepers <= woken)
                return false; // nobody sleeps, or each sleeper has a wake-up on its way
            const std::uint64_t next = (sleepers << 32) | (all ? sleepers : woken + 1);
            if (state_.compare_exchange_weak(state, next, std::memory_order_seq_cst))
                break;
        }
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(epoch_, all ? 0x7fffffff : 1);
        return true;
    }

  private:
    static constexpr std::uint64_t kOneSleeper = std::uint64_t{1} << 32;
    static constexpr std::uint64_t kWokenMask = kOneSleeper - 1;

    // A sleeper leaves, taking one outstanding wake-up with it if there is one.
    void leave() {
        std::uint64_t state = state_.load(std::memory_order_relaxed);
        for (;;) {
            const std::uint64_t woken = state & kWokenMask;
            const std::uint64_t next = state - kOneSleeper - (woken > 0 ? 1 : 0);
            if (state_.compare_exchange_weak(state, next, std::memory_order_seq_cst))
                return;
        }
    }

    std::atomic<std::uint32_t> epoch_{0};
    // Sleepers (high half) and wake-ups issued that no sleeper has returned from (low half).
    std::atomic<std::uint64_t> state_{0};
};

} // namespace kupl::support
