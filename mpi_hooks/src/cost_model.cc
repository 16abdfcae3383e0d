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
//  - Re-measured for issue 14 with mpi_hooks/bench/cost_probe.c (interposer on and
//    off alternating in one process, KUPL_MPI_FORCE=1, 31 repetitions, medians,
//    host loaded to 12-30 on its 2 cores): MPI_Pack/MPI_Unpack of a grid of
//    4 KiB is 0.64/0.65x for 128 B rows and 0.58/0.58x for 256 B rows (16-32 rows:
//    the call's fixed cost decides), ~0.9-1.14x at 32 KiB; 40-64 B rows 1.07-2.06x,
//    4-24 B rows 2.6-6x. So rows over 64 B stay with Open MPI (before: 256 B), also
//    for MG y-faces (528 B rows: 0.90-0.92x when forced) and NAS LU y (2560 B rows:
//    0.97-0.98x). NAS LU x (40 B rows) 1.01-1.26x, MILC (48 B) 1.58-1.93x stay taken.
//  - Exchanges (both ranks Isend + Irecv + Waitall, benchmarks/mpi realcode_bench, idle
//    host, 2026-12-04, 4 runs): NAS MG x-faces (8 B rows) staged read 1.29-1.36x of plain Open
//    MPI's time at 2 KiB, 1.09-1.30x at 8 KiB and 0.76-0.88x at 32 KiB — while a ping-pong of a
//    4 KiB column (pingpong_bench, same hour) read 0.88x. Pack, send and unpack in series cost
//    more than Open MPI's pipeline once both directions run at once; in doubt, small grids go to
//    Open MPI: point-to-point grids need kP2pMinBytes. A collective's blocks are packed once
//    per call and keep the old rule (their tests and cost_probe runs are behind it).
constexpr MPI_Count kCacheFriendlySpan = MPI_Count(4) << 20;
constexpr size_t kPackMaxWidth = 64;
constexpr size_t kPackMinBytesWidth = 32; // rows wider than this need kPackMinBytesWide bytes
constexpr size_t kPackMinBytesWide = 4096;
constexpr size_t kP2pMaxWidth = 32;
constexpr size_t kP2pMinBytes = size_t(16) << 10;
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

// A grid of several 2D pieces costs a KUPL call per piece. Short pieces make that call the
// cost: MPI_Pack of 1 MiB in pieces of 16 rows (1 rank, on the caller, 2026-12-04) read 520 us
// against Open MPI's 385 for 8 B rows and 192 against 124 for 32 B rows; pieces of 64 rows won
// (210 against 338 for 8 B rows) or tied (122 against 125 for 32 B). NAS MG's x-faces have 66.
constexpr MPI_Count kMinPieceRows = 32;

bool worth_accelerating(Use use, const StridedLayout &message, size_t min_bytes, bool collective_block) {
    const size_t bytes = static_cast<size_t>(message.packed_bytes());
    if (bytes < min_bytes)
        return false;
    if (message.pieces() > 1 && message.piece_rows() < kMinPieceRows)
        return false;
    if (use == Use::Send || use == Use::Recv)
        return config().p2p && message.width <= kP2pMaxWidth && (collective_block || bytes >= kP2pMinBytes) &&
               bytes <= kP2pMaxBytes && span_of(message) <= kP2pMaxSpan;
    // Rows of 40-64 B gain only once the call's fixed cost is spread: 1.07-1.38x at 4 KiB, but
    // 0.94-1.01x (pack) for NAS LU x's 2.5 KiB of 40 B rows.
    if (message.width > kPackMinBytesWidth && bytes < kPackMinBytesWide)
        return bytes >= config().engine_bytes;
    return (message.width <= kPackMaxWidth && span_of(message) <= kCacheFriendlySpan) ||
           bytes >= config().engine_bytes;
}

// Block lists (same cost_probe runs; irregular hindexed_block, blocks permuted over
// twice their bytes, 4 KiB / 32 KiB / 256 KiB): MPI_Pack and MPI_Unpack with the
// width-specialised kernels against Open MPI's one memcpy per block:
//   4 B 4.9-22x, 8 B 3.1-5.9x, 16 B 2.8-5.2x, 24 B 3.1-4.3x, 40 B 2.6-3.1x,
//   48 B 2.0-3.1x, 64 B 1.3-2.3x, 128 B 0.85-1.29x, 256 B 0.62-1.13x, 512 B 0.64-1.14x.
// DDT patterns: SPECFEM3D (6000 single floats) 3.4-4.0x, its 12 B form 3.6-4.3x,
// LAMMPS (2000 atoms of 24 B) 3.6-3.9x, WRF (struct of 4 subarrays, 12 B rows)
// 2.5-3.4x. So blocks averaging up to 64 B are taken, wider ones are not (where in
// doubt, Open MPI). Point to point the message size limit of grids holds (Open MPI's
// two-core pipeline wins on large messages); ping-pong of 32 KiB of irregular 64 B
// blocks measured 1.35x and of 8 B blocks far more (Open MPI pays a convertor step
// per block on both sides), but on a host loaded to 30 on 2 cores, so P2P block lists
// keep the grids' conservative size limits with the pack width limit.
// Collectives (wrap_coll.cc) apply the point-to-point rules to each peer's block. Forced
// MPI_Alltoall of the 2D FFT transpose (cost_probe, 2 ranks, same loaded host) read
// 20-38x for 8-128 KiB per peer and 0.94-0.99x for 512 KiB-2 MiB, but the same run
// with both paths going to Open MPI read anywhere from 0.34x to 28x: multi-rank timings
// on that host do not support moving the limits, so they stay where the quiet-host
// point-to-point measurements put them.
constexpr size_t kBlocksPackMaxWidth = 64;
constexpr size_t kBlocksP2pMaxWidth = 64;

