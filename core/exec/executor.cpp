#include "exec/executor.h"

#include "support/log.h"
#include "support/trace.h"
#include "support/worker_loop.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <system_error>

namespace kupl::exec {
namespace {

thread_local const Executor *running_task_of = nullptr;

// How long pending work waits for a thread while every thread computes, before the monitor adds
// one: 1 ms, doubling with each thread the pool already has beyond its configured size (a pool
// that keeps computing is not flooded with threads), at most 1 s.
std::uint64_t patience_ns(int extra_threads) {
    return std::uint64_t{1000000} << std::clamp(extra_threads, 0, 10);
}

} // namespace

Executor::Executor(int num_threads, unsigned spin_us, support::Counters &counters, int max_threads)
    : requested_max_threads_(max_threads), spin_us_(spin_us), counters_(counters) {
    if (add_threads(std::max(1, num_threads)) == 0)
        throw std::runtime_error("no executor thread could be started");
    try {
        monitor_ = std::thread([this] { run_monitor(); });
    } catch (const std::system_error &) {
        // Without it the pool does not grow: items that wait for each other may then wait long.
        support::notice("the executor's monitor thread could not start: the pool of %d will not grow",
                        this->num_threads());
    }
}

int Executor::add_threads(int count) {
    std::lock_guard<std::mutex> lock(threads_mutex_);
    int started = 0;
    while (started < count && start_thread())
        ++started;
    base_threads_.fetch_add(started, std::memory_order_seq_cst);
    return started;
}

int Executor::max_threads() const {
    const int base = base_threads_.load(std::memory_order_relaxed);
    return requested_max_threads_ > 0 ? std::max(requested_max_threads_, base) : std::max(256, 4 * base);
}

Executor::~Executor() {
    shutdown();
}

bool Executor::start_thread() {
    const int started = support::start_threads(threads_, 1, [this](int) {
        return [this] {
            if (KUPL_TRACING()) {
                static std::atomic<int> count{0};
                const int number = count.fetch_add(1, std::memory_order_relaxed);
                char name[48];
                std::snprintf(name, sizeof name, "executor %d", number);
                kupl_trace_name_thread(name, 2000 + number);
            }
            support::run_worker_loop([this] { return try_run_one(); },
                                     [this] { return task_count_.load(std::memory_order_relaxed) != 0; },
                                     stopping_, idle_, spin_us_, counters_);
        };
    });
    if (started == 0)
        return false;
    live_.fetch_add(1, std::memory_order_seq_cst);
    return true;
}

void Executor::stop_monitor() {
    monitor_stopping_.store(true, std::memory_order_seq_cst);
    monitor_wakeups_.notify(true);
    if (monitor_.joinable())
        monitor_.join();
}

void Executor::shutdown() {
    stop_monitor(); // the only other thread that touches threads_
    support::stop_workers(stopping_, idle_, threads_);
}

void Executor::stop_at_exit(std::chrono::milliseconds limit) {
    stop_monitor();
    support::stop_workers(stopping_, idle_, threads_, limit);
}

bool Executor::starved() const {
    const long pending = static_cast<long>(task_count_.load(std::memory_order_seq_cst));
    if (pending == 0)
        return false;
    const long free = live_.load(std::memory_order_seq_cst) - busy_.load(std::memory_order_seq_cst);
    return pending > free;
}

bool Executor::post(std::function<void()> task) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        try {
            tasks_.push_back(std::move(task));
        } catch (const std::bad_alloc &) {
            return false; // nothing changed: the caller settles the item with an error
        }
        // Counted before any thread can take it (they take under mutex_).
        unfinished_.fetch_add(1, std::memory_order_seq_cst);
        task_count_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (idle_.notify(false))
        counters_.bump(support::Counter::worker_wakes);
    // No free thread: the monitor keeps an eye on it (a watching monitor needs no wake-up,
    // unless a waiting thread lent its slot: that is filled at once).
    if (starved() && (!monitor_watching_.load(std::memory_order_seq_cst) ||
                      live_.load(std::memory_order_seq_cst) - waiting_.load(std::memory_order_seq_cst) <
                          base_threads_.load(std::memory_order_seq_cst)))
        monitor_wakeups_.notify(false);
    return true;
}

