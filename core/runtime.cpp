#include "runtime.h"

#include "copy/software/software_backend.h"
#include "kupl.h"
#include "support/env_config.h"
#include "support/log.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <new>
#include <string>

namespace kupl {
namespace {

using support::log;
using support::LogLevel;

std::atomic<Runtime *> current{nullptr};
std::atomic<bool> exiting{false};
// Re-created in the child after fork(): the parent's lock state is meaningless there.
alignas(std::mutex) unsigned char start_mutex_storage[sizeof(std::mutex)];
std::mutex *start_mutex = new (start_mutex_storage) std::mutex;

void before_fork() {
    start_mutex->lock();
}
void after_fork_in_parent() {
    start_mutex->unlock();
}
void after_fork_in_child() {
    // The parent's worker threads do not exist here. Abandon its runtime (never touch its locks)
    // and let the next call start a new one.
    start_mutex = new (start_mutex_storage) std::mutex;
    if (current.exchange(nullptr) != nullptr)
        log(LogLevel::info,
            "fork: the child starts a new runtime; handles created before fork() are invalid here");
}

std::size_t default_nt_threshold(const topo::Topology &topology) {
    // Streaming stores pay off once a copy cannot stay in the last-level cache.
    const std::size_t llc = topology.last_level_cache_bytes();
    return std::max<std::size_t>(llc == 0 ? std::size_t{32} << 20 : llc, std::size_t{8} << 20);
}

std::unique_ptr<sched::Engine> make_engine(const support::Config &config, const topo::Topology &topology,
                                           support::Counters &counters, support::FaultInjector &faults) {
    copy::SoftwareBackendOptions options;
    // One channel per core but one: the caller's core runs the application, and a caller that
    // waits takes pieces itself (Engine::block_until), so a 2-core machine still copies with two.
    options.num_channels =
        config.num_channels > 0 ? config.num_channels : std::max(1, topology.num_cores() - 1);
    options.split_threshold = config.mt_threshold;
    options.nt_threshold = config.nt_threshold > 0 ? config.nt_threshold : default_nt_threshold(topology);
    options.spin_us = config.spin_us;
    options.helpers = config.wait_helps ? 1 : 0;
    options.binding = static_cast<topo::ThreadBinding>(config.bind_channels);
    auto backend = std::make_unique<copy::SoftwareBackend>(options, topology, counters);
    const int executors = config.num_executors > 0 ? config.num_executors : topology.num_cores();
    auto executor = std::make_unique<exec::Executor>(executors, config.executor_spin_us, counters);
    return std::make_unique<sched::Engine>(config, std::move(backend), std::move(executor),
                                           topology.num_cores(), counters, faults);
}

// KUPL_STATS: the counters on stderr, in the style of the MPI interposer's KUPL_MPI_STATS.
void print_stats(const support::Counters &c) {
    auto n = [](const std::atomic<std::uint64_t> &v) {
        return std::to_string(v.load(std::memory_order_relaxed));
    };
    const std::string p = "[kupl]   ";
    std::string out = "[kupl] pid " + std::to_string(getpid()) + " stats\n";
    out += p + "copies: submitted=" + n(c.copies_submitted) + " inline=" + n(c.copies_inline) +
           " engine=" + n(c.copies_engine) + " failed=" + n(c.copies_failed) + " (" + n(c.bytes_copied) +
           " B copied)\n";
    out += p + "channel pieces: " + n(c.pieces_executed) + "\n";
    out += p + "host items: " + n(c.host_items) + "\n";
    out += p + "blocking waits: " + n(c.caller_waits) + " (slept " + n(c.caller_sleeps) + ")\n";
    out += p + "idle workers: parks=" + n(c.worker_parks) + " wakes=" + n(c.worker_wakes) + "\n";
    std::fputs(out.c_str(), stderr); // one call: lines of several processes do not interleave
}

// Runs at process exit (library destructors run after the program's own).
struct ExitHook {
    ~ExitHook() {
        exiting.store(true);
        Runtime *runtime = current.load();
        if (runtime == nullptr) {
            if (env::read_bool("KUPL_STATS", false))
                std::fprintf(stderr, "[kupl] pid %d stats: the runtime was not started\n",
                             static_cast<int>(getpid()));
            return;
        }
        runtime->drain_at_exit(); // the object itself stays: late calls from other threads find it
        if (runtime->config.stats)
            print_stats(runtime->counters);
    }
} exit_hook;

} // namespace

Runtime::Runtime() : config(support::read_config_from_environment()) {
    engine = make_engine(config, topology, counters, faults);
    faults.arm(config.fault_inject);
}

Runtime *Runtime::get() {
    if (exiting.load(std::memory_order_relaxed))
        return nullptr;
    Runtime *runtime = current.load(std::memory_order_acquire);
    if (runtime != nullptr)
        return runtime;
    std::lock_guard<std::mutex> lock(*start_mutex);
    runtime = current.load(std::memory_order_acquire);
    if (runtime == nullptr) {
        static std::once_flag fork_handlers;
        std::call_once(fork_handlers,
                       [] { pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
        try {
            runtime = new Runtime; // never deleted: other threads may still hold it at exit
        } catch (const std::exception &e) {
            log(LogLevel::error, "runtime start-up failed: %s", e.what());
            return nullptr;
        }
        current.store(runtime, std::memory_order_release);
        log(LogLevel::info, "runtime started: backend %s, %d channel(s), %d executor(s)",
            runtime->engine->backend().name(), runtime->engine->backend().num_channels(),
            runtime->engine->executor().num_threads());
    }
    return runtime;
}

void *Runtime::acquire_queue(int index) {
    std::lock_guard<std::mutex> lock(acquired_mutex_);
    auto it = acquired_.find(index);
    if (it != acquired_.end())
        return it->second;
    auto queue = std::make_shared<sched::Queue>(*engine, 0, index == KUPL_ASYNC_SYNC);
    void *handle = queues.add(std::move(queue));
    acquired_.emplace(index, handle);
    return handle;
}

bool Runtime::is_acquired(const void *handle) {
    std::lock_guard<std::mutex> lock(acquired_mutex_);
    for (const auto &entry : acquired_)
        if (entry.second == handle)
            return true;
    return false;
}

bool Runtime::wait_acquired() {
    std::vector<std::shared_ptr<sched::Queue>> list;
    {
        std::lock_guard<std::mutex> lock(acquired_mutex_);
        for (const auto &entry : acquired_)
            if (auto queue = queues.find(entry.second))
                list.push_back(std::move(queue));
    }
    bool ok = true;
    for (auto &queue : list)
        ok = queue->wait_all() && ok;
    return ok;
}

void Runtime::drain_at_exit() {
    // A host item may call exit(): its own queue cannot finish while it runs.
    for (auto &queue : queues.all())
        if (!queue->called_from_own_item())
            queue->wait_all();
    engine->drain_and_stop(std::chrono::milliseconds(200));
}

} // namespace kupl