namespace {

// A block list made only of narrow grids (every piece a grid of rows up to kP2pMaxWidth) is, for
// Open MPI's convertor, a set of vectors: point to point it gets the grids' size floor. Measured
// (realcode_bench --full, 5 runs, 2026-12-04): WRF x strips (a struct of five subarrays, 12 B
// rows, 10.7 KiB) staged read 1.07-1.08x of plain Open MPI's exchange time, like the 8 B-row
// MG x-faces behind kP2pMinBytes; the same struct's y strips (64 B rows) read 0.75-0.79x and
// irregular runs (SPECFEM3D, LAMMPS) 0.3-0.7x at 4-17 KiB, so those keep no floor.
bool narrow_grids_only(const BlockLayout &element) {
    for (const BlockPiece &piece : element.pieces)
        if (piece.kind != BlockPiece::Grid || piece.grid.width > kP2pMaxWidth)
            return false;
    return !element.pieces.empty();
}

// Irregular block lists (runs only, no grid piece) point to point: Open MPI's convertor pays a
// step per block on both sides, so staging keeps winning past the grids' 64 KiB — the further,
// the narrower the blocks. Forced (KUPL_MPI_FORCE=1, realcode_bench, 2 runs of 40 rounds, idle
// host, 2026-12-04), staged against plain Open MPI: SPECFEM3D oc (4 B blocks) 0.29x at 32 KB,
// 0.57-0.58x at 160 KB; cm (12 B) 0.70-0.73x at 96 KB, 1.17-1.18x at 480 KB; mt (a struct of
// three lists, 9.7 B on average) 0.81-0.85x at 136 KB there, but 1.05x in two --full runs
// (5 x 100 rounds) with the cap at 192 KiB. Block lists with grid pieces (WRF) lost from 97 KB
// on (1.0-1.5x), like grids, and keep kP2pMaxBytes.
constexpr size_t kRunsP2pMaxBytes = size_t(96) << 10;
constexpr size_t kNarrowRunsWidth = 8;
constexpr size_t kNarrowRunsP2pMaxBytes = size_t(192) << 10;

bool runs_only(const BlockLayout &element) {
    for (const BlockPiece &piece : element.pieces)
        if (piece.kind != BlockPiece::Runs)
            return false;
    return true;
}

size_t p2p_max_bytes(const BlockLayout &element, size_t avg_width, bool collective_block) {
    if (collective_block || !runs_only(element))
        return kP2pMaxBytes;
    return avg_width <= kNarrowRunsWidth ? kNarrowRunsP2pMaxBytes : kRunsP2pMaxBytes;
}

} // namespace

bool worth_accelerating_blocks(Use use, const BlockLayout &element, MPI_Count count, MPI_Aint extent,
                               size_t min_bytes, bool collective_block) {
    const MPI_Count bytes = element.bytes * count;
    if (static_cast<size_t>(bytes) < min_bytes || element.blocks == 0)
        return false;
    const size_t avg_width = static_cast<size_t>(element.bytes / element.blocks);
    const MPI_Count span = (element.hi - element.lo) + (count - 1) * (extent < 0 ? -extent : extent);
    if (use == Use::Send || use == Use::Recv)
        return config().p2p && avg_width <= kBlocksP2pMaxWidth &&
               (collective_block || static_cast<size_t>(bytes) >= kP2pMinBytes ||
                !narrow_grids_only(element)) &&
               static_cast<size_t>(bytes) <= p2p_max_bytes(element, avg_width, collective_block) &&
               span <= kP2pMaxSpan;
    return avg_width <= kBlocksPackMaxWidth && span <= kCacheFriendlySpan;
}

// The v/w collectives (wrap_coll_v.cc) send blocks of unequal length as plain leaves: one
// wire type must serve every peer there, and the two-block type fits one length only. A
// contiguous message beyond vader's eager limit (btl_vader_eager_limit, 4 KiB by default)
// makes ob1 use its single-copy (CMA) get, measured 3-10x slower than the shared-memory
// pipeline that a derived type gets (README, Performance: 32 KiB 4.6-6.5 us against
// 1.5-1.8 us); and a contiguous receive lets a sender's own contiguous message take that
// path where the application's derived receive type kept it in the pipeline. So such
// blocks are staged only while they go eagerly.
constexpr size_t kContiguousBlockMaxBytes = 4096;

bool contiguous_block_pays(size_t bytes) {
    return config().force || bytes <= kContiguousBlockMaxBytes;
}

} // namespace kupl_mpi
