// Gather/scatter kernels for block lists. A kernel is picked per piece at
// commit by block width: the fixed widths compile to a few loads and stores per
// block (no memcpy call, no length dispatch), which is where Open MPI 4.1's
// engine spends its time on small blocks (one memcpy call per block).
#include "block_layout.h"

#include "strided_copy.h"

#include <cstdint>
#include <cstring>

namespace kupl_mpi {
namespace {

template <size_t W>
char *gather_fixed(char *out, const char *base, const BlockRun *runs, size_t nruns, size_t) {
    for (size_t r = 0; r < nruns; ++r) {
        const char *p = base + runs[r].offset;
        const MPI_Aint stride = runs[r].stride;
        for (MPI_Count j = runs[r].count; j > 0; --j, p += stride, out += W)
            std::memcpy(out, p, W);
    }
    return out;
}

template <size_t W>
const char *scatter_fixed(const char *in, char *base, const BlockRun *runs, size_t nruns, size_t) {
    for (size_t r = 0; r < nruns; ++r) {
        char *p = base + runs[r].offset;
        const MPI_Aint stride = runs[r].stride;
        for (MPI_Count j = runs[r].count; j > 0; --j, p += stride, in += W)
            std::memcpy(p, in, W);
    }
    return in;
}

char *gather_any(char *out, const char *base, const BlockRun *runs, size_t nruns, size_t width) {
    for (size_t r = 0; r < nruns; ++r) {
        const char *p = base + runs[r].offset;
        for (MPI_Count j = runs[r].count; j > 0; --j, p += runs[r].stride, out += width)
            std::memcpy(out, p, width);
    }
    return out;
}

const char *scatter_any(const char *in, char *base, const BlockRun *runs, size_t nruns, size_t width) {
    for (size_t r = 0; r < nruns; ++r) {
        char *p = base + runs[r].offset;
        for (MPI_Count j = runs[r].count; j > 0; --j, p += runs[r].stride, in += width)
            std::memcpy(p, in, width);
    }
    return in;
}

/** The widths with their own kernel: element sizes 1-8 bytes times 1, 2, 3, 4, 6, 8, 9, 12, 16 elements. */
#define KUPL_MPI_BLOCK_WIDTHS(X)                                                                             \
    X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(24) X(32) X(40) X(48) X(64) X(72) X(96) X(128)

template <size_t W>
void copy_strided_fixed(char *dst, MPI_Aint ds, const char *src, MPI_Aint ss, MPI_Count count, size_t) {
    for (; count > 0; --count, dst += ds, src += ss)
        std::memcpy(dst, src, W);
}

void copy_strided_any(char *dst, MPI_Aint ds, const char *src, MPI_Aint ss, MPI_Count count, size_t width) {
    for (; count > 0; --count, dst += ds, src += ss)
        std::memcpy(dst, src, width);
}

char *base_of(const void *base, MPI_Count r, MPI_Aint extent) {
    // MPI_BOTTOM is address 0 and offsets are then absolute: unsigned arithmetic, no UB.
    return reinterpret_cast<char *>(reinterpret_cast<uintptr_t>(base) +
                                    static_cast<uintptr_t>(static_cast<MPI_Aint>(r) * extent));
}

} // namespace

void copy_strided(char *dst, MPI_Aint dst_stride, const char *src, MPI_Aint src_stride, MPI_Count count,
                  size_t width) {
    switch (width) {
#define X(w)                                                                                                 \
    case w:                                                                                                  \
        return copy_strided_fixed<w>(dst, dst_stride, src, src_stride, count, w);
        KUPL_MPI_BLOCK_WIDTHS(X)
#undef X
    default:
        return copy_strided_any(dst, dst_stride, src, src_stride, count, width);
    }
}

GatherFn gather_kernel(size_t width) {
    switch (width) {
#define X(w)                                                                                                 \
    case w:                                                                                                  \
        return gather_fixed<w>;
        KUPL_MPI_BLOCK_WIDTHS(X)
#undef X
    default:
        return gather_any;
    }
}

ScatterFn scatter_kernel(size_t width) {
    switch (width) {
#define X(w)                                                                                                 \
    case w:                                                                                                  \
        return scatter_fixed<w>;
        KUPL_MPI_BLOCK_WIDTHS(X)
#undef X
    default:
        return scatter_any;
    }
}

void blocks_pack(const BlockLayout &l, const char *base, MPI_Count count, MPI_Aint extent, char *out) {
    CopyBatch batch;
    for (MPI_Count r = 0; r < count; ++r) {
        char *b = base_of(base, r, extent);
        for (const BlockPiece &p : l.pieces) {
            if (p.kind == BlockPiece::Runs) {
                out = p.gather(out, b, &l.runs[p.first_run], p.nruns, p.width);
            } else {
                Placement where;
                where.layout = p.grid;
                where.base = b;
                batch.pack(where, out); // on the caller: done on return
                out += p.bytes;
            }
        }
    }
    batch.wait();
}

void blocks_unpack(const BlockLayout &l, const char *in, size_t bytes, char *base, MPI_Count count,
                   MPI_Aint extent) {
    CopyBatch batch;
    for (MPI_Count r = 0; r < count && bytes > 0; ++r) {
        char *b = base_of(base, r, extent);
        for (const BlockPiece &p : l.pieces) {
            if (bytes == 0)
                break;
            const size_t n = static_cast<size_t>(p.bytes) < bytes ? static_cast<size_t>(p.bytes) : bytes;
            if (p.kind == BlockPiece::Grid) {
                Placement where;
                where.layout = p.grid;
                where.base = b;
                batch.unpack(in, n, where);
            } else if (n == static_cast<size_t>(p.bytes)) {
                p.scatter(in, b, &l.runs[p.first_run], p.nruns, p.width);
            } else {
                // A truncated message ends in this piece: block by block, the last one cut short.
                size_t left = n;
                const char *src = in;
                for (size_t k = p.first_run; k < p.first_run + p.nruns && left > 0; ++k) {
                    char *q = b + l.runs[k].offset;
                    for (MPI_Count j = 0; j < l.runs[k].count && left > 0; ++j, q += l.runs[k].stride) {
                        const size_t w = p.width < left ? p.width : left;
                        std::memcpy(q, src, w);
                        src += w;
                        left -= w;
                    }
                }
            }
            in += n;
            bytes -= n;
        }
    }
    batch.wait();
}

} // namespace kupl_mpi
