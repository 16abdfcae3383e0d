// How a staged point-to-point message travels. The packed bytes go as the same
// leaf elements Open MPI itself would send, but described as two blocks — leaf 0,
// then leaves 1..n-1 one leaf further on — so Open MPI treats the message as
// non-contiguous and streams it through its shared-memory pipeline instead of
// its contiguous single-copy (CMA) path, which measured 3-10x slower on the
// virtual machines we run on. The type signature, and so what any receiver
// sees, is unchanged. Staging layout: [leaf 0][gap][leaf 1 ... leaf n-1].
#pragma once

#include "planner.h"

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
 * The committed two-block type of n leaves (cached; owned by the cache), or
 * MPI_DATATYPE_NULL if it cannot be made.
 */
MPI_Datatype gapped_wire_type(MPI_Datatype leaf, int n);

/** Frees the cached wire types (before MPI_Finalize). */
void wire_types_release();

} // namespace kupl_mpi