void Executor::begin_wait() {
    if (running_task_of != this)
        return;
    waiting_.fetch_add(1, std::memory_order_seq_cst);
    if (starved())
        monitor_wakeups_.notify(false); // lend the slot at once
}

void Executor::end_wait() {
    if (running_task_of == this)
        waiting_.fetch_sub(1, std::memory_order_seq_cst);
}

void Executor::abandon_calling_task() {
    if (running_task_of != this)
        return;
    running_task_of = nullptr; // idle() no longer excepts it: it is not counted at all
    waiting_.fetch_add(1, std::memory_order_seq_cst);
    unfinished_.fetch_sub(1, std::memory_order_seq_cst);
    if (starved())
        monitor_wakeups_.notify(false);
}

void Executor::run_monitor() {
    bool watching = false;
    std::uint64_t window_start = 0;
    std::uint64_t window_taken = 0;
    for (;;) {
        // Not watching: sleep until post() or begin_wait() sees work that no free thread takes.
        monitor_watching_.store(false, std::memory_order_seq_cst);
        std::uint32_t key = monitor_wakeups_.prepare_wait();
        if (monitor_stopping_.load(std::memory_order_seq_cst)) {
            monitor_wakeups_.cancel_wait();
            return;
        }
        if (!starved()) {
            watching = false;
            monitor_wakeups_.commit_wait(key);
            continue;
        }
        monitor_wakeups_.cancel_wait();
        const int live = live_.load(std::memory_order_seq_cst);
        const int base = base_threads_.load(std::memory_order_seq_cst);
        const bool slot_lent = live - waiting_.load(std::memory_order_seq_cst) < base;
        const std::uint64_t now = support::now_ns();
        const std::uint64_t taken = taken_.load(std::memory_order_seq_cst);
        if (!watching || taken != window_taken) {
            watching = true; // a new window: pending work, no thread free, no progress since
            window_start = now;
            window_taken = taken;
        }
        const std::uint64_t patience = patience_ns(live - base);
        if (live < max_threads() && (slot_lent || now - window_start >= patience)) {
            bool added;
            {
                std::lock_guard<std::mutex> lock(threads_mutex_);
                added = start_thread();
            }
            if (added)
                support::log(support::LogLevel::debug, "executor: %d threads (%s)", live + 1,
                             slot_lent ? "a thread waits in a kupl call" : "pending work found no thread");
            else // keep watching: try again after another patience period, never in a loop
                support::log(support::LogLevel::warn, "executor: the system refused another thread");
            if (added) {
                watching = false;
                continue;
            }
            window_start = now; // a new patience period before the next try
        }
        // Every thread computes: wake again when the patience runs out (or on begin_wait / stop).
        monitor_watching_.store(true, std::memory_order_seq_cst);
        key = monitor_wakeups_.prepare_wait();
        if (monitor_stopping_.load(std::memory_order_seq_cst)) {
            monitor_wakeups_.cancel_wait();
            return;
        }
        const std::uint64_t elapsed = support::now_ns() - window_start;
        monitor_wakeups_.commit_wait_for(key, elapsed < patience ? patience - elapsed : patience);
    }
}

bool Executor::idle() const {
    const std::size_t calling = running_task_of == this ? 1 : 0;
    return unfinished_.load(std::memory_order_seq_cst) == calling;
}

bool Executor::try_run_one() {
    if (task_count_.load(std::memory_order_relaxed) == 0)
        return false;
    std::function<void()> task;
    bool more;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (tasks_.empty())
            return false;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        // busy_ first: between the two, starved() sees one task fewer, never one free thread more.
        busy_.fetch_add(1, std::memory_order_seq_cst);
        task_count_.fetch_sub(1, std::memory_order_seq_cst);
        taken_.fetch_add(1, std::memory_order_relaxed);
        more = !tasks_.empty();
    }
    if (more && idle_.notify(false)) // a spinner skipped the wake-up for it: pass it on
        counters_.bump(support::Counter::worker_wakes);
    running_task_of = this;
    task();
    running_task_of = nullptr;
    busy_.fetch_sub(1, std::memory_order_relaxed);
    unfinished_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
}

} // namespace kupl::exec
