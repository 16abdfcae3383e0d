#include "planner.h"

#include "config.h"
#include "control.h"
#include "cost_model.h"
#include "node_map.h"
#include "type_cache.h"
#include "wire_format.h"

#include "kupl_api.h"

#include <climits>

namespace kupl_mpi {

namespace {

/**
 * Hand a copy to KUPL's channel threads only when it is large and this node has a
 * core no rank runs on: with every core busy with a rank, a hand-off just waits for
 * a thread that competes with a rank (measured: 4x slower than copying here).
 */
bool use_engine(size_t bytes) {
    static const bool spare_core = [] {
#ifdef KUPLX_AVAILABLE
        kuplx_engine_info_t info;
        return kuplx_get_engine_info(&info) == KUPL_OK && ranks_on_node() < info.num_cores;
#else
        return false;
#endif
    }();
    return bytes >= config().engine_bytes && spare_core;
}

} // namespace

bool plan(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer, Plan *out,
          Fallback *why) {
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
    if (info.verdict != TypeVerdict::Strided && info.verdict != TypeVerdict::Contiguous) {
        *why = Fallback::TypeNotStrided;
        return false;
    }
    StridedLayout l = info.layout;
    if (count > 1 && !l.repeat(count, info.extent)) {
        *why = Fallback::TypeNotStrided;
        return false;
    }
    if (!l.is_monotonic()) {
        *why = Fallback::TypeNotStrided;
        return false;
    }
    if (l.ndims == 0) {
        *why = Fallback::Contiguous;
        return false;
    }
    const MPI_Count bytes = l.packed_bytes();
    const MPI_Count leaves = bytes / static_cast<MPI_Count>(l.leaf_size);
    if (leaves > INT_MAX) {
        *why = Fallback::TooLarge;
        return false;
    }
    // The cost model first: it is cheaper than the communicator lookup.
    if (!config().force && !worth_accelerating(use, l, config().min_bytes)) {
        *why = Fallback::CostModel;
        return false;
    }
    if ((use == Use::Send || use == Use::Recv) && !peer_on_node(comm, peer, why))
        return false;
    out->where.layout = l;
    out->where.base = buf;
    out->where.on_caller = !use_engine(static_cast<size_t>(bytes));
    out->wire_type = l.leaf;
    out->wire_count = static_cast<int>(leaves);
    out->bytes = static_cast<size_t>(bytes);
    out->gap = 0;
    out->wire_owner.reset();
    if ((use == Use::Send || use == Use::Recv) && leaves >= 2) {
        // Without it (no memory) the message travels as plain leaves, which is still right.
        if ((out->wire_owner = gapped_wire_type(l.leaf, static_cast<int>(leaves)))) {
            out->wire_type = *out->wire_owner;
            out->wire_count = 1;
            out->gap = l.leaf_size;
        }
    }
    return true;
}

} // namespace kupl_mpi
