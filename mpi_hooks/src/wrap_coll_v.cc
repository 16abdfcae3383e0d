// The v and w collectives with derived datatypes: MPI_Gatherv, MPI_Scatterv,
// MPI_Allgatherv, MPI_Alltoallv and MPI_Alltoallw. As in wrap_coll.cc each side
// whose blocks the planner accepts is packed into a staging buffer, Open MPI's own
// collective runs on the packed bytes and the received blocks are unpacked; here
// every peer's block has its own count (and, for Alltoallw, type) at its own
// displacement, so one helper (BlockSide) plans, packs and unpacks a side of any
// of them, and the staged call gets new counts, displacements and types.
//
// How staged blocks travel — always as leaves of the application's leaf type, so
// the type signature of every block is the application's and each rank decides
// for itself:
//  * Alltoallw: each block as its own two-block wire type (wire_format.h), count 1;
//  * one type for all blocks (the v variants) whose non-empty blocks all have the
//    same number of leaves: that length's two-block type, count 1 or 0 — what
//    MPI_Alltoall does;
//  * blocks of different lengths share no two-block type: they go as plain leaves,
//    contiguous, which the cost model allows only while Open MPI sends them eagerly
//    (cost_model.cc, contiguous_block_pays);
//  * Allgatherv: the application's counts of a contiguous type of its element's size
//    (see layout_elements), contiguous too, so under the same rule.
// A side is staged whole or not at all: the real call has one buffer and one set of
// int displacements. Empty blocks are skipped.
//
// MPI_IN_PLACE: at the root of Gatherv/Scatterv the root's own block stays where it
// is (it is neither packed nor unpacked, and its staged count is 0); in Allgatherv
// the rank's own block, in Alltoallv/w every block, is packed into the staging
// buffer before the in-place call runs on it, and the received blocks unpacked.
// Intercommunicators and communicators spanning nodes go to Open MPI untouched.
#include "cost_model.h"
#include "node_map.h"
#include "staging_pool.h"
#include "trace.h"
#include "wire_format.h"

#include <mpi.h>

#include <climits>
#include <memory>
#include <new>
#include <vector>

namespace kupl_mpi {
namespace {

/** What the application passed for one side: nblocks blocks, block i counts[i] elements at displs[i]. */
struct BlockArgs {
    const void *buf = nullptr;
    int nblocks = 0;
    const int *counts = nullptr;
    const int *displs = nullptr;           // in extents of type, or bytes when types is set
    MPI_Datatype type = MPI_DATATYPE_NULL; // the v variants: one type
    const MPI_Datatype *types = nullptr;   // Alltoallw: one type per block
    bool per_element = false;              // Allgatherv: keep counts and type size (layout_elements)
};

/** One side, staged or not; when staged, the real call's arguments for it. */
struct BlockSide {
    bool staged = false;
    int skip = -1; // a block left where it is (the root's own block in place)
    StagingBuffer staging;
    std::vector<Plan> plans; // per block; bytes == 0: nothing to copy
    std::vector<size_t> offsets;
    std::vector<int> counts, displs;
    std::vector<MPI_Datatype> types; // Alltoallw
    std::vector<std::shared_ptr<const MPI_Datatype>> owners;
    MPI_Datatype wire = MPI_DATATYPE_NULL;    // the v variants
    MPI_Datatype element = MPI_DATATYPE_NULL; // a type of our own (layout_elements), freed with the side
    uint64_t bytes = 0;

    BlockSide() = default;
    BlockSide(const BlockSide &) = delete;
    BlockSide &operator=(const BlockSide &) = delete;
    ~BlockSide() {
        if (element != MPI_DATATYPE_NULL)
            PMPI_Type_free(&element);
    }

    void *buf(const void *user) const { return staged ? staging.data() : const_cast<void *>(user); }
    const int *counts_arg(const int *user) const { return staged ? counts.data() : user; }
    const int *displs_arg(const int *user) const { return staged ? displs.data() : user; }
    int count_arg(int user) const { return staged ? counts[0] : user; }
    MPI_Datatype type_arg(MPI_Datatype user) const { return staged ? wire : user; }
    const MPI_Datatype *types_arg(const MPI_Datatype *user) const { return staged ? types.data() : user; }
};

/** Communicator checks shared by all blocks: on this node, not an intercommunicator. */
bool comm_ok(MPI_Comm comm, int *rank) {
    // MPI_COMM_NULL: the real call reports it (asking its rank would raise the error here).
    if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, rank) != MPI_SUCCESS)
        return false;
    Fallback why = Fallback::BadArgument;
    if (!peer_on_node(comm, MPI_ANY_SOURCE, &why)) {
        stats_fallback(why == Fallback::AnySourceOffNode ? Fallback::CollMultiNode : why);
        return false;
    }
    return true;
}

