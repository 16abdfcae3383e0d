// The machine as hwloc sees it: cores to place copy channels on, NUMA nodes, memory tiers.
#pragma once

#include <cstddef>
#include <string>

struct hwloc_topology;

namespace kupl::topo {

enum class MemoryTier { default_tier, large_capacity, high_bandwidth };

// How a runtime thread is placed: not at all, on the cores of the NUMA node of a core (only
// where the machine has several nodes: on one node the scheduler balances best), or on one core.
enum class ThreadBinding { none = 0, numa_node = 1, core = 2 };

class Topology {
  public:
    Topology();
    ~Topology();
    Topology(const Topology &) = delete;
    Topology &operator=(const Topology &) = delete;

    int num_cores() const { return num_cores_; }
    int num_numa_nodes() const { return num_numa_nodes_; }
    std::size_t last_level_cache_bytes() const { return llc_bytes_; }

    // Places the calling thread near core number `core` (taken modulo the core count) and
    // returns where it now runs, e.g. "numa 1 (cpus 8-15)". Never fails hard: if binding is
    // refused the thread stays unbound and the text says so.
    std::string place_calling_thread(int core, ThreadBinding binding) const;

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
