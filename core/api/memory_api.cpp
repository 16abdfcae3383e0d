// kupl_malloc / kupl_free / kupl_mlock / kupl_munlock.
#include "api/api_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using kupl::api::fail;
using kupl::api::guarded;

namespace {

// The checks mlock(2) leaves out: the kernel rounds [buffer, buffer + count) out to whole pages
// with unsigned arithmetic, so a count that wraps (SIZE_MAX) becomes an empty range and
// "succeeds", as does count 0, which locks nothing the caller asked for.
int check_range(const char *function, const void *buffer, std::size_t count) {
    if (buffer == nullptr)
        return fail(function, "buffer is NULL");
    if (count == 0)
        return fail(function, "count is 0");
    const auto first = reinterpret_cast<std::uintptr_t>(buffer);
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    // The last page's end, first + count rounded up to a page, must not wrap.
    if (first > UINTPTR_MAX - count || first + count > UINTPTR_MAX - (page - 1))
        return fail(function, "%zu bytes from %p wrap around the end of the address space", count, buffer);
    return KUPL_OK;
}

} // namespace

extern "C" {

void *kupl_malloc(kupl_mem_kind_t kind, size_t size) {
    // As an int: a kind outside the enumeration may not be loaded as one (UBSan checks such loads).
    const int kind_value = static_cast<int>(kind);
    return guarded(
        __func__, static_cast<void *>(nullptr), [kind_value, size](const char *function) -> void * {
            if (kind_value != KUPL_MEM_DEFAULT && kind_value != KUPL_MEM_LARGE_CAP &&
                kind_value != KUPL_MEM_HIGH_BW) {
                fail(function, "unknown memory kind %d", kind_value);
                return nullptr;
            }
            const auto kind = static_cast<kupl_mem_kind_t>(kind_value);
            if (size == 0) {
                fail(function, "size is 0");
                return nullptr;
            }
            void *memory = nullptr;
            if (posix_memalign(&memory, 4096, size) != 0) {
                fail(function, "cannot allocate %zu bytes", size);
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
        });
}

void kupl_free(kupl_mem_kind_t, void *ptr) {
    guarded(__func__, [&](const char *) { std::free(ptr); });
}

int kupl_mlock(void *buffer, size_t count) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (check_range(function, buffer, count) != KUPL_OK)
            return KUPL_ERROR;
        if (mlock(buffer, count) != 0)
            return fail(function, "mlock of %zu bytes failed: %s", count, std::strerror(errno));
        return KUPL_OK;
    });
}

int kupl_munlock(void *buffer, size_t count) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (check_range(function, buffer, count) != KUPL_OK)
            return KUPL_ERROR;
        if (munlock(buffer, count) != 0)
            return fail(function, "munlock of %zu bytes failed: %s", count, std::strerror(errno));
        return KUPL_OK;
    });
}

} // extern "C"
