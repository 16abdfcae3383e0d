#include "cost_model.h"

#include "config.h"

namespace kupl_mpi {
namespace {

// Figures behind the rules (2-vCPU Zen 5 VM, Open MPI 4.1.4 vader, medians; see
// benchmarks/mpi and mpi_hooks/README.md):
//  - MPI_Pack of layouts that stay in the caches (span <= a few MiB): kupl's row
//    kernels beat Open MPI's convertor: 2.2x for a 512-row column, 1.1-1.6x for
//    64 B blocks, 1.2-1.3x for 512 B blocks.
//  - Layouts spread over large matrices (span >> the caches) are bound by a cache
//    and TLB miss per row; there kupl_memcpy2d is 0.6-0.85x of Open MPI for rows
//    under 512 B, about even for 512 B rows, and only wins (1.2-1.5x) when the copy is
//    big enough to split across KUPL's channels with a core to spare.
//  - Point to point: staging (pack, contiguous send, unpack) is at best even with
//    Open MPI's own pipeline on one node (halo exchange: 0.97-1.04x of hand-packing
//    and of Open MPI), and ping-pong is 0.5-0.9x, so messages stay with Open MPI
//    unless KUPL_MPI_P2P=1 asks for staging.
constexpr MPI_Count kCacheFriendlySpan = MPI_Count(4) << 20;

/** Bytes between the first and the last byte the layout touches. */
MPI_Count span_of(const StridedLayout &l) {
    MPI_Count span = static_cast<MPI_Count>(l.width);
    for (int k = l.ndims - 1; k >= 0; --k)
        span += (l.dims[k].count - 1) * l.dims[k].stride;
    return span;
}

} // namespace

bool worth_accelerating(Use use, const StridedLayout &message, size_t min_bytes) {
    const size_t bytes = static_cast<size_t>(message.packed_bytes());
    if (bytes < min_bytes)
        return false;
    if ((use == Use::Send || use == Use::Recv) && !config().p2p)
        return false;
    return span_of(message) <= kCacheFriendlySpan || bytes >= config().engine_bytes;
}

} // namespace kupl_mpi
