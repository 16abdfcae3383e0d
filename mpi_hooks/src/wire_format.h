// How a staged point-to-point message travels. The packed bytes go as the same
// leaf elements Open MPI itself would send, but described as two blocks — leaf 0,
// then leaves 1..n-1 one leaf further on — so Open MPI treats the message as
// non-contiguous and streams it through its shared-memory pipeline instead of
// its contiguous single-copy (CMA) path, which measured 3-10x slower on the
// virtual machines we run on. The type signature, and so what any receiver
// sees, is unchanged. Staging layout: [leaf 0][gap][leaf 1 ... leaf n-1].
#pragma once

#include "planner.h"

#include <memory>

namespace kupl_mpi {

/** Bytes of staging a plan needs (packed bytes plus the gap). */
inline size_t staging_size(const Plan &p) {
    return p.bytes + p.gap;
}

/** Submits the packing of p's grid into staging (wire layout) to batch. */
void stage_pack(CopyBatch &batch, const Plan &p, char *staging);

/** Submits the unpacking of the first bytes of a message received into staging. */
void stage_unpack(CopyBatch &batch, const Plan &p, char *staging, size_t bytes);

/**
 * The committed two-block type of n leaves, or null if it cannot be made. The
 * type stays committed while any copy of the returned pointer lives: the cache
 * holds one reference, and evicting an entry only drops that reference, so a
 * type that a planned call is about to post (or a request still holds) is freed
 * only after its last user lets go. Never throws.
 */
std::shared_ptr<const MPI_Datatype> gapped_wire_type(MPI_Datatype leaf, int n);

/** Drops the cache's references to the wire types (before MPI_Finalize). */
void wire_types_release();

} // namespace kupl_mpi
