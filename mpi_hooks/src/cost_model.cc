#include "cost_model.h"

#include "config.h"

namespace kupl_mpi {
namespace {

// Figures behind the rules (2-vCPU Zen 5 VM, Open MPI 4.1.4 vader, medians; see
// benchmarks/mpi and mpi_hooks/README.md):
//  - MPI_Pack of layouts that stay in the caches (span <= a few MiB): kupl's row
//    kernels beat Open MPI's convertor: 2.2-3.4x for a 512-row column, 1.1-1.6x
//    for 64 B blocks. From 512 B blocks on both copy at the caches' bandwidth and
//    the call's fixed cost decides: 0.91-1.12x for 512 B (pack 0.91-0.95x in four
//    of five quiet runs), 0.90-1.06x for 1 KiB rows, so those stay with Open MPI.
//  - Layouts spread over large matrices (span >> the caches) are bound by a cache
//    and TLB miss per row; there kupl_memcpy2d is 0.6-0.85x of Open MPI for rows
//    under 512 B, about even for 512 B rows, and only wins (up to 1.4x) when the
//    copy is big enough to split across KUPL's channels with a core to spare.
//  - Point to point (pack, send as a two-block wire type, unpack): narrow rows win
//    while the grid stays near the caches — ping-pong of 8 B columns 1.2-1.4x for
//    1-16 KiB, halo exchanges 0.88-0.97x of Open MPI's time for 8 B and 32 B rows.
//    Rows of 64 B and more lose (0.3-0.95x): Open MPI's convertor is already
//    memcpy-bound there and its two-core pipeline beats pack-send-unpack; so do
//    grids spread over more than ~12 MiB (0.05-0.35x: a TLB miss per row, paid
//    twice) and messages over 64 KiB.
constexpr MPI_Count kCacheFriendlySpan = MPI_Count(4) << 20;
constexpr size_t kPackMaxWidth = 256;
constexpr size_t kP2pMaxWidth = 32;
constexpr size_t kP2pMaxBytes = size_t(64) << 10;
constexpr MPI_Count kP2pMaxSpan = MPI_Count(12) << 20;

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
    if (use == Use::Send || use == Use::Recv)
        return config().p2p && message.width <= kP2pMaxWidth && bytes <= kP2pMaxBytes &&
               span_of(message) <= kP2pMaxSpan;
    return (message.width <= kPackMaxWidth && span_of(message) <= kCacheFriendlySpan) ||
           bytes >= config().engine_bytes;
}

// Block lists (provisional, see the measurements below).
constexpr size_t kBlocksPackMaxWidth = 256;
constexpr size_t kBlocksP2pMaxWidth = 32;

bool worth_accelerating_blocks(Use use, const BlockLayout &element, MPI_Count count, MPI_Aint extent,
                               size_t min_bytes) {
    const MPI_Count bytes = element.bytes * count;
    if (static_cast<size_t>(bytes) < min_bytes || element.blocks == 0)
        return false;
    const size_t avg_width = static_cast<size_t>(element.bytes / element.blocks);
    const MPI_Count span = (element.hi - element.lo) + (count - 1) * (extent < 0 ? -extent : extent);
    if (use == Use::Send || use == Use::Recv)
        return config().p2p && avg_width <= kBlocksP2pMaxWidth &&
               static_cast<size_t>(bytes) <= kP2pMaxBytes && span <= kP2pMaxSpan;
    return avg_width <= kBlocksPackMaxWidth && span <= kCacheFriendlySpan;
}

} // namespace kupl_mpi
