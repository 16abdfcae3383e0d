#include "planner.h"

#include "config.h"
#include "control.h"
#include "cost_model.h"
#include "node_map.h"
#include "type_cache.h"
#include "wire_format.h"

#include "kupl_api.h"

#include <climits>
#include <type_traits>

namespace kupl_mpi {

namespace {

/**
 * Hand a copy to KUPL's channel threads only when it is large and this node has a
 * core no rank runs on: with every core busy with a rank, a hand-off just waits for
 * a thread that competes with a rank (measured: 4x slower than copying here). Its 2D
 * pieces must be large too: the channels gain by splitting a piece between them, and
 * pieces below kEnginePieceBytes run one after another anyway, each with an engine
 * operation's cost (MPI_Pack of 4 MiB of 1 KiB rows, 1 rank, 2026-12-04: 16-row pieces
 * 501-564 us through the engine against 389 us in Open MPI, 64-row pieces 410-437
 * against 396; 4096-row pieces of 1 KiB 1702 against 1957 us, of 64 B 459 against 550).
 */
constexpr size_t kEnginePieceBytes = size_t(256) << 10;

bool use_engine(size_t bytes, size_t piece_bytes) {
    static const bool spare_core = [] {
#ifdef KUPLX_AVAILABLE
        kuplx_engine_info_t info;
        return kuplx_get_engine_info(&info) == KUPL_OK && ranks_on_node() < info.num_cores;
#else
        return false;
#endif
    }();
    return bytes >= config().engine_bytes && piece_bytes >= kEnginePieceBytes && spare_core;
}

} // namespace

namespace {

/**
 * This thread's last decisions to leave a (type, count, use, collective block or
 * not) to Open MPI for a reason of the type or the cost model. Programs repeat
 * their calls, and without
 * it a call that falls back paid the lookup and the planning again each time
 * (30-40 ns: 0.86-0.94x of Open MPI on MPI_Pack of a 34 KiB plane or of 528 B
 * rows, measured with cost_probe). Several entries, because an exchange
 * alternates at least a send and a receive, and a halo several types: with one
 * entry each call evicted the other's. Caching a fallback is always safe: at
 * worst a call goes to Open MPI. Valid while the type cache is unchanged.
 */
struct Fallen {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int count = -1;
    Use use = Use::Pack;
    bool coll_block = false;
    uint64_t generation = 0;
    Fallback why = Fallback::CostModel;

    bool matches(MPI_Datatype t, int c, Use u, bool cb, uint64_t g) const {
        return type == t && count == c && use == u && coll_block == cb && generation == g;
    }
};

class FallbackCache {
  public:
    const Fallen *find(MPI_Datatype type, int count, Use use, bool coll_block, uint64_t generation) const {
        for (const Fallen &f : entries_)
            if (f.matches(type, count, use, coll_block, generation))
                return &f;
        return nullptr;
    }
    void remember(const Fallen &f) { // the oldest entry makes room
        entries_[next_] = f;
        next_ = (next_ + 1) % kEntries;
    }

