// Commit-time verdicts per datatype handle: analysed once at MPI_Type_commit,
// forgotten at MPI_Type_free (handles are reused). Thread-safe.
#pragma once

#include "type_layout.h"

#include <cstdint>

namespace kupl_mpi {

/** What the cache knows about one committed datatype. */
struct TypeInfo {
    TypeVerdict verdict = TypeVerdict::Unsupported;
    StridedLayout layout;                      // one element; valid for Strided and Contiguous
    std::shared_ptr<const BlockLayout> blocks; // one element; valid for Blocks
    MPI_Datatype leaf = MPI_DATATYPE_NULL;     // the one predefined leaf, null if mixed (see TypeAnalysis)
    size_t leaf_size = 0;
    MPI_Aint lb = 0, extent = 0;
    int size = 0;
};

/** Analyses a freshly committed (or duplicated) type and remembers the verdict. */
void type_cache_add(MPI_Datatype datatype);
/** Forgets a type about to be freed. */
void type_cache_remove(MPI_Datatype datatype);
/**
 * Looks datatype up. False if it was never analysed (predefined types, types
 * committed behind our back) or if its size/extent no longer match (a handle
 * reused by a type we did not see committed).
 */
bool type_cache_find(MPI_Datatype datatype, TypeInfo *info);
/** Changes whenever a type is added or removed: decisions derived from the cache hold while it stays. */
uint64_t type_cache_generation();

} // namespace kupl_mpi
