// Packing and unpacking strided layouts with KUPL's 2D copies: one 2D copy per
// piece; large pieces go to the engine, all pieces of a batch in one
// kuplx_memcpy_batch_async with one event (over vendor KUPL: one
// kupl_memcpy2d_async and event each), then one wait; small ones run on the caller.
#pragma once

#include "block_layout.h"
#include "kupl_api.h"
#include "strided_layout.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace kupl_mpi {

/** One message's grid at a user address (base = user buffer, may be MPI_BOTTOM). */
struct Placement {
    StridedLayout layout; // message layout: the datatype's grid repeated count times
    const void *base = nullptr;
    /**
     * Set for a block list: then the message is count elements of *blocks,
     * extent bytes apart, copied on the calling thread, and layout is unused.
     */
    std::shared_ptr<const BlockLayout> blocks;
    MPI_Count count = 0;
    MPI_Aint extent = 0;
    /**
     * Copy with kupl_memcpy2d on the calling thread rather than with
     * kupl_memcpy2d_async on the engine's channels: for copies too small to
     * repay a hand-off and an event.
     */
    bool on_caller = true;
    char *grid_start() const;
};

/**
 * A set of strided copies submitted together and completed by wait().
 * Not thread-safe; make one per call.
 */
class CopyBatch {
  public:
    CopyBatch() = default;
    ~CopyBatch();
    CopyBatch(const CopyBatch &) = delete;
    CopyBatch &operator=(const CopyBatch &) = delete;

    /** Gathers the grid into packed (contiguous, packed_bytes() long). */
    void pack(const Placement &from, void *packed);
    /** Scatters the first bytes bytes of packed into the grid (bytes <= packed_bytes()). */
    void unpack(const void *packed, size_t bytes, const Placement &to);
    /**
     * Waits for everything submitted. A copy the engine failed is redone on the
     * CPU (and counted), so the data is always right on return.
     */
    void wait();

  private:
    struct Piece {
        char *dst;
        size_t dpitch;
        const char *src;
        size_t spitch;
        size_t width, height;
    };
    /** Never throws: a copy that cannot go to the engine is done on the caller. */
    void submit(const Piece &p, bool on_caller);
    /** A piece the engine refused or failed, copied here (and counted). */
    static void redo_on_cpu(const Piece &p);
    /** Makes sure one more async piece can be recorded without allocating; false if no memory. */
    bool room_for_one_more() noexcept;
#ifdef KUPLX_AVAILABLE
    std::vector<kuplx_copy_piece_t> batch_; // for the engine, submitted by wait() as one batch
#else
    std::vector<Piece> pieces_;  // submitted to the engine, one kupl_memcpy2d_async each
    std::vector<void *> events_; // kupl_event_h, one per submitted piece
#endif
};

} // namespace kupl_mpi
