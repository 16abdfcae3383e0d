// Which ranks of a communicator share this node: MPI_Comm_split_type(SHARED) on
// MPI_COMM_WORLD once at MPI_Init, then rank translation per communicator,
// cached as a communicator attribute (deleted with the communicator).
#pragma once

#include "stats.h"

#include <mpi.h>

namespace kupl_mpi {

/** Collective over MPI_COMM_WORLD: call right after PMPI_Init/Init_thread. */
void node_map_init();
/** Releases the keyval (before PMPI_Finalize). */
void node_map_finalize();

/** Ranks of MPI_COMM_WORLD on this node (1 before MPI_Init was seen). */
int ranks_on_node();

/**
 * Says whether peer (a rank, MPI_ANY_SOURCE or MPI_PROC_NULL) of comm is on this
 * node. Returns true if so; otherwise false with *why set.
 */
bool peer_on_node(MPI_Comm comm, int peer, Fallback *why);

} // namespace kupl_mpi
