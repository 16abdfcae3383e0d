// Decides, per call, whether a message goes through the strided copy engine or
// straight to Open MPI, and how the packed message travels (see wire_format.h).
#pragma once

#include "stats.h"
#include "strided_copy.h"

#include <mpi.h>

#include <memory>

namespace kupl_mpi {

/** An accelerated message: where its grid is and how it travels packed. */
struct Plan {
    Placement where;
    MPI_Datatype wire_type = MPI_DATATYPE_NULL; // how the staged bytes travel (see wire_format.h)
    // Holds a derived wire_type committed for as long as this plan (or a copy) may post it:
    // the wire-type cache may evict it meanwhile but never frees a type a plan still holds.
    std::shared_ptr<const MPI_Datatype> wire_owner;
    int wire_count = 0; // elements of wire_type in the message
    size_t bytes = 0;   // packed bytes
    size_t gap = 0;     // staging gap after leaf 0 (0: plain leaves)
};

/** What the message is used for; the cost model differs. */
enum class Use {
    Pack,
    Unpack,
    Send,
    Recv,
    MatchedRecv, // MPI_Mrecv/Imrecv: an unpack (the source is matched already) that needs a wire type
};

/**
 * Plans count elements of datatype at buf. False with *why if it must fall back.
 * For Send/Recv peer and comm are checked too (on node, not an intercommunicator),
 * and a message of two or more leaves gets the two-block wire type (wire_format.h) —
 * unless coll_block: one peer's block of a collective, whose communicator the caller
 * checks once for all blocks and which chooses its own wire type (wrap_coll_v.cc);
 * it then travels as wire_count plain leaves of wire_type.
 */
bool plan(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer, Plan *out,
          Fallback *why, bool coll_block = false);

/** plan() plus the fallback counted in the statistics. */
inline bool plan_or_count(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer,
                          Plan *out) {
    Fallback why = Fallback::BadArgument;
    if (plan(use, buf, count, datatype, comm, peer, out, &why))
        return true;
    stats_fallback(why);
    return false;
}

} // namespace kupl_mpi
