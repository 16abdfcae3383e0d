// Collectives with derived datatypes: MPI_Bcast, MPI_Gather, MPI_Scatter,
// MPI_Allgather and MPI_Alltoall. Each side whose type the planner accepts is
// packed into a staging buffer, block by block (one block per peer), Open MPI's
// own collective runs on the packed bytes — every block travelling as the
// two-block wire type of its leaves (wire_format.h), which has the same type
// signature as the application's block — and the received blocks are unpacked.
// Each rank decides for itself: signatures match whatever the others chose.
// MPI_IN_PLACE, intercommunicators and communicators that span nodes go to
// Open MPI untouched. The v/w variants are in wrap_coll_v.cc.
#include "node_map.h"
#include "staging_pool.h"
#include "trace.h"
#include "wire_format.h"

#include <mpi.h>

namespace kupl_mpi {
namespace {

/** One side of a collective: nblocks blocks of count elements of type, staged or not. */
struct Side {
    bool staged = false;
    Plan plan; // block 0
    StagingBuffer staging;
    int nblocks = 0;
    MPI_Aint user_stride = 0; // bytes between the users blocks
    size_t stage_stride = 0;  // bytes between staged blocks (the wire type's extent)
    void *buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;

    /** Real-call arguments: the staging buffer and its wire type, or the application's own. */
    void *arg_buf() const { return staged ? staging.data() : buf; }
    int arg_count() const { return staged ? plan.wire_count : count; }
    MPI_Datatype arg_type() const { return staged ? plan.wire_type : type; }

    Plan block(int i) const {
        Plan p = plan;
        p.where.base = static_cast<const char *>(buf) + static_cast<MPI_Aint>(i) * user_stride;
        return p;
    }
};

/** Plans a side; only_if says whether it is significant at this rank at all. */
void prepare(Side &s, bool sending, bool significant, const void *buf, int count, MPI_Datatype type,
             int nblocks, MPI_Comm comm) {
    s.buf = const_cast<void *>(buf);
    s.count = count;
    s.type = type;
    s.nblocks = nblocks;
    if (!significant)
        return;
    if (buf == MPI_IN_PLACE) {
        stats_fallback(Fallback::InPlace);
        return;
    }
    int rank = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) // also refuses MPI_COMM_NULL
        return;
    // The planner's point-to-point rules, for a peer known to be local (this rank); the
    // communicator as a whole is checked below.
    if (!plan_or_count(sending ? Use::Send : Use::Recv, buf, count, type, comm, rank, &s.plan))
        return;
    Fallback why = Fallback::BadArgument;
    if (!peer_on_node(comm, MPI_ANY_SOURCE, &why)) {
        stats_fallback(why == Fallback::AnySourceOffNode ? Fallback::CollMultiNode : why);
        return;
    }
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    s.user_stride = static_cast<MPI_Aint>(count) * extent;
    s.stage_stride = staging_size(s.plan);
    s.staging = StagingBuffer(s.stage_stride * static_cast<size_t>(nblocks));
    if (!s.staging) {
        stats_fallback(Fallback::NoMemory);
        return;
    }
    s.staged = true;
}

void pack_side(Side &s) {
    if (!s.staged)
        return;
    CopyBatch batch;
    for (int i = 0; i < s.nblocks; ++i)
        stage_pack(batch, s.block(i), s.staging.data() + static_cast<size_t>(i) * s.stage_stride);
    batch.wait();
    stats_accelerated(Accel::Collective,
                      static_cast<uint64_t>(s.plan.bytes) * static_cast<uint64_t>(s.nblocks));
}

void unpack_side(int rc, Side &s) {
    if (!s.staged || rc != MPI_SUCCESS)
        return;
    CopyBatch batch;
    for (int i = 0; i < s.nblocks; ++i)
        stage_unpack(batch, s.block(i), s.staging.data() + static_cast<size_t>(i) * s.stage_stride,
                     s.plan.bytes);
    batch.wait();
    stats_accelerated(Accel::Collective,
                      static_cast<uint64_t>(s.plan.bytes) * static_cast<uint64_t>(s.nblocks));
}

int comm_size(MPI_Comm comm) {
    int n = 0;
    if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    return n;
}

bool is_root(MPI_Comm comm, int root) {
    int rank = -1;
    return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

} // namespace
} // namespace kupl_mpi

using namespace kupl_mpi;

extern "C" {

int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Bcast");
    Side s;
    const bool root_here = is_root(comm, root);
    prepare(s, root_here, true, buffer, count, type, 1, comm);
    if (root_here)
        pack_side(s);
    int rc = PMPI_Bcast(s.arg_buf(), s.arg_count(), s.arg_type(), root, comm);
    if (!root_here)
        unpack_side(rc, s);
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Gather");
    const bool root_here = is_root(comm, root);
    Side snd, rcv;
    prepare(snd, true, !(root_here && sendbuf == MPI_IN_PLACE), sendbuf, sendcount, sendtype, 1, comm);
    prepare(rcv, false, root_here && sendbuf != MPI_IN_PLACE, recvbuf, recvcount, recvtype, comm_size(comm),
            comm);
    pack_side(snd);
    int rc = PMPI_Gather(snd.arg_buf(), snd.arg_count(), snd.arg_type(), rcv.arg_buf(), rcv.arg_count(),
                         rcv.arg_type(), root, comm);
    unpack_side(rc, rcv);
    return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Scatter");
    const bool root_here = is_root(comm, root);
    Side snd, rcv;
    prepare(snd, true, root_here && recvbuf != MPI_IN_PLACE, sendbuf, sendcount, sendtype, comm_size(comm),
            comm);
    prepare(rcv, false, !(root_here && recvbuf == MPI_IN_PLACE), recvbuf, recvcount, recvtype, 1, comm);
    pack_side(snd);
    int rc = PMPI_Scatter(snd.arg_buf(), snd.arg_count(), snd.arg_type(), rcv.arg_buf(), rcv.arg_count(),
                          rcv.arg_type(), root, comm);
    unpack_side(rc, rcv);
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    CallTrace trace("MPI_Allgather");
    Side snd, rcv;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (in_place)
        stats_fallback(Fallback::InPlace);
    prepare(snd, true, !in_place, sendbuf, sendcount, sendtype, 1, comm);
    prepare(rcv, false, !in_place, recvbuf, recvcount, recvtype, comm_size(comm), comm);
    pack_side(snd);
    int rc = PMPI_Allgather(snd.arg_buf(), snd.arg_count(), snd.arg_type(), rcv.arg_buf(), rcv.arg_count(),
                            rcv.arg_type(), comm);
    unpack_side(rc, rcv);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    CallTrace trace("MPI_Alltoall");
    Side snd, rcv;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (in_place)
        stats_fallback(Fallback::InPlace);
    const int n = comm_size(comm);
    prepare(snd, true, !in_place, sendbuf, sendcount, sendtype, n, comm);
    prepare(rcv, false, !in_place, recvbuf, recvcount, recvtype, n, comm);
    pack_side(snd);
    int rc = PMPI_Alltoall(snd.arg_buf(), snd.arg_count(), snd.arg_type(), rcv.arg_buf(), rcv.arg_count(),
                           rcv.arg_type(), comm);
    unpack_side(rc, rcv);
    return rc;
}

} // extern "C"
