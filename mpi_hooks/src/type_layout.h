// Commit-time analysis of a datatype into its canonical layout: one strided
// grid (strided_layout.h) when the typemap is one, a block list
// (block_layout.h) otherwise, or the reason it is left to Open MPI.
#pragma once

#include "block_layout.h"
#include "strided_layout.h"

#include <memory>

namespace kupl_mpi {

struct TypeAnalysis {
    TypeVerdict verdict = TypeVerdict::Unsupported;
    StridedLayout grid;                        // Strided/Contiguous: one element
    std::shared_ptr<const BlockLayout> blocks; // Blocks: one element
    /**
     * The one predefined type every basic element is (what a staged message
     * travels as), or MPI_DATATYPE_NULL when the leaves are mixed (a struct of
     * ints and doubles): such types are packed and unpacked, never staged.
     */
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    size_t leaf_size = 0;
};

/**
 * Decodes datatype with MPI_Type_get_envelope/get_contents (freeing the derived
 * types get_contents returns). Throws std::bad_alloc.
 */
TypeAnalysis analyse_datatype(MPI_Datatype datatype);

} // namespace kupl_mpi
