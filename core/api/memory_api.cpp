// kupl_malloc / kupl_free / kupl_mlock / kupl_munlock.
#include "api/api_support.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

using kupl::api::fail;

extern "C" {

void *kupl_malloc(kupl_mem_kind_t kind, size_t size) {
    if (kind != KUPL_MEM_DEFAULT && kind != KUPL_MEM_LARGE_CAP && kind != KUPL_MEM_HIGH_BW) {
        fail(__func__, "unknown memory kind %d", static_cast<int>(kind));
        return nullptr;
    }
    if (size == 0) {
        fail(__func__, "size is 0");
        return nullptr;
    }
    void *memory = nullptr;
    if (posix_memalign(&memory, 4096, size) != 0) {
        fail(__func__, "cannot allocate %zu bytes", size);
        return nullptr;
    }
    if (kind != KUPL_MEM_DEFAULT) {
        kupl::Runtime *runtime = kupl::Runtime::get();
        const auto tier = kind == KUPL_MEM_HIGH_BW ? kupl::topo::MemoryTier::high_bandwidth
                                                   : kupl::topo::MemoryTier::large_capacity;
        // Without such a tier the memory keeps the default policy, as KUPL documents.
        if (runtime != nullptr)
            runtime->topology.bind_memory_to_tier(memory, size, tier);
    }
    return memory;
}

void kupl_free(kupl_mem_kind_t, void *ptr) {
    std::free(ptr);
}

int kupl_mlock(void *buffer, size_t count) {
    if (buffer == nullptr)
        return fail(__func__, "buffer is NULL");
    if (mlock(buffer, count) != 0)
        return fail(__func__, "mlock of %zu bytes failed: %s", count, std::strerror(errno));
    return KUPL_OK;
}

int kupl_munlock(void *buffer, size_t count) {
    if (buffer == nullptr)
        return fail(__func__, "buffer is NULL");
    if (munlock(buffer, count) != 0)
        return fail(__func__, "munlock of %zu bytes failed: %s", count, std::strerror(errno));
    return KUPL_OK;
}

} // extern "C"
