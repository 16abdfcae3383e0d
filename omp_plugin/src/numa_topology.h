// The NUMA nodes of the machine (hwloc): how many, where their cores are, how much memory
// they hold, and memory allocation bound to one of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <hwloc.h>

namespace kupl_omp {

class NumaTopology {
  public:
    NumaTopology();
    ~NumaTopology();
    NumaTopology(const NumaTopology &) = delete;
    NumaTopology &operator=(const NumaTopology &) = delete;

    /// NUMA nodes hwloc reports (at least 1, also when hwloc fails to load).
    int num_nodes() const { return num_nodes_; }
    /// OS index of node number `node` (0-based logical), or -1 if unknown.
    int os_index(int node) const;
    /// The cores of the node as an hwloc list string such as "0-3".
    std::string cpuset_list(int node) const;
    /// Bytes of memory local to the node (0 if unknown).
    uint64_t local_memory(int node) const;
    /// The CPU model name hwloc reports, or "unknown".
    std::string cpu_model() const;

    /// size bytes of page-aligned memory bound to the node; NULL on failure.
    void *alloc_bound(size_t size, int node) const;
    /// Frees memory from alloc_bound (size as allocated).
    void free_bound(void *ptr, size_t size) const;

  private:
    hwloc_obj_t node_obj(int node) const;

    hwloc_topology_t topology_ = nullptr;
    int num_nodes_ = 1;
};

} // namespace kupl_omp
