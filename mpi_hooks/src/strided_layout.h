// Strided layouts: what a datatype looks like in memory when it is a regular
// grid of equal contiguous blocks (vector, hvector, subarray, resized, ...).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace kupl_mpi {

/** One level of repetition: count copies of the level inside, stride bytes apart. */
struct StridedDim {
    MPI_Count count;
    MPI_Aint stride;
};

/**
 * A typemap that is a grid of blocks: width contiguous bytes at
 * offset + sum(i_k * dims[k].stride), i_k < dims[k].count, visited outermost
 * dimension first (typemap order). Every basic element is `leaf`, so the
 * packed bytes of the grid are exactly the blocks concatenated in that order
 * and the same message can travel as `packed_bytes / leaf_size` leaves.
 */
struct StridedLayout {
    static constexpr int kMaxDims = 6;
    MPI_Aint offset = 0;
    size_t width = 0;
    int ndims = 0;
    StridedDim dims[kMaxDims] = {};
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    size_t leaf_size = 0;

    /** Blocks in the grid (product of all counts). */
    MPI_Count blocks() const;
    /** Packed bytes: blocks() * width. */
    MPI_Count packed_bytes() const { return blocks() * static_cast<MPI_Count>(width); }
    /** Number of 2D pieces (product of all counts but the innermost). */
    MPI_Count pieces() const;
    /** Rows of one 2D piece (count of the innermost dim, 1 if none). */
    MPI_Count piece_rows() const { return ndims ? dims[ndims - 1].count : 1; }
    /** Row pitch of one 2D piece. */
    MPI_Aint piece_pitch() const { return ndims ? dims[ndims - 1].stride : static_cast<MPI_Aint>(width); }

    /** Prepends a repetition of the whole grid: count copies, stride bytes apart. False if too deep. */
    bool repeat(MPI_Count count, MPI_Aint stride);
    /** Merges dims that describe one longer run (drops count-1 dims, fuses adjacent dims). */
    void normalize();
    /** True if every stride is positive (what kupl_memcpy2d's pitches can express). */
    bool strides_positive() const;
    /** Proven: no byte is in two blocks (checked with the dimensions sorted by stride). */
    bool is_disjoint() const;
    /** [lo, hi): the bytes the grid touches, relative to the buffer. */
    void bounds(MPI_Aint *lo, MPI_Aint *hi) const;
    std::string describe() const;
};

/** What a committed datatype is, or why it is not accelerated. */
enum class TypeVerdict {
    Strided,       // one strided grid (any number of dimensions, in any stride order) of dense leaves
    Contiguous,    // dense: Open MPI already moves it with one memcpy
    Blocks,        // a list of blocks and grids (indexed, struct, ...; see block_layout.h)
    Unsupported,   // combiner we do not decode (darray, Fortran parameterised types, ...)
    NotDenseLeaf,  // a predefined leaf with holes (MPI_DOUBLE_INT, ...)
    TooManyBlocks, // more blocks or runs than the block list keeps (kMaxRuns)
    Empty,         // zero-size type
    kCount
};

const char *verdict_name(TypeVerdict v);

} // namespace kupl_mpi
