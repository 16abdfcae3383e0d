#include "device_memory.h"

#include <cstdint>
#include <cstdlib>

#include <sys/mman.h>

#include <kupl.h>

#include "llvm14_abi.h"
#include "numa_topology.h"
#include "plugin_log.h"
#include "support/env_config.h"

namespace kupl_omp {
namespace {
// Below this size a single-node machine serves device memory from malloc: binding is moot
// and an mmap per mapped scalar would cost more than the copy.
constexpr size_t kSmallBlock = 64 * 1024;
constexpr size_t kAlignment = 64;

void *aligned_malloc(size_t size) {
    void *ptr = nullptr;
    return posix_memalign(&ptr, kAlignment, size) == 0 ? ptr : nullptr;
}

// Large device blocks ask for transparent huge pages, as device memory is backed by large pages
// on accelerators: regions sweeping them take fewer TLB misses (16 nowait `target parallel for`
// chunks of 4 MiB: +9% in the same run). Debian's default THP mode is `madvise`, so without the
// request they get 4 KiB pages. KUPL_OMP_HUGE_PAGES=0 turns it off.
constexpr size_t kHugePage = size_t(2) << 20;
bool huge_pages_wanted() {
    static const bool wanted = kupl::env::read_bool("KUPL_OMP_HUGE_PAGES", true);
    return wanted;
}
void advise_huge_pages(void *base, size_t size) {
    if (size >= kHugePage && huge_pages_wanted())
        madvise(base, size, MADV_HUGEPAGE); // advice only: an error changes nothing
}
} // namespace

void *DeviceMemory::allocate(size_t size, int32_t kind, const void *host_ptr, int device) {
    if (size == 0)
        size = 1; // libomptarget expects a distinct non-null pointer for empty sections
    // Same offset within a cache line as the host data (0 for omp_target_alloc).
    const size_t offset = reinterpret_cast<uintptr_t>(host_ptr) % kAlignment;
    if (size > SIZE_MAX - offset) {
        report_error("device %d: cannot allocate %zu bytes", device, size);
        return nullptr;
    }
    Allocation block;
    block.size = size + offset;
    size = block.size;
    switch (kind) {
    case kAllocDevice:
    case kAllocDefault:
        if (topology_.num_nodes() == 1 && size < kSmallBlock) {
            block.base = aligned_malloc(size);
        } else {
            block.source = Allocation::Source::Bound;
            block.base = topology_.alloc_bound(size, node_);
            if (block.base)
                advise_huge_pages(block.base, size);
        }
        break;
    case kAllocHost:
        block.source = Allocation::Source::Pinned;
        block.base = kupl_malloc(KUPL_MEM_DEFAULT, size);
        block.locked = block.base && kupl_mlock(block.base, size) == KUPL_OK;
        if (block.base && !block.locked)
            report_info(kInfoDataTransfer, device, "host allocation of %zu bytes could not be pinned", size);
        break;
    case kAllocShared:
        block.base = aligned_malloc(size);
        break;
    default:
        report_error("device %d: unknown allocation kind %d", device, kind);
        return nullptr;
    }
    if (!block.base) {
        report_error("device %d: cannot allocate %zu bytes (kind %d)", device, size, kind);
        return nullptr;
    }
    block.ptr = static_cast<char *>(block.base) + offset;
    std::lock_guard<std::mutex> lock(mutex_);
    live_[block.ptr] = block;
    return block.ptr;
}

bool DeviceMemory::take(void *ptr, Allocation *out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = live_.find(ptr);
    if (found == live_.end())
        return false;
    *out = found->second;
    live_.erase(found);
    return true;
}

void DeviceMemory::release(const Allocation &block) const {
    switch (block.source) {
    case Allocation::Source::Malloc:
        free(block.base);
        break;
    case Allocation::Source::Bound:
        topology_.free_bound(block.base, block.size);
        break;
    case Allocation::Source::Pinned:
        if (block.locked)
            kupl_munlock(block.base, block.size);
        kupl_free(KUPL_MEM_DEFAULT, block.base);
        break;
    }
}

} // namespace kupl_omp
