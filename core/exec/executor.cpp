#include "exec/executor.h"

#include "support/worker_loop.h"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace kupl::exec {

Executor::Executor(int num_threads, unsigned spin_us, support::Counters &counters)
    : spin_us_(spin_us), counters_(counters) {
    if (add_threads(std::max(1, num_threads)) == 0)
        throw std::runtime_error("no executor thread could be started");
}

int Executor::add_threads(int count) {
    return support::start_threads(threads_, count, [this](int) {
        return [this] {
            support::run_worker_loop([this] { return try_run_one(); },
                                     [this] { return task_count_.load(std::memory_order_relaxed) != 0; },
                                     stopping_, idle_, spin_us_, counters_);
        };
    });
}

Executor::~Executor() {
    shutdown();
}

void Executor::shutdown() {
    support::stop_workers(stopping_, idle_, threads_);
}

void Executor::stop_at_exit(std::chrono::milliseconds limit) {
    support::stop_workers(stopping_, idle_, threads_, limit);
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
        task_count_.fetch_add(1, std::memory_order_relaxed);
    }
    if (idle_.notify(false))
        support::bump(counters_.worker_wakes);
    return true;
}

namespace {
thread_local const Executor *running_task_of = nullptr;
} // namespace

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
        task_count_.fetch_sub(1, std::memory_order_relaxed);
        more = !tasks_.empty();
    }
    if (more && idle_.notify(false)) // a spinner skipped the wake-up for it: pass it on
        support::bump(counters_.worker_wakes);
    busy_.fetch_add(1, std::memory_order_relaxed);
    running_task_of = this;
    task();
    running_task_of = nullptr;
    busy_.fetch_sub(1, std::memory_order_relaxed);
    unfinished_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
}

} // namespace kupl::exec