  private:
    static constexpr unsigned kEntries = 8;
    Fallen entries_[kEntries];
    unsigned next_ = 0;
};
// Initial-exec: the library is preloaded or linked, never dlopen'ed (it could not interpose
// then), so its thread-locals sit in the static TLS block and are reached without a
// __tls_get_addr call. On the fallback path that call showed: pass-through exchanges of
// 2-10 us read 1.01-1.02x of the interposer switched off (realcode_bench NAS LU x, MG y/z,
// MILC; 5 of 16 judged slower beyond the A/A noise), 1.00-1.01x with it (1 of 32).
__attribute__((tls_model("initial-exec"))) thread_local FallbackCache t_fallbacks;
// No destructor: glibc aborts a thread whose first use of a thread_local with one finds no memory
// (see LastHit in type_cache.cc).
static_assert(std::is_trivially_destructible<FallbackCache>::value, "see above");

bool plan_uncached(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer,
                   Plan *out, Fallback *why, bool *cacheable, bool coll_block);

} // namespace

bool plan(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer, Plan *out,
          Fallback *why, bool coll_block) {
    const uint64_t generation = type_cache_generation();
    if (!config().disabled && switched_on().load(std::memory_order_relaxed)) {
        if (const Fallen *known = t_fallbacks.find(datatype, count, use, coll_block, generation)) {
            *why = known->why;
            return false;
        }
    }
    bool cacheable = false;
    if (plan_uncached(use, buf, count, datatype, comm, peer, out, why, &cacheable, coll_block))
        return true;
    if (cacheable)
        t_fallbacks.remember({datatype, count, use, coll_block, generation, *why});
    return false;
}

namespace {

bool plan_uncached(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer,
                   Plan *out, Fallback *why, bool *cacheable, bool coll_block) {
    if (config().disabled) {
        *why = Fallback::Disabled;
        return false;
    }
    if (!switched_on().load(std::memory_order_relaxed)) {
        *why = Fallback::SwitchedOff;
        return false;
    }
    if (count < 0 || datatype == MPI_DATATYPE_NULL) {
        *why = Fallback::BadArgument;
        return false;
    }
    if (count == 0) {
        *why = Fallback::ZeroCount;
        return false;
    }
    TypeInfo info;
    if (!type_cache_find(datatype, &info)) {
        *why = Fallback::NotCommitted;
        return false;
    }
    *cacheable = true; // from here on every fallback depends only on (type, count, use) and the settings
    const bool p2p = use == Use::Send || use == Use::Recv;
    const Use cost_use = use == Use::MatchedRecv ? Use::Unpack : use;
    const bool writes = use == Use::Unpack || use == Use::Recv || use == Use::MatchedRecv;
    switch (info.verdict) {
    case TypeVerdict::Strided:
    case TypeVerdict::Contiguous:
    case TypeVerdict::Blocks:
        break;
    case TypeVerdict::NotDenseLeaf:
        *why = Fallback::TypeLeafHoles;
        return false;
    case TypeVerdict::TooManyBlocks:
        *why = Fallback::TypeTooManyBlocks;
        return false;
    case TypeVerdict::Empty:
        *why = Fallback::TypeEmpty;
        return false;
    default:
        *why = Fallback::TypeUnsupported;
        return false;
    }
    // A staged message travels as leaves of one predefined type (wire_format.h).
    if ((p2p || use == Use::MatchedRecv) && info.leaf == MPI_DATATYPE_NULL) {
        *why = Fallback::MixedLeaves;
        return false;
    }
    out->where = Placement{};
    out->where.base = buf;
    MPI_Count bytes = 0;
    if (info.verdict == TypeVerdict::Blocks) {
        const BlockLayout &b = *info.blocks;
        // Repetitions apart (extent beyond the element's span) keep the element's disjointness.
        const bool disjoint = b.disjoint && (count == 1 || info.extent >= b.hi - b.lo);
        if (writes && !disjoint) {
            *why = Fallback::Overlapping;
            return false;
        }
        bytes = b.bytes * count;
        if (!config().force &&
            !worth_accelerating_blocks(cost_use, b, count, info.extent, config().min_bytes, coll_block)) {
            *why = Fallback::CostModel;
            return false;
        }
        out->where.blocks = info.blocks;
        out->where.count = count;
        out->where.extent = info.extent;
    } else {
        StridedLayout l = info.layout;
        if (count > 1 && !l.repeat(count, info.extent)) {
            *why = Fallback::TypeUnsupported; // deeper than kMaxDims
            return false;
        }
        if (l.ndims == 0) {
            *why = Fallback::Contiguous;
            return false;
        }
        if (!l.strides_positive()) {
            *why = Fallback::NotMonotonic;
            return false;
        }
        if (writes && !l.is_disjoint()) {
            *why = Fallback::Overlapping;
            return false;
        }
        bytes = l.packed_bytes();
        // The cost model first: it is cheaper than the communicator lookup.
        if (!config().force && !worth_accelerating(cost_use, l, config().min_bytes, coll_block)) {
            *why = Fallback::CostModel;
            return false;
        }
        out->where.layout = l;
    }
    const MPI_Count leaves = info.leaf_size ? bytes / static_cast<MPI_Count>(info.leaf_size) : bytes;
    if (leaves > INT_MAX) {
        *why = Fallback::TooLarge;
        return false;
    }
    if (p2p && !coll_block && !peer_on_node(comm, peer, why)) {
        *cacheable = false; // depends on the peer
        return false;
    }
    out->where.on_caller =
        info.verdict == TypeVerdict::Blocks ||
        !use_engine(static_cast<size_t>(bytes),
                    static_cast<size_t>(out->where.layout.piece_rows()) * out->where.layout.width);
    out->wire_type = info.leaf;
    out->wire_count = static_cast<int>(leaves);
    out->bytes = static_cast<size_t>(bytes);
    out->gap = 0;
    out->wire_owner.reset();
    if (p2p && !coll_block && leaves >= 2) {
        // Without it (no memory) the message travels as plain leaves, which is still right.
        if ((out->wire_owner = gapped_wire_type(info.leaf, static_cast<int>(leaves)))) {
            out->wire_type = *out->wire_owner;
            out->wire_count = 1;
            out->gap = info.leaf_size;
        }
    }
    return true;
}

} // namespace
} // namespace kupl_mpi
