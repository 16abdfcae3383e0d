// Threads that run host-function queue items. Kept apart from the copy channels so a long
// host function never delays a copy, and a copy never delays a host function.
#pragma once

#include "support/counters.h"
#include "support/parking.h"
#include "support/worker_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kupl::exec {

class Executor {
  public:
    // Starts num_threads threads, or as many as the system allows (at least one, else it throws).
    Executor(int num_threads, unsigned spin_us, support::Counters &counters);
    ~Executor();
    Executor(const Executor &) = delete;
    Executor &operator=(const Executor &) = delete;

    // Starts up to `count` more threads, as many as the system allows; returns how many started.
    // Only before the executor is shared with other threads (the runtime's start-up).
    int add_threads(int count);
    int num_threads() const { return static_cast<int>(threads_.size()); }
    // Executor threads running a task now or about to (a posted task whose thread is still
    // waking up counts: it will want a core in a moment).
    int busy() const {
        const std::size_t wanted = static_cast<std::size_t>(busy_.load(std::memory_order_relaxed)) +
                                   task_count_.load(std::memory_order_relaxed);
        return static_cast<int>(std::min(wanted, threads_.size()));
    }
    // True when every posted task has run to its end (exact, unlike busy()), not counting the
    // task that is calling (a host item may call exit()).
    bool idle() const;
    // Runs task on one of the executor threads, in no particular order with other posts. Returns
    // false, and runs nothing, if there is no memory to queue it.
    bool post(std::function<void()> task);
    // Stops the threads after the tasks posted so far have run.
    void shutdown();
    // At process exit, with no task left: stops the threads, joining each for at most `limit`.
    void stop_at_exit(std::chrono::milliseconds limit);

  private:
    bool try_run_one();

    unsigned spin_us_;
    support::Counters &counters_;
    std::mutex mutex_;
    std::deque<std::function<void()>> tasks_; // guarded by mutex_
    std::atomic<std::size_t> task_count_{0};
    std::atomic<int> busy_{0};
    std::atomic<std::size_t> unfinished_{0}; // posted and not yet returned
    std::atomic<bool> stopping_{false};
    support::IdleWorkers idle_;
    std::vector<std::thread> threads_;
};

} // namespace kupl::exec
