#include "wire_format.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace kupl_mpi {
namespace {

constexpr size_t kMaxCachedTypes = 256;
std::mutex g_mutex;
std::map<std::pair<MPI_Datatype, int>, MPI_Datatype> &cache() {
    static auto *c = new std::map<std::pair<MPI_Datatype, int>, MPI_Datatype>;
    return *c;
}

} // namespace

void stage_pack(CopyBatch &batch, const Plan &p, char *staging) {
    batch.pack(p.where, staging + p.gap);
    if (p.gap) // leaf 0 is the head of the first block: take it from the user's buffer
        std::memcpy(staging, p.where.grid_start(), p.gap);
}

void stage_unpack(CopyBatch &batch, const Plan &p, char *staging, size_t bytes) {
    if (p.gap && bytes > 0)
        std::memcpy(staging + p.gap, staging, p.gap); // put leaf 0 back in front of leaf 1
    batch.unpack(staging + p.gap, bytes, p.where);
}

MPI_Datatype gapped_wire_type(MPI_Datatype leaf, int n) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto key = std::make_pair(leaf, n);
    auto it = cache().find(key);
    if (it != cache().end())
        return it->second;
    if (cache().size() >= kMaxCachedTypes) {
        // Open MPI keeps a type alive while requests use it, so freeing here is safe.
        for (auto &entry : cache())
            PMPI_Type_free(&entry.second);
        cache().clear();
    }
    int blocklens[2] = {1, n - 1}, displacements[2] = {0, 2};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (PMPI_Type_indexed(2, blocklens, displacements, leaf, &t) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    if (PMPI_Type_commit(&t) != MPI_SUCCESS) {
        PMPI_Type_free(&t);
        return MPI_DATATYPE_NULL;
    }
    cache()[key] = t;
    return t;
}

void wire_types_release() {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto &entry : cache())
        PMPI_Type_free(&entry.second);
    cache().clear();
}

} // namespace kupl_mpi