/** Plans every block; the wire layout is chosen once they are all known. False: Open MPI's. */
bool plan_blocks(BlockSide &s, bool sending, const BlockArgs &a, MPI_Comm comm, int rank) {
    const Use use = sending ? Use::Send : Use::Recv;
    MPI_Aint lb = 0, extent = 0;
    if (!a.types && PMPI_Type_get_extent(a.type, &lb, &extent) != MPI_SUCCESS)
        return false; // MPI_DATATYPE_NULL and the like: Open MPI reports it
    for (int i = 0; i < a.nblocks; ++i) {
        if (i == s.skip || a.counts[i] == 0)
            continue;
        const MPI_Datatype type = a.types ? a.types[i] : a.type;
        const MPI_Aint at = a.types ? a.displs[i] : static_cast<MPI_Aint>(a.displs[i]) * extent;
        Fallback why = Fallback::BadArgument;
        if (!plan(use, static_cast<const char *>(a.buf) + at, a.counts[i], type, comm, rank, &s.plans[i],
                  &why, true)) {
            stats_fallback(why);
            return false;
        }
        s.bytes += s.plans[i].bytes;
    }
    if (s.bytes == 0) {
        stats_fallback(Fallback::ZeroCount);
        return false;
    }
    return true;
}

/** Two-block wire type of block i's leaves (count 1), or its plain leaves. */
void wire_of_block(BlockSide &s, int i) {
    Plan &p = s.plans[i];
    const int leaves = p.wire_count;
    if (leaves >= 2 && (s.owners[i] = gapped_wire_type(p.wire_type, leaves))) {
        p.gap = p.bytes / static_cast<size_t>(leaves);
        s.types[i] = *s.owners[i];
        s.counts[i] = 1;
    } else {
        s.types[i] = p.wire_type;
        s.counts[i] = leaves;
    }
}

/** Alltoallw: every block its own wire type; displacements in bytes. */
bool layout_typed(BlockSide &s, const BlockArgs &a) {
    size_t at = 0;
    for (int i = 0; i < a.nblocks; ++i) {
        s.offsets[i] = at;
        s.displs[i] = 0;
        if (s.plans[i].bytes == 0) { // an empty (or skipped) block keeps the application's arguments
            s.types[i] = a.types[i];
            s.counts[i] = i == s.skip ? 0 : a.counts[i];
            continue;
        }
        wire_of_block(s, i);
        if (at > static_cast<size_t>(INT_MAX)) {
            stats_fallback(Fallback::TooLarge);
            return false;
        }
        s.displs[i] = static_cast<int>(at);
        at += staging_size(s.plans[i]);
    }
    s.staging = StagingBuffer(at);
    return true;
}

/** The v variants: one wire type for all blocks; displacements in its extents. */
bool layout_shared(BlockSide &s, const BlockArgs &a) {
    int leaves = -1; // of every non-empty block, if they agree
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    for (int i = 0; i < a.nblocks; ++i) {
        const Plan &p = s.plans[i];
        if (p.bytes == 0)
            continue;
        leaf = p.wire_type;
        leaves = leaves == -1 || leaves == p.wire_count ? p.wire_count : -2;
    }
    std::shared_ptr<const MPI_Datatype> gapped;
    if (leaves >= 2)
        gapped = gapped_wire_type(leaf, leaves); // null (no memory): plain leaves below
    s.wire = gapped ? *gapped : leaf;
    if (gapped)
        s.owners[0] = gapped;
    size_t at = 0;
    MPI_Count unit = 0; // displacement of the next block, in wire extents
    for (int i = 0; i < a.nblocks; ++i) {
        Plan &p = s.plans[i];
        s.offsets[i] = at;
        s.counts[i] = 0;
        s.displs[i] = unit > INT_MAX ? INT_MAX : static_cast<int>(unit);
        if (p.bytes == 0)
            continue;
        if (gapped) {
            p.gap = p.bytes / static_cast<size_t>(p.wire_count);
            s.counts[i] = 1;
            unit += 1;
        } else {
            if (!contiguous_block_pays(p.bytes)) {
                stats_fallback(Fallback::CostModel);
                return false;
            }
            s.counts[i] = p.wire_count;
            unit += p.wire_count;
        }
        at += staging_size(p);
    }
    if (unit > INT_MAX) {
        stats_fallback(Fallback::TooLarge);
        return false;
    }
    s.staging = StagingBuffer(at);
    return true;
}

/**
 * Allgatherv: Open MPI 4.1's tuned component picks the algorithm from the send type's
 * size (the receive type's in place) times the sum of the receive counts — a figure
 * that is not a property of the type signature, and every rank must come to the
 * same choice (a rank that picked another algorithm waits forever: seen with 3
 * ranks). So the staged call keeps the application's counts and, as its type, a
 * contiguous type of as many leaves as the application's element: the same size,
 * and blocks (contiguous, so under contiguous_block_pays) of the same signature.
 */
