#include "type_cache.h"

#include "stats.h"

#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace kupl_mpi {
namespace {

std::shared_mutex g_mutex;
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
    } catch (const std::bad_alloc &) {
        // Not analysed or not recorded: the type stays unknown and goes to Open MPI. Nothing stale can
        // be left under the handle: its previous type's entry went at MPI_Type_free.
        type_cache_remove(datatype);
    }
}

void type_cache_remove(MPI_Datatype datatype) {
    std::unique_lock<std::shared_mutex> lock(g_mutex);
    table().erase(datatype);
}

bool type_cache_find(MPI_Datatype datatype, TypeInfo *info) {
    {
        std::shared_lock<std::shared_mutex> lock(g_mutex);
        auto it = table().find(datatype);
        if (it == table().end())
            return false;
        *info = it->second;
    }
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_size(datatype, &size);
    PMPI_Type_get_extent(datatype, &lb, &extent);
    return size == info->size && lb == info->lb && extent == info->extent;
}

} // namespace kupl_mpi
