// Memory of one device, by omp_target_alloc kind:
//   device/default: bound to the device's NUMA node (small blocks come from malloc when the
//                   machine has a single node, where binding changes nothing);
//   host:           page-aligned host memory pinned with kupl_mlock (unpinned if the limit forbids);
//   shared:         ordinary host memory, placed by first touch.
// Every live block is tracked, so a delete of an unknown pointer is refused, not freed.
// A block mapped for host data starts at the same offset within a cache line as that data, so
// that copies between them keep source and destination equally aligned (memcpy is faster).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace kupl_omp {

class NumaTopology;

struct Allocation {
    void *base = nullptr; ///< what the allocator returned
    void *ptr = nullptr;  ///< what the device hands out: base + offset
    size_t size = 0;      ///< bytes allocated at base
    enum class Source { Malloc, Bound, Pinned } source = Source::Malloc;
    bool locked = false; ///< Pinned only: whether kupl_mlock succeeded
};

class DeviceMemory {
  public:
    DeviceMemory(const NumaTopology &topology, int node) : topology_(topology), node_(node) {}

    /// NULL on failure (and a message). kind is a TargetAllocKind; host_ptr (may be NULL) is
    /// the host data the block will mirror.
    void *allocate(size_t size, int32_t kind, const void *host_ptr, int device);
    /// Removes ptr from the live set; false if it is not a live block of this device.
    bool take(void *ptr, Allocation *out);
    /// Returns a taken block to the system.
    void release(const Allocation &block) const;

  private:
    const NumaTopology &topology_;
    const int node_;
    std::mutex mutex_;
    std::unordered_map<void *, Allocation> live_;
};

} // namespace kupl_omp
