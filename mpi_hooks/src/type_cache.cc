#include "type_cache.h"

#include "stats.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace kupl_mpi {
namespace {

std::shared_mutex g_mutex;
// Bumped (under g_mutex) whenever the table changes: a thread's last hit (below) is
// valid while the generation it saw is current.
std::atomic<uint64_t> g_generation{1};

/**
 * The last type this thread looked up: a program sends the same type again and
 * again, and a hit skips the lock and the hash (a fallback then costs ~30 ns less
 * than with them, measured on MPI_Pack of a contiguous plane: 0.28 against 0.31 us).
 */
struct LastHit {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    uint64_t generation = 0;
    TypeInfo info;
};
// Initial-exec TLS: see t_fallbacks in planner.cc.
__attribute__((tls_model("initial-exec"))) thread_local LastHit t_last;
std::unordered_map<MPI_Datatype, TypeInfo> &table() {
    static auto *t = new std::unordered_map<MPI_Datatype, TypeInfo>; // outlives static destructors
    return *t;
}

} // namespace

void type_cache_add(MPI_Datatype datatype) {
    try {
        TypeInfo info;
        TypeAnalysis a = analyse_datatype(datatype);
        info.verdict = a.verdict;
        info.layout = a.grid;
        info.blocks = std::move(a.blocks);
        info.leaf = a.leaf;
        info.leaf_size = a.leaf_size;
        PMPI_Type_get_extent(datatype, &info.lb, &info.extent);
        PMPI_Type_size(datatype, &info.size);
        stats_type_committed(info.verdict);
        std::unique_lock<std::shared_mutex> lock(g_mutex);
        table()[datatype] = info;
        g_generation.fetch_add(1, std::memory_order_release);
    } catch (const std::bad_alloc &) {
        // Not analysed or not recorded: the type stays unknown and goes to Open MPI. Nothing stale can
        // be left under the handle: its previous type's entry went at MPI_Type_free.
        type_cache_remove(datatype);
    }
}

void type_cache_remove(MPI_Datatype datatype) {
    std::unique_lock<std::shared_mutex> lock(g_mutex);
    table().erase(datatype);
    g_generation.fetch_add(1, std::memory_order_release);
}

uint64_t type_cache_generation() {
    return g_generation.load(std::memory_order_acquire);
}

bool type_cache_find(MPI_Datatype datatype, TypeInfo *info) {
    const uint64_t generation = g_generation.load(std::memory_order_acquire);
    if (t_last.type == datatype && t_last.generation == generation) {
        *info = t_last.info;
    } else {
        std::shared_lock<std::shared_mutex> lock(g_mutex);
        auto it = table().find(datatype);
        if (it == table().end())
            return false;
        *info = it->second;
        t_last.type = datatype;
        t_last.generation = g_generation.load(std::memory_order_relaxed); // stable under the lock
        t_last.info = it->second;
    }
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_size(datatype, &size);
    PMPI_Type_get_extent(datatype, &lb, &extent);
    return size == info->size && lb == info->lb && extent == info->extent;
}

} // namespace kupl_mpi
