// The machine as hwloc sees it: cores to place copy channels on, NUMA nodes, memory tiers.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

struct hwloc_topology;

namespace kupl::topo {

// How a runtime thread is placed: not at all, on the allowed cores of its NUMA node (within
// them the scheduler balances best), or on one core.
enum class ThreadBinding { none = 0, numa_node = 1, core = 2 };

enum class MemoryTier { default_tier, large_capacity, high_bandwidth };

struct PlacementPlan;
struct PlacementInputs;
struct ChannelPlacement;

class Topology {
  public:
    Topology();
    ~Topology();
    Topology(const Topology &) = delete;
    Topology &operator=(const Topology &) = delete;

    int num_cores() const { return num_cores_; }
    int num_numa_nodes() const { return num_numa_nodes_; }
    std::size_t last_level_cache_bytes() const { return llc_bytes_; }

    // The placement plan for this process on this machine (topo/placement.h): its cpubind as
    // hwloc reads it (the whole machine if it cannot), grouped by NUMA node.
    PlacementPlan plan(const PlacementInputs &inputs) const;

    // Binds the calling thread as `channel` says and returns where it now runs, e.g.
    // "numa 1 (cpus 8-15)". Never fails hard: if binding is refused the thread stays where it
    // was and the text says so.
    std::string bind_calling_thread(const ChannelPlacement &channel, ThreadBinding binding) const;

    // Runs `start` with the calling thread bound to `cpus` (hwloc list form), then gives the thread
    // its own binding back. Threads started inside inherit `cpus`: the executors get the process's
    // allowed cpus even when the thread that first calls KUPL is bound to one core (an OpenMP
    // master thread under OMP_PROC_BIND). Does nothing special where the thread already runs on
    // exactly `cpus`, or if binding is refused. Exceptions from `start` pass through.
    void run_bound_to(const std::string &cpus, const std::function<void()> &start) const;

    // The logical index of the NUMA node holding the page at `address`; -1 if unknown (page not
    // yet touched, query refused, or a topology that is not this machine). One system call
    // (move_pages through hwloc), nothing cached: pages may migrate.
    int numa_node_of(const void *address) const;

    // Binds [ptr, ptr+size) to the NUMA node that is best for `tier` by hwloc's memory
    // attributes, seen from the calling thread. Returns false if the machine has no such tier
    // (then the memory keeps the default policy).
    bool bind_memory_to_tier(void *ptr, std::size_t size, MemoryTier tier) const;

    // One line: package/core/NUMA counts, cache sizes.
    std::string summary() const;

  private:
    hwloc_topology *topology_ = nullptr;
    int num_cores_ = 1;
    int num_numa_nodes_ = 1;
    std::size_t llc_bytes_ = 0;
};

} // namespace kupl::topo
