// Whether packing with the copy engine is expected to beat Open MPI's own
// datatype engine for one message.
#pragma once

#include "planner.h"

namespace kupl_mpi {

/** collective_block: one peer's block of a collective, which the point-to-point size floor
 *  leaves alone (packed once for the whole call, not per exchange). */
bool worth_accelerating(Use use, const StridedLayout &message, size_t min_bytes,
                        bool collective_block = false);
/** The same for count elements of a block list, extent bytes apart. */
bool worth_accelerating_blocks(Use use, const BlockLayout &element, MPI_Count count, MPI_Aint extent,
                               size_t min_bytes, bool collective_block = false);
/**
 * Whether one peer's staged block of a v/w collective may travel as plain,
 * contiguous leaves (when the blocks differ in length and so share no two-block
 * wire type): only up to the size Open MPI sends eagerly.
 */
bool contiguous_block_pays(size_t bytes);

} // namespace kupl_mpi