bool layout_elements(BlockSide &s, const BlockArgs &a) {
    int per = 0;
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    for (int i = 0; i < a.nblocks && !per; ++i)
        if (s.plans[i].bytes) {
            per = s.plans[i].wire_count / a.counts[i];
            leaf = s.plans[i].wire_type;
        }
    s.wire = leaf;
    if (per >= 2) {
        if (PMPI_Type_contiguous(per, leaf, &s.element) != MPI_SUCCESS ||
            PMPI_Type_commit(&s.element) != MPI_SUCCESS) {
            stats_fallback(Fallback::NoMemory);
            return false;
        }
        s.wire = s.element;
    }
    size_t at = 0;
    MPI_Count unit = 0; // displacement of the next block, in elements
    for (int i = 0; i < a.nblocks; ++i) {
        const Plan &p = s.plans[i];
        s.offsets[i] = at;
        s.counts[i] = 0;
        s.displs[i] = unit > INT_MAX ? INT_MAX : static_cast<int>(unit);
        if (p.bytes == 0)
            continue;
        if (!contiguous_block_pays(p.bytes)) {
            stats_fallback(Fallback::CostModel);
            return false;
        }
        s.counts[i] = a.counts[i];
        unit += a.counts[i];
        at += p.bytes;
    }
    if (unit > INT_MAX) {
        stats_fallback(Fallback::TooLarge);
        return false;
    }
    s.staging = StagingBuffer(at);
    return true;
}

/**
 * Prepares one side: significant says whether this rank uses it at all (arguments a
 * rank does not use are never looked at); skip is a block to leave where it is.
 */
void prepare(BlockSide &s, bool sending, bool significant, const BlockArgs &a, MPI_Comm comm, int skip = -1) {
    if (!significant)
        return;
    if (a.buf == MPI_IN_PLACE) {
        stats_fallback(Fallback::InPlace);
        return;
    }
    int rank = 0;
    if (a.nblocks <= 0 || !comm_ok(comm, &rank))
        return;
    s.skip = skip;
    try {
        s.plans.resize(static_cast<size_t>(a.nblocks));
        s.offsets.resize(static_cast<size_t>(a.nblocks));
        s.counts.resize(static_cast<size_t>(a.nblocks));
        s.displs.resize(static_cast<size_t>(a.nblocks));
        s.owners.resize(static_cast<size_t>(a.nblocks));
        if (a.types)
            s.types.resize(static_cast<size_t>(a.nblocks));
    } catch (const std::bad_alloc &) {
        stats_fallback(Fallback::NoMemory);
        return;
    }
    if (!plan_blocks(s, sending, a, comm, rank))
        return;
    if (!(a.types ? layout_typed(s, a) : a.per_element ? layout_elements(s, a) : layout_shared(s, a)))
        return;
    if (!s.staging) {
        stats_fallback(Fallback::NoMemory);
        return;
    }
    s.staged = true;
}

/** Packs the side's blocks (all of them, or only block `only`). */
void pack(BlockSide &s, int only = -1) {
    if (!s.staged)
        return;
    CopyBatch batch;
    uint64_t bytes = 0;
    for (size_t i = 0; i < s.plans.size(); ++i)
        if (s.plans[i].bytes && (only < 0 || static_cast<int>(i) == only)) {
            stage_pack(batch, s.plans[i], s.staging.data() + s.offsets[i]);
            bytes += s.plans[i].bytes;
        }
    batch.wait();
    if (bytes)
        stats_accelerated(Accel::Collective, bytes);
}

/** Unpacks the received blocks, except block `except`. */
void unpack(int rc, BlockSide &s, int except = -1) {
    if (!s.staged || rc != MPI_SUCCESS)
        return;
    CopyBatch batch;
    uint64_t bytes = 0;
    for (size_t i = 0; i < s.plans.size(); ++i)
        if (s.plans[i].bytes && static_cast<int>(i) != except) {
            stage_unpack(batch, s.plans[i], s.staging.data() + s.offsets[i], s.plans[i].bytes);
            bytes += s.plans[i].bytes;
        }
    batch.wait();
    if (bytes)
        stats_accelerated(Accel::Collective, bytes);
}

int comm_size(MPI_Comm comm) {
    int n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    return n;
}

int comm_rank(MPI_Comm comm) {
    int rank = -1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return -1;
    return rank;
}

bool is_inter(MPI_Comm comm) {
    int inter = 0;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
}

const int kZero = 0;

/** A single block: (buf, count, type) as a side of one block. */
BlockArgs one_block(const void *buf, const int &count, MPI_Datatype type) {
    return BlockArgs{buf, 1, &count, &kZero, type, nullptr};
}

} // namespace
} // namespace kupl_mpi

