// Threads that run host-function queue items. Kept apart from the copy channels so a long
// host function never delays a copy, and a copy never delays a host function.
//
// Items of different queues are concurrent: each must make progress even when every thread is
// taken by items that wait for other items (in a kupl wait, or by spinning on host memory, as
// OpenMP target regions meeting at a barrier do). So the pool grows beyond its configured size,
// like the thread pools of Go's runtime or Windows: at once when a thread blocks in a kupl wait
// while work is pending (it lends its slot out), and, when every thread computes and a pending
// item has not found one for a while, one thread after another with a patience that doubles
// with each thread added. A monitor thread, asleep unless work is pending with no free thread,
// does the growing; no thread spins for it.
#pragma once

#include "support/counters.h"
#include "support/parking.h"
#include "support/worker_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kupl::exec {

class Executor {
  public:
    // Starts num_threads threads, or as many as the system allows (at least one, else it throws).
    // The pool grows to at most max_threads (0: max(256, 4 × the threads configured so far)).
    Executor(int num_threads, unsigned spin_us, support::Counters &counters, int max_threads = 0);
    ~Executor();
    Executor(const Executor &) = delete;
    Executor &operator=(const Executor &) = delete;

    // Starts up to `count` more configured threads, as many as the system allows; returns how
    // many started. Only at the runtime's start-up, before the executor is shared.
    int add_threads(int count);
    // The configured threads that started (the pool may have grown beyond; see live_threads()).
    int num_threads() const { return base_threads_.load(std::memory_order_relaxed); }
    int live_threads() const { return live_.load(std::memory_order_relaxed); }
    // Executor threads running a task now or about to (a posted task whose thread is still
    // waking up counts: it will want a core in a moment). Threads blocked in a wait do not.
    int busy() const {
        const long wanted = static_cast<long>(busy_.load(std::memory_order_relaxed)) -
                            waiting_.load(std::memory_order_relaxed) +
                            static_cast<long>(task_count_.load(std::memory_order_relaxed));
        return static_cast<int>(std::clamp<long>(wanted, 0, live_.load(std::memory_order_relaxed)));
    }
    // True when every posted task has run to its end (exact, unlike busy()), not counting the
    // task that is calling (a host item may call exit()).
    bool idle() const;
    // Runs task on one of the executor threads, in no particular order with other posts. Returns
    // false, and runs nothing, if there is no memory to queue it.
    bool post(std::function<void()> task);
    // Around a blocking wait (kupl_queue_wait, kupl_event_wait, ...): when the calling thread is
    // one of ours, running a task, its slot is lent to pending work for the wait's duration.
    void begin_wait();
    void end_wait();
    // At exit, from a task that will never return (it waits behind an item that called
    // exit()): it no longer counts as unfinished, and its slot stays lent out.
    void abandon_calling_task();
    // Stops the threads after the tasks posted so far have run.
    void shutdown();
    // At process exit, with no task left: stops the threads, joining each for at most `limit`.
    void stop_at_exit(std::chrono::milliseconds limit);

  private:
    bool try_run_one();
    bool start_thread(); // threads_mutex_ held; false if the system refused the thread
    int max_threads() const;
    void run_monitor();
    // Pending tasks outnumber the threads free to take them.
    bool starved() const;
    void stop_monitor();

    std::atomic<int> base_threads_{0}; // configured threads started (the monitor reads it)
    const int requested_max_threads_;
    unsigned spin_us_;
    support::Counters &counters_;
    std::mutex mutex_;
    std::deque<std::function<void()>> tasks_; // guarded by mutex_
    std::atomic<std::size_t> task_count_{0};
    std::atomic<int> busy_{0};               // threads running a task (waiting or not)
    std::atomic<int> waiting_{0};            // of those, threads blocked in a kupl wait
    std::atomic<int> live_{0};               // threads started
    std::atomic<std::uint64_t> taken_{0};    // tasks taken so far: the monitor's measure of progress
    std::atomic<std::size_t> unfinished_{0}; // posted and not yet returned
    std::atomic<bool> stopping_{false};
    support::IdleWorkers idle_;
    std::mutex threads_mutex_;
    std::vector<std::thread> threads_; // guarded by threads_mutex_ (grown by the monitor)
    std::atomic<bool> monitor_stopping_{false};
    std::atomic<bool> monitor_watching_{false}; // the monitor sleeps with a timeout: no need to wake it
    support::EventCount monitor_wakeups_;
    std::thread monitor_;
};

} // namespace kupl::exec
