// Counters behind KUPL_MPI_STATS=1: what was accelerated, what fell back and why.
#pragma once

#include "strided_layout.h"

#include <cstdint>

namespace kupl_mpi {

/** Why a call went straight to Open MPI. */
enum class Fallback {
    Disabled,          // KUPL_MPI_DISABLE=1
    SwitchedOff,       // kupl_mpi_set_enabled(0)
    NotCommitted,      // predefined type or a type not committed through us
    TypeUnsupported,   // a combiner we do not decode (TypeVerdict::Unsupported)
    TypeLeafHoles,     // a predefined leaf with holes (TypeVerdict::NotDenseLeaf)
    TypeTooManyBlocks, // TypeVerdict::TooManyBlocks
    TypeEmpty,         // TypeVerdict::Empty
    NotMonotonic,      // a message grid with a zero or negative stride (count with a non-positive extent)
    Overlapping,       // unpack or receive into blocks not proven disjoint
    MixedLeaves,       // point to point with a type of mixed predefined leaves (packed only)
    Contiguous,        // the message is one contiguous run
    ZeroCount,         //
    ProcNull,          //
    Intercomm,         //
    OffNode,           // peer on another node, or a communicator outside MPI_COMM_WORLD
    AnySourceOffNode,  // MPI_ANY_SOURCE on a communicator spanning nodes
    NoNodeMap,         // MPI_Init was not seen (e.g. a binding that is not wrapped)
    CostModel,         // Open MPI is expected to be as fast
    TooLarge,          // count overflows int
    BufferTooSmall,    // Pack/Unpack that Open MPI must reject itself
    BadArgument,       // let Open MPI report it
    NoMemory,          // a staging buffer or the bookkeeping of a request could not be allocated
    InPlace,           // a collective with MPI_IN_PLACE
    CollMultiNode,     // a collective on a communicator spanning nodes
    kCount
};

/** What an accelerated call did. */
enum class Accel { Send, Recv, Pack, Unpack, Persistent, Collective, kCount };

const char *fallback_name(Fallback f);

void stats_type_committed(TypeVerdict v);
void stats_fallback(Fallback f);
void stats_accelerated(Accel a, uint64_t bytes);
void stats_engine_error();
/** True when KUPL_MPI_STATS is set to a non-zero value. */
bool stats_enabled();
/** Prints one block per rank on stderr (called from MPI_Finalize). */
void stats_print(int rank);

} // namespace kupl_mpi