using namespace kupl_mpi;

extern "C" {

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Gatherv");
    const int rank = comm_rank(comm);
    const bool root_here = rank == root && !is_inter(comm);
    const bool in_place = root_here && sendbuf == MPI_IN_PLACE;
    BlockSide snd, rcv;
    prepare(snd, true, !in_place, one_block(sendbuf, sendcount, sendtype), comm);
    prepare(rcv, false, root_here, BlockArgs{recvbuf, comm_size(comm), recvcounts, displs, recvtype, nullptr},
            comm, in_place ? rank : -1);
    pack(snd);
    int rc =
        PMPI_Gatherv(snd.buf(sendbuf), snd.count_arg(sendcount), snd.type_arg(sendtype), rcv.buf(recvbuf),
                     rcv.counts_arg(recvcounts), rcv.displs_arg(displs), rcv.type_arg(recvtype), root, comm);
    unpack(rc, rcv);
    return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Scatterv");
    const int rank = comm_rank(comm);
    const bool root_here = rank == root && !is_inter(comm);
    const bool in_place = root_here && recvbuf == MPI_IN_PLACE;
    BlockSide snd, rcv;
    prepare(snd, true, root_here, BlockArgs{sendbuf, comm_size(comm), sendcounts, displs, sendtype, nullptr},
            comm, in_place ? rank : -1);
    prepare(rcv, false, !in_place, one_block(recvbuf, recvcount, recvtype), comm);
    pack(snd);
    int rc = PMPI_Scatterv(snd.buf(sendbuf), snd.counts_arg(sendcounts), snd.displs_arg(displs),
                           snd.type_arg(sendtype), rcv.buf(recvbuf), rcv.count_arg(recvcount),
                           rcv.type_arg(recvtype), root, comm);
    unpack(rc, rcv);
    return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    CallTrace trace("MPI_Allgatherv");
    const bool in_place = sendbuf == MPI_IN_PLACE;
    BlockSide snd, rcv;
    BlockArgs send_args = one_block(sendbuf, sendcount, sendtype);
    send_args.per_element = true;
    prepare(snd, true, !in_place, send_args, comm);
    prepare(rcv, false, true,
            BlockArgs{recvbuf, comm_size(comm), recvcounts, displs, recvtype, nullptr, true}, comm);
    // In place, this rank's block is its contribution: it goes from the staging buffer.
    const int own = in_place ? comm_rank(comm) : -1;
    if (in_place)
        pack(rcv, own);
    pack(snd);
    int rc = PMPI_Allgatherv(in_place ? sendbuf : snd.buf(sendbuf), snd.count_arg(sendcount),
                             snd.type_arg(sendtype), rcv.buf(recvbuf), rcv.counts_arg(recvcounts),
                             rcv.displs_arg(displs), rcv.type_arg(recvtype), comm);
    unpack(rc, rcv, own);
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm) {
    CallTrace trace("MPI_Alltoallv");
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const int n = comm_size(comm);
    BlockSide snd, rcv;
    prepare(snd, true, !in_place, BlockArgs{sendbuf, n, sendcounts, sdispls, sendtype, nullptr}, comm);
    prepare(rcv, false, true, BlockArgs{recvbuf, n, recvcounts, rdispls, recvtype, nullptr}, comm);
    if (in_place) // the data to send is in the receive blocks: they go from the staging buffer
        pack(rcv);
    pack(snd);
    int rc =
        PMPI_Alltoallv(in_place ? sendbuf : snd.buf(sendbuf), snd.counts_arg(sendcounts),
                       snd.displs_arg(sdispls), snd.type_arg(sendtype), rcv.buf(recvbuf),
                       rcv.counts_arg(recvcounts), rcv.displs_arg(rdispls), rcv.type_arg(recvtype), comm);
    unpack(rc, rcv);
    return rc;
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
    CallTrace trace("MPI_Alltoallw");
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const int n = comm_size(comm);
    BlockSide snd, rcv;
    prepare(snd, true, !in_place, BlockArgs{sendbuf, n, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes},
            comm);
    prepare(rcv, false, true, BlockArgs{recvbuf, n, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes}, comm);
    if (in_place)
        pack(rcv);
    pack(snd);
    int rc =
        PMPI_Alltoallw(in_place ? sendbuf : snd.buf(sendbuf), snd.counts_arg(sendcounts),
                       snd.displs_arg(sdispls), snd.types_arg(sendtypes), rcv.buf(recvbuf),
                       rcv.counts_arg(recvcounts), rcv.displs_arg(rdispls), rcv.types_arg(recvtypes), comm);
    unpack(rc, rcv);
    return rc;
}

} // extern "C"
