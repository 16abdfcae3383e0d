// A mutex for critical sections of a few instructions that two threads often reach at once.
#pragma once

#include "support/parking.h"

#include <mutex>

namespace kupl::support {

// A std::mutex whose lock() keeps trying for a moment before it blocks. glibc's default mutex
// sleeps in the kernel at the first contention, and the owner's unlock then makes a system call
// to wake it: on a 2-vCPU VM a copy channel and a waiting caller that take their parts of one
// halved copy at the same moment met that way (perf: futex_wait and futex_wake under this lock on
// the caller's thread), and a futex wake-up there is a 16-40 us call with the sleeper running
// tens of us later (core_wake_latency). Guarded sections here are a few list operations, over
// long before the tries run out; a holder preempted meanwhile is waited for the ordinary way.
class ShortMutex {
  public:
    void lock() {
        for (int i = 0; i < kTries; ++i) {
            if (mutex_.try_lock())
                return;
            cpu_relax();
        }
        mutex_.lock();
    }
    bool try_lock() { return mutex_.try_lock(); }
    void unlock() { mutex_.unlock(); }

  private:
    static constexpr int kTries = 200; // 5-10 us of pauses on x86-64, far longer than any section
    std::mutex mutex_;
};

} // namespace kupl::support
