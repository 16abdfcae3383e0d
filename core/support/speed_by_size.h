// Copy speeds measured by copy size: who copies faster, the caller or a channel, depends on where
// the data sits (a channel on another core, or another die, pulls a caller's hot lines across)
// and on the size (what fits in which cache), so a decision between them compares speeds
// measured on copies of about the same size and shape, not one speed for all.
#pragma once

#include "support/wake_cost.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace kupl::support {

class SpeedBySize {
  public:
    // A copy of `cost_bytes` (CopyDescriptor::cost_bytes()), 2D or not, ran at `ns_per_kib`
    // (of its cost; measured on the whole copy or on a piece of it).
    // Each sample weighs half: a decision between two such speeds measures the one it does not
    // choose only now and then, and must follow the data within a few samples when it moves
    // (from the caller's cache to memory, say).
    void add(std::size_t cost_bytes, bool two_d, std::uint64_t ns_per_kib) {
        if (cost_bytes >= 1024)
            slots_[index(cost_bytes, two_d)].add(ns_per_kib, 1);
    }
    // Nanoseconds per KiB of cost on copies of this size class (a power of two) and shape; 0
    // until one was measured.
    std::uint64_t ns_per_kib(std::size_t cost_bytes, bool two_d) const {
        return cost_bytes >= 1024 ? slots_[index(cost_bytes, two_d)].get() : 0;
    }

    // Where a copy of at least 1 KiB of cost falls: [0, kSlots), one per size class and shape.
    static constexpr std::size_t kClasses = 32; // 1 KiB, 2 KiB, ... 2^41 bytes and above
    static constexpr std::size_t kSlots = 2 * kClasses;
    static std::size_t index(std::size_t cost_bytes, bool two_d) {
        // floor(log2(KiB)); the caller has checked cost_bytes >= 1024.
        const auto size_class = static_cast<std::size_t>(63 - __builtin_clzll(cost_bytes >> 10));
        return (two_d ? kClasses : 0) + (size_class < kClasses ? size_class : kClasses - 1);
    }

  private:
    std::array<RunningEstimate, kSlots> slots_;
};

// The share of a job of `kib` KiB of cost for worker A (at a_ns_per_kib, starting a_delay_ns
// after B) beside worker B (at b_ns_per_kib) for both to end together: a_delay + share * kib * a
// = (1 - share) * kib * b, so (kib * b - a_delay) / (kib * (a + b)); without a delay, b / (a + b).
// Kept within [1/8, 7/8], so both keep a part and stay measured; one half while either speed is
// unmeasured (0).
inline double share_to_end_together(std::uint64_t a_ns_per_kib, std::uint64_t b_ns_per_kib, double kib = 1.0,
                                    std::uint64_t a_delay_ns = 0) {
    if (a_ns_per_kib == 0 || b_ns_per_kib == 0 || kib <= 0)
        return 0.5;
    const double b_time = kib * static_cast<double>(b_ns_per_kib);
    const double share =
        (b_time - static_cast<double>(a_delay_ns)) / (kib * static_cast<double>(a_ns_per_kib + b_ns_per_kib));
    return share < 0.125 ? 0.125 : share > 0.875 ? 0.875 : share;
}

} // namespace kupl::support
