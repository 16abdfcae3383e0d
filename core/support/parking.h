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

inline std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// A spin-wait's steps: a short pause between polls, and now and then the core offered to any
// thread the kernel has waiting for it (sched_yield). On an oversubscribed core (two cores shared
// by copy channels, executors and an application's own threads) the yield lets the thread that
// will produce the awaited work run instead of the spinner burning its time slice. Not at every
// poll: a yield is a system call, 1.2-1.5 us on an AMD EPYC VM, where yielding at every poll
// left a spinning channel taking a halved copy's part ~2 us after the submission and a waiter
// seeing its copy done ~1 us late (core_wake_latency, without KUPL: a spinning thread sees new
// work after 0.14-0.17 us polling between pauses, 1.05-1.15 us with a yield at every poll).
class SpinWait {
  public:
    explicit SpinWait(std::uint64_t now) : next_yield_ns_(now + kYieldEveryNs) {}
    // One step, at time `now` (now_ns(), which every spin-wait reads for its deadline anyway).
    void pause(std::uint64_t now) {
        for (int i = 0; i < kPausesPerPoll; ++i)
            cpu_relax();
        if (now >= next_yield_ns_) {
            sched_yield();
            next_yield_ns_ = now + kYieldEveryNs;
        }
    }

  private:
    static constexpr int kPausesPerPoll = 8;
    static constexpr std::uint64_t kYieldEveryNs = 5000;
    std::uint64_t next_yield_ns_;
};

// An event count (the prepare / re-check / commit protocol): a thread that found nothing to do
// calls prepare_wait(), checks its condition once more, then commit_wait() or cancel_wait().
// A producer that made the condition true calls notify(); it costs one load when nobody sleeps.
class EventCount {
  public:
    std::uint32_t prepare_wait() {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        return epoch_.load(std::memory_order_seq_cst);
    }
    void cancel_wait() { sleepers_.fetch_sub(1, std::memory_order_seq_cst); }
    void commit_wait(std::uint32_t key) {
        futex_wait(epoch_, key);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
    // As commit_wait, returning after timeout_ns at the latest.
    void commit_wait_for(std::uint32_t key, std::uint64_t timeout_ns) {
        futex_wait_for(epoch_, key, timeout_ns);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
    // Returns true if a sleeper was signalled; then *began (if given) is when the wake-up began
    // (now_ns()): the clock is read only when there is someone to wake.
    bool notify(bool all, std::uint64_t *began = nullptr) {
        // A read-modify-write rather than fence + load: it orders the caller's earlier stores
        // against a sleeper's prepare_wait() just as well, and ThreadSanitizer understands it.
        if (sleepers_.fetch_add(0, std::memory_order_seq_cst) == 0)
            return false;
        if (began != nullptr)
            *began = now_ns();
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(epoch_, all ? 0x7fffffff : 1);
        return true;
    }

    // As notify(true), for a caller whose change of the condition was a seq_cst read-modify-write
    // and whose sleepers read the condition with seq_cst loads: then a seq_cst load is enough to
    // see a sleeper that prepared before the change (one locked instruction fewer per notify).
    bool notify_all_after_rmw() {
        if (sleepers_.load(std::memory_order_seq_cst) == 0)
            return false;
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(epoch_, 0x7fffffff);
        return true;
    }

  private:
    std::atomic<std::uint32_t> epoch_{0};
    std::atomic<int> sleepers_{0};
};

} // namespace kupl::support
