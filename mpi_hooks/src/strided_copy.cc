#include "strided_copy.h"

#include "event_pool.h"
#include "stats.h"

#include "kupl_api.h"

#include <algorithm>
#include <new>
#include <utility>

#include <cstdint>
#include <cstring>

namespace kupl_mpi {

char *Placement::grid_start() const {
    // MPI_BOTTOM is address 0 and the offsets are then absolute addresses.
    return reinterpret_cast<char *>(reinterpret_cast<uintptr_t>(base) +
                                    static_cast<uintptr_t>(layout.offset));
}

namespace {

/** Largest copy kupl_memcpy2d keeps on the calling thread (half its sync threshold, to be safe). */
size_t caller_chunk_bytes() {
    static const size_t bytes = [] {
        size_t b = size_t(256) << 10;
#ifdef KUPLX_AVAILABLE
        kuplx_engine_info_t info;
        if (kuplx_get_engine_info(&info) == KUPL_OK && info.sync_threshold / 2 > 0)
            b = std::min(b, info.sync_threshold / 2);
#endif
        return b;
    }();
    return bytes;
}

/**
 * Calls f(piece_origin) for every 2D piece of the layout in typemap order,
 * where the piece is piece_rows() rows of width bytes piece_pitch() apart.
 */
template <class F> void for_each_piece(const StridedLayout &l, char *origin, F &&f) {
    const int outer = l.ndims > 0 ? l.ndims - 1 : 0;
    MPI_Count index[StridedLayout::kMaxDims] = {};
    for (;;) {
        char *p = origin;
        for (int k = 0; k < outer; ++k)
            p += index[k] * l.dims[k].stride;
        if (!f(p))
            return;
        int k = outer - 1;
        while (k >= 0 && ++index[k] == l.dims[k].count)
            index[k--] = 0;
        if (k < 0)
            return;
    }
}

/** True if some dimension steps less than a dimension inside it (a transpose). */
bool transposed(const StridedLayout &l) {
    for (int k = 0; k + 1 < l.ndims; ++k)
        if (l.dims[k].stride < l.dims[k + 1].stride)
            return true;
    return false;
}

/**
 * Unpacks a whole transposed grid whose blocks are disjoint, walking the user's
 * memory in address order and reading the packed bytes strided instead:
 * unpacking a transpose in typemap order writes a block per row of the target
 * in every pass over it (measured 0.07x of Open MPI for a 256 x 64 transpose of
 * doubles, against 1.5-3x this way: see cost_model.cc). With disjoint blocks the order of the writes
 * cannot change the result.
 */
void unpack_in_memory_order(const StridedLayout &l, const char *packed, char *grid) {
    struct Dim {
        MPI_Count count;
        MPI_Aint user, pack;
    } d[StridedLayout::kMaxDims];
    MPI_Aint pack_stride = static_cast<MPI_Aint>(l.width);
    for (int k = l.ndims - 1; k >= 0; --k) {
        d[k] = {l.dims[k].count, l.dims[k].stride, pack_stride};
        pack_stride *= static_cast<MPI_Aint>(l.dims[k].count);
    }
    const int n = l.ndims;
    for (int k = 1; k < n; ++k) // largest user stride outermost
        for (int j = k; j > 0 && d[j].user > d[j - 1].user; --j)
            std::swap(d[j], d[j - 1]);
    MPI_Count index[StridedLayout::kMaxDims] = {};
    for (;;) {
        char *u = grid;
        const char *p = packed;
        for (int k = 0; k + 1 < n; ++k) {
            u += index[k] * d[k].user;
            p += index[k] * d[k].pack;
        }
        copy_strided(u, d[n - 1].user, p, d[n - 1].pack, d[n - 1].count, l.width);
        int k = n - 2;
        while (k >= 0 && ++index[k] == d[k].count)
            index[k--] = 0;
        if (k < 0)
            return;
    }
}

} // namespace

CopyBatch::~CopyBatch() {
    wait();
}

namespace {
template <typename Vector> void grow_if_full(Vector &v) {
    if (v.size() == v.capacity())
        v.reserve(std::max<size_t>(8, 2 * v.capacity()));
}
} // namespace

bool CopyBatch::room_for_one_more() noexcept {
    try {
#ifdef KUPLX_AVAILABLE
        grow_if_full(batch_);
#else
        grow_if_full(pieces_);
        grow_if_full(events_);
#endif
        return true;
    } catch (const std::bad_alloc &) {
        return false;
    }
}

void CopyBatch::submit(const Piece &p, bool on_caller) {
    // With no memory to track an asynchronous copy, copy it here: the result is the same.
    if (!on_caller && !room_for_one_more())
        on_caller = true;
    if (on_caller) {
        // The synchronous call runs KUPL's row kernel right here, with no event or hand-off
        // (a few hundred ns cheaper than async + wait). Chunks stay below the size from which
        // kupl_memcpy2d itself would hand the copy to a channel thread. KUPL weighs a 2D copy by
        // the cache lines it touches, not its bytes: a row costs its width rounded up to 64 bytes
        // plus 64 (measured in kupl's engine; a row of 8 bytes weighs 128). Counting rows by
        // width alone let columns of more than 4096 narrow rows go to the channels, which waits
        // for a thread that competes with a rank, and allocates in KUPL on every copy.
        const size_t row_cost = (p.width + 63) / 64 * 64 + 64;
        const size_t chunk_rows = std::max<size_t>(1, caller_chunk_bytes() / row_cost);
        bool ok = true;
        for (size_t r = 0; r < p.height && ok; r += chunk_rows)
            ok = kupl_memcpy2d(p.dst + r * p.dpitch, p.dpitch, p.src + r * p.spitch, p.spitch, p.width,
                               std::min(chunk_rows, p.height - r)) == KUPL_OK;
        if (ok)
            return;
    } else {
#ifdef KUPLX_AVAILABLE
        // Gathered here, submitted by wait() as one batch operation with one event.
        batch_.push_back({p.dst, p.dpitch, p.src, p.spitch, p.width, p.height});
        return;
#else
        kupl_event_h ev = event_pool_get();
        if (ev && kupl_memcpy2d_async(p.dst, p.dpitch, p.src, p.spitch, p.width, p.height, nullptr, ev) ==
                      KUPL_OK) {
            pieces_.push_back(p);
            events_.push_back(ev);
            return;
        }
        if (ev)
            event_pool_put(ev);
#endif
    }
    // The engine refused the copy: do it here, the application must not notice.
    redo_on_cpu(p);
}

void CopyBatch::pack(const Placement &from, void *packed) {
    if (from.blocks) {
        blocks_pack(*from.blocks, static_cast<const char *>(from.base), from.count, from.extent,
                    static_cast<char *>(packed));
        return;
    }
    const StridedLayout &l = from.layout;
    const size_t rows = static_cast<size_t>(l.piece_rows()), pitch = static_cast<size_t>(l.piece_pitch());
    char *out = static_cast<char *>(packed);
    for_each_piece(l, from.grid_start(), [&](char *piece) {
        submit({out, l.width, piece, pitch, l.width, rows}, from.on_caller);
        out += rows * l.width;
        return true;
    });
}

void CopyBatch::unpack(const void *packed, size_t bytes, const Placement &to) {
    if (to.blocks) {
        blocks_unpack(*to.blocks, static_cast<const char *>(packed), bytes,
                      const_cast<char *>(static_cast<const char *>(to.base)), to.count, to.extent);
        return;
    }
    const StridedLayout &l = to.layout;
    if (transposed(l) && bytes == static_cast<size_t>(l.packed_bytes()) && l.is_disjoint()) {
        unpack_in_memory_order(l, static_cast<const char *>(packed), to.grid_start());
        return;
    }
    const size_t rows = static_cast<size_t>(l.piece_rows()), pitch = static_cast<size_t>(l.piece_pitch());
    const char *in = static_cast<const char *>(packed);
    for_each_piece(l, to.grid_start(), [&](char *piece) {
        const size_t full_rows = bytes / l.width < rows ? bytes / l.width : rows;
        if (full_rows > 0)
            submit({piece, pitch, in, l.width, l.width, full_rows}, to.on_caller);
        in += full_rows * l.width;
        bytes -= full_rows * l.width;
        if (full_rows < rows) {
            // A truncated message ends inside this row: copy its head and stop.
            if (bytes > 0)
                std::memcpy(piece + full_rows * pitch, in, bytes);
            bytes = 0;
        }
        return bytes > 0;
    });
}

void CopyBatch::redo_on_cpu(const Piece &p) {
    stats_engine_error();
    for (size_t r = 0; r < p.height; ++r)
        std::memcpy(p.dst + r * p.dpitch, p.src + r * p.spitch, p.width);
}

#ifdef KUPLX_AVAILABLE
// All gathered pieces as one kuplx_memcpy_batch_async: one operation and one event instead of
// one of each per piece (core_batch_bench, packing 256 pieces of 16 rows x 1 KiB: 1.24x faster
// than a 2D copy and an event per piece; 256 x 16 x 64 B: 3.1x). A failed batch is redone on the
// CPU whole (the copies are idempotent), so the data is right either way.
void CopyBatch::wait() {
    if (batch_.empty())
        return;
    kupl_event_h ev = event_pool_get();
    if (ev != nullptr && kuplx_memcpy_batch_async(batch_.data(), batch_.size(), nullptr, ev) == KUPL_OK &&
        kupl_event_wait(ev) == KUPL_OK) {
        event_pool_put(ev);
    } else {
        for (const kuplx_copy_piece_t &b : batch_)
            redo_on_cpu({static_cast<char *>(b.dst), b.dpitch, static_cast<const char *>(b.src), b.spitch,
                         b.width, b.height});
        if (ev)
            kupl_event_destroy(ev); // do not reuse an event that may carry an error
    }
    batch_.clear();
}
#else
void CopyBatch::wait() {
    for (size_t i = 0; i < events_.size(); ++i) {
        auto ev = static_cast<kupl_event_h>(events_[i]);
        if (kupl_event_wait(ev) != KUPL_OK) {
            redo_on_cpu(pieces_[i]);
            kupl_event_destroy(ev); // do not reuse an event that carries an error
            continue;
        }
        event_pool_put(ev);
    }
    events_.clear();
    pieces_.clear();
}
#endif

} // namespace kupl_mpi
