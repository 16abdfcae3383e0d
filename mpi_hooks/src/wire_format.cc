#include "wire_format.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

namespace kupl_mpi {
namespace {

using WireType = std::shared_ptr<const MPI_Datatype>;

constexpr size_t kMaxCachedTypes = 256;
std::mutex g_mutex;
std::map<std::pair<MPI_Datatype, int>, WireType> &cache() {
    static auto *c = new std::map<std::pair<MPI_Datatype, int>, WireType>;
    return *c;
}

/** Frees a wire type when its last reference goes; after MPI_Finalize there is nothing left to free. */
void free_wire_type(MPI_Datatype *t) {
    int finalized = 1;
    PMPI_Finalized(&finalized);
    if (!finalized)
        PMPI_Type_free(t);
    delete t;
}

/** A new committed two-block type of n leaves, or null. */
WireType make_wire_type(MPI_Datatype leaf, int n) {
    int blocklens[2] = {1, n - 1}, displacements[2] = {0, 2};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (PMPI_Type_indexed(2, blocklens, displacements, leaf, &t) != MPI_SUCCESS)
        return nullptr;
    if (PMPI_Type_commit(&t) != MPI_SUCCESS) {
        PMPI_Type_free(&t);
        return nullptr;
    }
    MPI_Datatype *owned = new (std::nothrow) MPI_Datatype(t);
    if (!owned) {
        PMPI_Type_free(&t);
        return nullptr;
    }
    try {
        return WireType(owned, free_wire_type); // on bad_alloc the deleter runs: the type is freed
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

} // namespace

void stage_pack(CopyBatch &batch, const Plan &p, char *staging) {
    batch.pack(p.where, staging + p.gap);
    if (p.gap) { // leaf 0 goes in front of the gap: take it from the packed copy once that is done
        batch.wait();
        std::memcpy(staging, staging + p.gap, p.gap);
    }
}

void stage_unpack(CopyBatch &batch, const Plan &p, char *staging, size_t bytes) {
    if (p.gap && bytes > 0)
        std::memcpy(staging + p.gap, staging, p.gap); // put leaf 0 back in front of leaf 1
    batch.unpack(staging + p.gap, bytes, p.where);
}

std::shared_ptr<const MPI_Datatype> gapped_wire_type(MPI_Datatype leaf, int n) try {
    std::lock_guard<std::mutex> lock(g_mutex);
    const auto key = std::make_pair(leaf, n);
    auto it = cache().find(key);
    if (it != cache().end())
        return it->second;
    // Evicting drops only the cache's references: a type that a plan or a request
    // still holds stays committed until its holder lets go (see Plan::wire_owner).
    if (cache().size() >= kMaxCachedTypes)
        cache().clear();
    WireType t = make_wire_type(leaf, n);
    if (t)
        cache().emplace(key, t);
    return t;
} catch (const std::bad_alloc &) {
    return nullptr; // no cache or no room in it: the message travels as plain leaves
}

void wire_types_release() {
    std::lock_guard<std::mutex> lock(g_mutex);
    cache().clear(); // types still held by requests the program never completed stay until those go
}

} // namespace kupl_mpi
