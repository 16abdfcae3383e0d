// Test switch that makes the next N copies fail (kuplx_inject_copy_faults, KUPL_FAULT_INJECT).
#pragma once

#include <atomic>

namespace kupl::support {

class FaultInjector {
  public:
    void arm(unsigned count) { remaining_.store(count, std::memory_order_relaxed); }
    // True if this copy must fail; consumes one armed fault.
    bool should_fail() {
        unsigned left = remaining_.load(std::memory_order_relaxed);
        while (left != 0) {
            if (remaining_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed))
                return true;
        }
        return false;
    }

  private:
    std::atomic<unsigned> remaining_{0};
};

} // namespace kupl::support
