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
    /** True if strides are positive and blocks are visited at strictly increasing, non-overlapping addresses.
     */
    bool is_monotonic() const;
    std::string describe() const;
};

/** Why a committed datatype is not accelerated. */
enum class TypeVerdict {
    Strided,      // a 2D (or deeper) strided grid of one predefined dense leaf
    Contiguous,   // dense: Open MPI already moves it with one memcpy
    Unsupported,  // combiner we do not decode (struct, indexed, darray, ...)
    NotDenseLeaf, // leaf type with holes (MPI_DOUBLE_INT, ...) or mixed leaves
    NotMonotonic, // negative strides or overlapping blocks
    Empty,        // zero-size type
};

const char *verdict_name(TypeVerdict v);

/**
 * Decodes datatype with MPI_Type_get_envelope/get_contents (freeing the derived
 * types get_contents returns). On Strided fills *layout for one element.
 */
TypeVerdict analyse_datatype(MPI_Datatype datatype, StridedLayout *layout);

} // namespace kupl_mpi
