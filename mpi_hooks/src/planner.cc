#include "planner.h"

#include "config.h"
#include "cost_model.h"
#include "node_map.h"
#include "type_cache.h"

#include <climits>

namespace kupl_mpi {

bool plan(Use use, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, int peer, Plan *out,
          Fallback *why) {
    if (config().disabled) {
        *why = Fallback::Disabled;
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
    if ((use == Use::Send || use == Use::Recv) && !peer_on_node(comm, peer, why))
        return false;
    if (!config().force && !worth_accelerating(use, l, config().min_bytes)) {
        *why = Fallback::CostModel;
        return false;
    }
    out->where.layout = l;
    out->where.base = buf;
    out->wire_type = l.leaf;
    out->wire_count = static_cast<int>(leaves);
    out->bytes = static_cast<size_t>(bytes);
    return true;
}

} // namespace kupl_mpi
