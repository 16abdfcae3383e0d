// What waking a parked worker costs, measured while the runtime runs: the waker's time inside
// the wake-up call and how long until the woken thread runs. Both depend on the machine far more
// than on us (on the 2-vCPU VM these were tuned on, ~19 us in the call and 30-45 us until the
// woken thread runs), so a hand-off decision that must pay them reads them here, not a constant.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace kupl::support {

// A running estimate (exponentially weighted, weight 1/4 for each new sample unless told
// otherwise) of a positive quantity. A sample more than 4x away from the estimate counts as 4x:
// one stall of a preempted thread must not turn a decision around. Updates from racing threads
// may lose a sample; the estimate stays one of the values it would have had.
class RunningEstimate {
  public:
    // weight_shift: the new sample weighs 1 / 2^weight_shift.
    void add(std::uint64_t sample, unsigned weight_shift = 2) {
        const std::uint64_t old = value_.load(std::memory_order_relaxed);
        if (old == 0) {
            value_.store(std::max<std::uint64_t>(sample, 1), std::memory_order_relaxed);
            return;
        }
        const std::uint64_t bounded = std::clamp<std::uint64_t>(sample, old / 4, old * 4);
        const std::uint64_t next = bounded >= old ? old + ((bounded - old) >> weight_shift)
                                                  : old - ((old - bounded) >> weight_shift);
        // A move of 1/32 or less is not stored: the estimate is read on other threads' hot paths
        // (a channel's speed by every submission), and each store takes the line from them. So a
        // steady quantity may stay up to 2^weight_shift / 32 off (1/8 at the usual weight 1/4).
        if ((next > old ? next - old : old - next) <= (old >> 5))
            return;
        value_.store(std::max<std::uint64_t>(next, 1), std::memory_order_relaxed);
    }
    // 0 until the first sample.
    std::uint64_t get() const { return value_.load(std::memory_order_relaxed); }

  private:
    std::atomic<std::uint64_t> value_{0};
};

// The cost of one wake-up of a parked worker group (IdleWorkers).
class WakeCost {
  public:
    // A wake-up call began at `began` and returned at `ended` (now_ns() clock).
    void call_made(std::uint64_t began, std::uint64_t ended) {
        call_ns_.add(ended - began);
        last_call_began_.store(began, std::memory_order_relaxed);
    }
    // A parked worker runs again at `now`. The first to wake after a call measures its latency;
    // a worker that wakes with no call outstanding (spuriously, or a second woken by the same
    // call) measures nothing.
    void woke(std::uint64_t now) {
        const std::uint64_t began = last_call_began_.exchange(0, std::memory_order_relaxed);
        if (began != 0 && now > began && now - began < kMaxLatencyNs) {
            latency_ns_.add(now - began);
            measured_at_.store(now, std::memory_order_relaxed);
        }
    }
    // From the start of a wake-up call until the woken worker runs (the call included), and the
    // waker's own time inside the call; each 0 until measured.
    std::uint64_t latency_ns() const { return latency_ns_.get(); }
    std::uint64_t call_ns() const { return call_ns_.get(); }
    // When the latest latency was measured (now_ns() clock), 0 if never.
    std::uint64_t measured_at() const { return measured_at_.load(std::memory_order_relaxed); }

  private:
    // Longer than this is not a wake-up being slow but a worker woken for something else.
    static constexpr std::uint64_t kMaxLatencyNs = 100'000'000;
    RunningEstimate call_ns_, latency_ns_;
    std::atomic<std::uint64_t> last_call_began_{0};
    std::atomic<std::uint64_t> measured_at_{0};
};

} // namespace kupl::support
