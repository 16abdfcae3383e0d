// The process-wide runtime: configuration, topology, the engine and the handle tables. It starts
// on first use (safe when first calls race), stops at exit after the submitted work is done, and
// starts afresh in the child after fork() (handles from the parent are then invalid there).
#pragma once

#include "api/handle_table.h"
#include "sched/engine.h"
#include "sched/event.h"
#include "sched/queue.h"
#include "support/config.h"
#include "support/counters.h"
#include "support/fault_injection.h"
#include "topo/topology.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace kupl {

class Runtime {
  public:
    // The runtime, started if needed; nullptr if the process is exiting or start-up failed.
    static Runtime *get();

    // `generation` numbers the runtimes of this process and its ancestors (see handle_table.h).
    explicit Runtime(std::uint64_t generation);
    Runtime(const Runtime &) = delete;
    Runtime &operator=(const Runtime &) = delete;

    const support::Config config;
    const topo::Topology topology;
    // From here to the first threads' counter slots: what a copy reads of the runtime, the engine
    // included (a member, not an allocation of its own), on one page: a cold copy pays one page
    // walk for it (api/api_support.h). Aligned, or it straddles two pages wherever the runtime's
    // allocation happens to fall.
    alignas(4096) support::FaultInjector faults;
    std::optional<sched::Engine> engine; // set by the constructor, which throws if it cannot start
    const std::uint64_t generation;
    api::HandleTable<sched::Queue> queues{0x5, generation};
    api::HandleTable<sched::Event> events{0xA, generation};
    // Last, its first threads' slots right behind the tables (on the page above).
    support::Counters counters;

    // kupl_queue_acquire(index): created on first use, owned by the runtime.
    void *acquire_queue(int index);
    bool is_acquired(const void *handle);
    // Waits for every acquired queue; false if work on one of them failed.
    bool wait_acquired();

    // Waits for all queues and for every copy and host item in flight, then stops the threads.
    // Called once, at exit. A thread still not gone 200 ms after leaving our code is abandoned:
    // an executor that ran an OpenMP region runs libomp's thread-exit hook, which blocks forever
    // once libomp has shut down at exit (kupl-omp pipeline hang, 1 run in ~100).
    void drain_at_exit();

  private:
    std::mutex acquired_mutex_;
    std::map<int, void *> acquired_; // index -> handle; guarded by acquired_mutex_
};

} // namespace kupl
