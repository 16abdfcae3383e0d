// Block lists: the canonical layout of a datatype that is not one grid —
// indexed, hindexed, indexed_block, hindexed_block and struct types, nested in
// vectors, subarrays, resized and dup types to any depth. Computed once at
// commit (type_layout.cc). The typemap becomes a sequence of pieces in typemap
// order: grids (copied with KUPL's 2D row kernels) and lists of runs of equal
// blocks (copied by a kernel specialised for the block width, chosen at commit).
// A run is `count` blocks `stride` bytes apart, so regular stretches of an
// indexed type cost one entry, not one per block (run-length offsets).
#pragma once

#include "strided_layout.h"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace kupl_mpi {

/** count blocks of the piece's width at offset + i * stride (stride may be negative or zero). */
struct BlockRun {
    MPI_Aint offset;
    MPI_Aint stride;
    MPI_Count count;
};

using GatherFn = char *(*)(char *out, const char *base, const BlockRun *runs, size_t nruns, size_t width);
using ScatterFn = const char *(*)(const char *in, char *base, const BlockRun *runs, size_t nruns,
                                  size_t width);

struct BlockPiece {
    enum Kind { Runs, Grid } kind = Runs;
    StridedLayout grid;              // Grid: positive strides, copied 2D piece by 2D piece with kupl_memcpy2d
    size_t width = 0;                // Runs: bytes of every block
    size_t first_run = 0, nruns = 0; // Runs: BlockLayout::runs[first_run, first_run + nruns)
    GatherFn gather = nullptr;       // Runs: chosen by width
    ScatterFn scatter = nullptr;
    MPI_Count bytes = 0; // packed bytes of the piece
};

struct BlockLayout {
    std::vector<BlockPiece> pieces;
    std::vector<BlockRun> runs;
    MPI_Count bytes = 0;     // packed bytes of one element
    MPI_Count blocks = 0;    // contiguous blocks of one element
    MPI_Aint lo = 0, hi = 0; // the element touches bytes [lo, hi) of its buffer
    bool disjoint = false;   // proven: no byte belongs to two blocks of one element
};

/**
 * Copies count blocks of width bytes from src (src_stride apart) to dst
 * (dst_stride apart), with the kernel specialised for width.
 */
void copy_strided(char *dst, MPI_Aint dst_stride, const char *src, MPI_Aint src_stride, MPI_Count count,
                  size_t width);

/** Kernels for a block width: specialised for common widths, memcpy otherwise. */
GatherFn gather_kernel(size_t width);
ScatterFn scatter_kernel(size_t width);

/**
 * Packs count elements (extent bytes apart) of l at base into out, in typemap
 * order, on the calling thread.
 */
void blocks_pack(const BlockLayout &l, const char *base, MPI_Count count, MPI_Aint extent, char *out);
/** Unpacks the first bytes bytes of in into count elements of l at base (a truncated message stops early). */
void blocks_unpack(const BlockLayout &l, const char *in, size_t bytes, char *base, MPI_Count count,
                   MPI_Aint extent);

} // namespace kupl_mpi
