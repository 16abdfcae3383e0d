#include "runtime.h"

#include "copy/provider/provider_backend.h"
#include "copy/software/software_backend.h"
#include "kupl.h"
#include "support/address_space_reserve.h"
#include "support/env_config.h"
#include "support/log.h"
#include "topo/placement.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <new>
#include <string>
#include <thread>

namespace kupl {
namespace {

using support::log;
using support::LogLevel;

std::atomic<Runtime *> current{nullptr};
// Exit has begun: no runtime starts any more, but a running one serves calls while it drains.
std::atomic<bool> exiting{false};
// The exit drain is over and the threads are gone: calls fail from now on.
std::atomic<bool> stopped{false};
// The generation of the latest runtime started in this process or, before a fork, in its parent
// (the child inherits the count, so its runtime's handles differ from every ancestor's); guarded
// by start_mutex.
std::uint64_t last_generation = 0;
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

// Thread counts above topo::kMaxThreadsPerPool are taken as that: more threads than any machine
// we target has cores only cost memory and start-up time, and a typo (KUPL_NUM_CHANNELS=100000)
// must not try to start a hundred thousand threads.
int capped_thread_count(int wanted, const char *variable) {
    if (wanted <= topo::kMaxThreadsPerPool)
        return wanted;
    support::notice("%s=%d is more than the %d threads allowed; using %d", variable, wanted,
                    topo::kMaxThreadsPerPool, topo::kMaxThreadsPerPool);
    return topo::kMaxThreadsPerPool;
}

// Builds the engine into `engine` (the runtime's member: see runtime.h).
void start_engine(std::optional<sched::Engine> &engine, const support::Config &config,
                  const topo::Topology &topology, support::Counters &counters,
                  support::FaultInjector &faults) {
    // Channels, their cpus and the executor count come from the placement plan (topo/placement.h):
    // sized by the cores this process may run on, per NUMA node; KUPL_NUM_CHANNELS and
    // KUPL_NUM_EXECUTORS win.
    topo::PlacementInputs inputs;
    inputs.num_channels =
        config.num_channels > 0 ? capped_thread_count(config.num_channels, "KUPL_NUM_CHANNELS") : 0;
    inputs.num_executors =
        config.num_executors > 0 ? capped_thread_count(config.num_executors, "KUPL_NUM_EXECUTORS") : 0;
    inputs.binding = static_cast<topo::ThreadBinding>(config.bind_channels);
    inputs.local_ranks = topo::local_ranks_from_environment();
    copy::SoftwareBackendOptions options;
    options.plan = topology.plan(inputs);
    options.num_channels = static_cast<int>(options.plan.channels.size());
    options.split_threshold = config.mt_threshold;
    // Copies handed off below the split threshold are halved from 4 inline thresholds (128 KiB by
    // default) on: halves of 32 KiB lost to a caller's own memcpy when the data was hot
    // (core_sweep_bench, benchmarks/core/results/README.md).
    options.halve_threshold = 4 * config.inline_threshold;
    options.nt_threshold = config.nt_threshold > 0 ? config.nt_threshold : default_nt_threshold(topology);
    options.spin_us = config.spin_us;
    options.helpers = config.wait_helps ? 1 : 0;
    options.binding = inputs.binding;
    options.locate = [&topology](const void *address) { return topology.numa_node_of(address); };
    const int executors = options.plan.executors;
    // Each pool runs with the threads the system lets it start, at least one (else it throws and
    // the runtime does not start); a shortfall is reported once, below. The executor's first
    // thread starts before the channels, so channels that take every thread left still leave it one.
    // Started on the process's allowed cpus: runtime threads inherit them, not the (maybe
    // narrower) binding of the application thread that happens to start the runtime.
    // Under an address-space limit the threads stop at the limit; the reserve keeps one stack
    // of room free for the rest of start-up and for the application (support/address_space_reserve.h).
    std::unique_ptr<exec::Executor> executor;
    std::unique_ptr<copy::SoftwareBackend> backend;
    topology.run_bound_to(options.plan.allowed_cpus, [&] {
        const support::AddressSpaceReserve room_left_after_start;
        executor = std::make_unique<exec::Executor>(1, config.executor_spin_us, counters);
        backend = std::make_unique<copy::SoftwareBackend>(options, topology, counters);
        executor->add_threads(executors - 1);
    });
    const int channels = backend->num_channels();
    if (channels < options.num_channels || executor->num_threads() < executors)
        support::notice("the system refused some threads (ulimit -u or address space): running with %d of %d "
                        "copy channels and %d of %d executors",
                        channels, options.num_channels, executor->num_threads(), executors);
    // KUPL_BACKEND: a hardware engine beside the software one (one warning line if unusable).
    engine.emplace(config, copy::attach_provider(config.backend_provider, std::move(backend), counters),
                   std::move(executor), options.plan.allowed_cores, counters, faults);
}

// KUPL_STATS: the counters on stderr, in the style of the MPI interposer's KUPL_MPI_STATS.
void print_stats(const support::Counters &c, const sched::Engine &engine) {
    const copy::CopyBackend &backend = engine.backend();
    auto n = [&c](support::Counter which) { return std::to_string(c.total(which)); };
    const std::string p = "[kupl]   ";
    std::string out = "[kupl] pid " + std::to_string(getpid()) + " stats\n";
    out += p + "copies: submitted=" + n(support::Counter::copies_submitted) +
           " inline=" + n(support::Counter::copies_inline) + " engine=" + n(support::Counter::copies_engine) +
           " failed=" + n(support::Counter::copies_failed) + " (" + n(support::Counter::bytes_copied) +
           " B copied)\n";
    out += p + "channel pieces: " + n(support::Counter::pieces_executed) + "\n";
    out += p + "host items: " + n(support::Counter::host_items) + "\n";
    // Every op the queues admitted is settled exactly once; after the exit drain the two agree
    // unless an item never returned (it called exit(), or blocks for good).
    const std::uint64_t admitted = c.total(support::Counter::ops_admitted),
                        settled = c.total(support::Counter::ops_settled);
    out += p + "ops: admitted=" + std::to_string(admitted) + " settled=" + std::to_string(settled) +
           " (never settled: " + std::to_string(admitted > settled ? admitted - settled : 0) +
           ", settled twice: " +
           std::to_string((settled > admitted ? settled - admitted : 0) +
                          sched::Event::records_completed_twice()) +
           ")\n";
    out += p + "blocking waits: " + n(support::Counter::caller_waits) + " (slept " +
           n(support::Counter::caller_sleeps) + ")\n";
    out += p + "idle workers: parks=" + n(support::Counter::worker_parks) +
           " wakes=" + n(support::Counter::worker_wakes) + "\n";
    if (const std::string costs = backend.wake_cost_summary(); !costs.empty())
        out += p + costs + "\n";
    if (const std::string speeds = engine.speed_summary(); !speeds.empty())
        out += p + speeds + "\n";
    if (n(support::Counter::provider_copies) != "0" ||
        n(support::Counter::provider_refusals) != "0") // a KUPL_BACKEND provider
        out += p + "copy engine provider: took=" + n(support::Counter::provider_copies) +
               " refused=" + n(support::Counter::provider_refusals) + "\n";
    std::fputs(out.c_str(), stderr); // one call: lines of several processes do not interleave
}

// Runs at process exit (library destructors run after the program's own).
struct ExitHook {
    ~ExitHook() {
        exiting.store(true);
        Runtime *runtime = current.load();
        if (runtime == nullptr) {
            stopped.store(true);
            if (env::read_bool("KUPL_STATS", false))
                std::fprintf(stderr, "[kupl] pid %d stats: the runtime was not started\n",
                             static_cast<int>(getpid()));
            return;
        }
        runtime->drain_at_exit(); // the object itself stays: late calls from other threads find it
        stopped.store(true);
        if (runtime->config.stats)
            print_stats(runtime->counters, *runtime->engine);
    }
} exit_hook;

} // namespace

Runtime::Runtime(std::uint64_t generation_number)
    : config(support::read_config_from_environment()), generation(generation_number) {
    start_engine(engine, config, topology, counters, faults);
    faults.arm(config.fault_inject);
}

[[gnu::hot]] Runtime *Runtime::get() {
    // While exit() drains, the runtime keeps serving: a thread that waits really waits, and work
    // that still-running items submit is drained too (issue 9: a wait racing exit() failed).
    Runtime *runtime = current.load(std::memory_order_acquire);
    if (runtime != nullptr)
        return stopped.load(std::memory_order_relaxed) ? nullptr : runtime;
    std::lock_guard<std::mutex> lock(*start_mutex);
    if (exiting.load(std::memory_order_relaxed))
        return nullptr; // never start a runtime at exit
    runtime = current.load(std::memory_order_acquire);
    if (runtime == nullptr) {
        static std::once_flag fork_handlers;
        std::call_once(fork_handlers,
                       [] { pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
        try {
            // Never deleted: other threads may still hold it at exit. A failed start-up hands out
            // no handle, so the next attempt may take the same generation.
            runtime = new Runtime(last_generation + 1);
            last_generation = runtime->generation;
        } catch (const std::exception &e) {
            // Said once (every call tries again, and fails the same way while the cause lasts).
            static std::atomic<bool> said{false};
            if (!said.exchange(true))
                support::notice("the runtime could not start (%s); calls return errors", e.what());
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
    // The map entry first, so that running out of memory leaves no half-registered queue.
    it = acquired_.emplace(index, nullptr).first;
    try {
        it->second = queues.add(std::make_shared<sched::Queue>(*engine, 0, index == KUPL_ASYNC_SYNC));
    } catch (...) {
        acquired_.erase(it);
        throw;
    }
    if (it->second == nullptr) { // no ids left
        acquired_.erase(it);
        return nullptr;
    }
    if (auto queue = queues.find(it->second))
        queue->trace_handle(it->second);
    return it->second;
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
    // A host item may call exit(): it never returns, so nothing behind it on its queue can run,
    // and whoever waits for that gets an error instead of waiting forever.
    sched::Queue::end_items_of_calling_thread();
    // Calls are still served: items running now may submit more work, and it is drained too.
    // Done once a pass over every queue finds nothing new and no copy or item is in flight.
    for (;;) {
        bool settled = true;
        for (auto &queue : queues.all())
            settled = queue->drain_at_exit() && settled;
        if (settled && engine->quiescent())
            break;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    engine->drain_and_stop(std::chrono::milliseconds(200));
}

} // namespace kupl
