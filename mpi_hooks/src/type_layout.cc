// The decoder: flattens a datatype into a list of grids in typemap order,
// merging as it goes (adjacent blocks into one, equal-shape grids at a constant
// distance into one grid with one more dimension), then turns the list into
// the layout the copy kernels run: a single grid, or a block list.
#include "type_layout.h"

#include <algorithm>
#include <utility>

namespace kupl_mpi {
namespace {

// A block list keeps at most this many runs (and the decoder as many grids):
// ~1.5 MiB per type. Types with more blocks (a struct repeated a million times
// by a contiguous type) stay with Open MPI.
constexpr size_t kMaxRuns = size_t(1) << 16;
// Grids with at least this many rows per 2D piece go to kupl_memcpy2d; shorter ones become runs.
constexpr MPI_Count kGridMinRows = 16;

/** The arrays MPI_Type_get_contents returns; frees the derived types on destruction. */
struct Contents {
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<MPI_Datatype> types;

    explicit Contents(MPI_Datatype t) {
        int ni = 0, na = 0, nd = 0;
        PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
        if (combiner == MPI_COMBINER_NAMED)
            return;
        ints.resize(ni);
        aints.resize(na);
        types.resize(nd);
        PMPI_Type_get_contents(t, ni, na, nd, ints.data(), aints.data(), types.data());
    }
    ~Contents() {
        for (MPI_Datatype &t : types) {
            int ni, na, nd, c;
            PMPI_Type_get_envelope(t, &ni, &na, &nd, &c);
            if (c != MPI_COMBINER_NAMED)
                PMPI_Type_free(&t);
        }
    }
    Contents(const Contents &) = delete;
    Contents &operator=(const Contents &) = delete;
};

MPI_Aint extent_of(MPI_Datatype t) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

/** A grid of the list; merged says its dims[0] was made by merging equal grids (merge_into). */
struct Seg {
    StridedLayout g;
    bool merged = false;
};
using SegList = std::vector<Seg>;

bool same_shape(const StridedLayout &a, int a_from, const StridedLayout &b) {
    if (a.width != b.width || a.ndims - a_from != b.ndims)
        return false;
    for (int k = 0; k < b.ndims; ++k)
        if (a.dims[a_from + k].count != b.dims[k].count || a.dims[a_from + k].stride != b.dims[k].stride)
            return false;
    return true;
}

class Decoder {
  public:
    TypeVerdict fail = TypeVerdict::Strided; // first reason the type cannot be listed
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    bool mixed = false;

    /** Appends the typemap of t (shifted by nothing) to out. False on failure (see fail). */
    bool decode(MPI_Datatype t, SegList &out, int depth);

  private:
    bool failed(TypeVerdict v) {
        if (fail == TypeVerdict::Strided)
            fail = v;
        return false;
    }
    bool append(SegList &out, const Seg &s);
    bool append_all(SegList &out, const SegList &in, MPI_Aint shift);
    bool repeat(SegList &l, MPI_Count count, MPI_Aint stride);
    bool block(MPI_Datatype old, MPI_Count blocklen, MPI_Aint disp, SegList &out, int depth);
};

/** Appends s, merging it into the last grid where the typemap allows. */
bool Decoder::append(SegList &out, const Seg &s) {
    if (!out.empty()) {
        Seg &last = out.back();
        StridedLayout &g = last.g;
        // Adjacent single blocks: one wider block.
        if (g.ndims == 0 && s.g.ndims == 0 && g.offset + static_cast<MPI_Aint>(g.width) == s.g.offset) {
            g.width += s.g.width;
            return true;
        }
        // One more equal grid at the merged grids' distance.
        if (last.merged && same_shape(g, 1, s.g) &&
            s.g.offset == g.offset + static_cast<MPI_Aint>(g.dims[0].count) * g.dims[0].stride) {
            ++g.dims[0].count;
            return true;
        }
        // Two equal grids: one grid with a new outer dimension.
        if (!last.merged && g.ndims < StridedLayout::kMaxDims && same_shape(g, 0, s.g)) {
            for (int k = g.ndims; k > 0; --k)
                g.dims[k] = g.dims[k - 1];
            g.dims[0] = {2, s.g.offset - g.offset};
            ++g.ndims;
            last.merged = true;
            return true;
        }
    }
    if (out.size() >= kMaxRuns)
        return failed(TypeVerdict::TooManyBlocks);
    out.push_back(s);
    out.back().merged = false;
    return true;
}

bool Decoder::append_all(SegList &out, const SegList &in, MPI_Aint shift) {
    for (Seg s : in) {
        s.g.offset += shift;
        if (!append(out, s))
            return false;
    }
    return true;
}

/** l becomes count copies of itself, stride bytes apart. */
bool Decoder::repeat(SegList &l, MPI_Count count, MPI_Aint stride) {
    if (count == 0 || l.empty()) {
        l.clear();
        return true;
    }
    if (l.size() == 1) {
        Seg &s = l[0];
        s.merged = false;
        return s.g.repeat(count, stride) || failed(TypeVerdict::Unsupported);
    }
    if (static_cast<size_t>(count) > kMaxRuns || l.size() * static_cast<size_t>(count) > kMaxRuns * 4)
        return failed(TypeVerdict::TooManyBlocks);
    SegList one;
    one.swap(l);
    for (MPI_Count i = 0; i < count; ++i)
        if (!append_all(l, one, static_cast<MPI_Aint>(i) * stride))
            return false;
    return true;
}

/** blocklen copies of old, displacement bytes in, appended to out. */
bool Decoder::block(MPI_Datatype old, MPI_Count blocklen, MPI_Aint disp, SegList &out, int depth) {
    SegList l;
    if (!decode(old, l, depth + 1) || !repeat(l, blocklen, extent_of(old)))
        return false;
    return append_all(out, l, disp);
}

bool Decoder::decode(MPI_Datatype t, SegList &out, int depth) {
    if (depth > 32)
        return failed(TypeVerdict::Unsupported);
    Contents c(t);
    switch (c.combiner) {
    case MPI_COMBINER_NAMED: {
        int size = 0;
        MPI_Aint lb = 0, extent = 0;
        PMPI_Type_size(t, &size);
        PMPI_Type_get_extent(t, &lb, &extent);
        if (size == 0)
            return true;
        if (lb != 0 || extent != size)
            return failed(TypeVerdict::NotDenseLeaf);
        if (leaf == MPI_DATATYPE_NULL)
            leaf = t;
        else if (leaf != t)
            mixed = true;
        Seg s;
        s.g.width = static_cast<size_t>(size);
        return append(out, s);
    }
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: // moves lb/extent only: the typemap is the old one
        return decode(c.types[0], out, depth + 1);
    case MPI_COMBINER_CONTIGUOUS:
        return block(c.types[0], c.ints[0], 0, out, depth);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        SegList l;
        const MPI_Aint stride = c.combiner == MPI_COMBINER_VECTOR
                                    ? static_cast<MPI_Aint>(c.ints[2]) * extent_of(c.types[0])
                                    : c.aints[0];
        if (!block(c.types[0], c.ints[1], 0, l, depth) || !repeat(l, c.ints[0], stride))
            return false;
        return append_all(out, l, 0);
    }
    case MPI_COMBINER_SUBARRAY: {
        const int nd = c.ints[0];
        const int *sizes = &c.ints[1], *subsizes = &c.ints[1 + nd], *starts = &c.ints[1 + 2 * nd];
        const bool fortran = c.ints[1 + 3 * nd] == MPI_ORDER_FORTRAN;
        SegList l;
        if (!decode(c.types[0], l, depth + 1))
            return false;
        // From the fastest-varying dimension outwards.
        MPI_Aint stride = extent_of(c.types[0]), shift = 0;
        for (int i = 0; i < nd; ++i) {
            const int d = fortran ? i : nd - 1 - i;
            if (!repeat(l, subsizes[d], stride))
                return false;
            shift += static_cast<MPI_Aint>(starts[d]) * stride;
            stride *= sizes[d];
        }
        return append_all(out, l, shift);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        const int n = c.ints[0];
        const bool fixed =
            c.combiner == MPI_COMBINER_INDEXED_BLOCK || c.combiner == MPI_COMBINER_HINDEXED_BLOCK;
        const bool bytes = c.combiner == MPI_COMBINER_HINDEXED || c.combiner == MPI_COMBINER_HINDEXED_BLOCK;
        // Decode the old type once; every block is a shifted repetition of it.
        SegList old;
        if (!decode(c.types[0], old, depth + 1))
            return false;
        const MPI_Aint ext = extent_of(c.types[0]);
        for (int i = 0; i < n; ++i) {
            const int len = fixed ? c.ints[1] : c.ints[1 + i];
            const MPI_Aint disp =
                bytes ? c.aints[i] : static_cast<MPI_Aint>(c.ints[(fixed ? 2 : 1 + n) + i]) * ext;
            SegList l = old;
            if (!repeat(l, len, ext) || !append_all(out, l, disp))
                return false;
        }
        return true;
    }
    case MPI_COMBINER_STRUCT: {
        const int n = c.ints[0];
        for (int i = 0; i < n; ++i)
            if (!block(c.types[i], c.ints[1 + i], c.aints[i], out, depth))
                return false;
        return true;
    }
    default:
        return failed(TypeVerdict::Unsupported);
    }
}

/** Block list of segs: grids with long positive-stride rows stay grids, the rest become runs. */
bool build_blocks(const SegList &segs, BlockLayout *b) {
    for (const Seg &s : segs) {
        const StridedLayout &g = s.g;
        b->bytes += g.packed_bytes();
        b->blocks += g.blocks();
        if (g.ndims > 0 && g.strides_positive() && g.piece_rows() >= kGridMinRows) {
            BlockPiece p;
            p.kind = BlockPiece::Grid;
            p.grid = g;
            p.bytes = g.packed_bytes();
            b->pieces.push_back(p);
            continue;
        }
        // Runs: one per innermost row (a single block is a run of one).
        if (b->pieces.empty() || b->pieces.back().kind != BlockPiece::Runs ||
            b->pieces.back().width != g.width) {
            BlockPiece p;
            p.kind = BlockPiece::Runs;
            p.width = g.width;
            p.first_run = b->runs.size();
            p.gather = gather_kernel(g.width);
            p.scatter = scatter_kernel(g.width);
            b->pieces.push_back(p);
        }
        BlockPiece &p = b->pieces.back();
        const int outer = g.ndims > 0 ? g.ndims - 1 : 0;
        const MPI_Count rows = g.ndims > 0 ? g.dims[g.ndims - 1].count : 1;
        const MPI_Aint pitch = g.ndims > 0 ? g.dims[g.ndims - 1].stride : 0;
        if (b->runs.size() + static_cast<size_t>(g.pieces()) > kMaxRuns)
            return false;
        MPI_Count index[StridedLayout::kMaxDims] = {};
        for (;;) {
            MPI_Aint off = g.offset;
            for (int k = 0; k < outer; ++k)
                off += static_cast<MPI_Aint>(index[k]) * g.dims[k].stride;
            b->runs.push_back({off, pitch, rows});
            ++p.nruns;
            int k = outer - 1;
            while (k >= 0 && ++index[k] == g.dims[k].count)
                index[k--] = 0;
            if (k < 0)
                break;
        }
        p.bytes += g.packed_bytes();
    }
    return true;
}

/** Proves the element's blocks disjoint: grids one by one, then their bounds, then (if few) block by block.
 */
bool prove_disjoint(const SegList &segs, MPI_Count blocks) {
    std::vector<std::pair<MPI_Aint, MPI_Aint>> spans;
    for (const Seg &s : segs) {
        if (!s.g.is_disjoint())
            return false;
        MPI_Aint lo, hi;
        s.g.bounds(&lo, &hi);
        spans.emplace_back(lo, hi);
    }
    std::sort(spans.begin(), spans.end());
    bool apart = true;
    for (size_t i = 1; i < spans.size() && apart; ++i)
        apart = spans[i].first >= spans[i - 1].second;
    if (apart)
        return true;
    if (blocks > MPI_Count(1) << 18)
        return false; // interleaved grids too large to enumerate: treated as possibly overlapping
    spans.clear();
    for (const Seg &s : segs) {
        const StridedLayout &g = s.g;
        MPI_Count index[StridedLayout::kMaxDims] = {};
        for (;;) {
            MPI_Aint off = g.offset;
            for (int k = 0; k < g.ndims; ++k)
                off += static_cast<MPI_Aint>(index[k]) * g.dims[k].stride;
            spans.emplace_back(off, off + static_cast<MPI_Aint>(g.width));
            int k = g.ndims - 1;
            while (k >= 0 && ++index[k] == g.dims[k].count)
                index[k--] = 0;
            if (k < 0)
                break;
        }
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second)
            return false;
    return true;
}

} // namespace

TypeAnalysis analyse_datatype(MPI_Datatype datatype) {
    TypeAnalysis a;
    Decoder d;
    SegList segs;
    if (!d.decode(datatype, segs, 0)) {
        a.verdict = d.fail;
        return a;
    }
    if (segs.empty()) {
        a.verdict = TypeVerdict::Empty;
        return a;
    }
    for (Seg &s : segs)
        s.g.normalize();
    if (!d.mixed) {
        a.leaf = d.leaf;
        int size = 0;
        PMPI_Type_size(d.leaf, &size);
        a.leaf_size = static_cast<size_t>(size);
    }
    if (segs.size() == 1 && segs[0].g.strides_positive()) {
        a.grid = segs[0].g;
        a.grid.leaf = a.leaf;
        a.grid.leaf_size = a.leaf_size;
        a.verdict = a.grid.ndims == 0 ? TypeVerdict::Contiguous : TypeVerdict::Strided;
        return a;
    }
    auto b = std::make_shared<BlockLayout>();
    if (!build_blocks(segs, b.get())) {
        a.verdict = TypeVerdict::TooManyBlocks;
        return a;
    }
    b->lo = b->hi = 0;
    bool first = true;
    for (const Seg &s : segs) {
        MPI_Aint lo, hi;
        s.g.bounds(&lo, &hi);
        b->lo = first ? lo : std::min(b->lo, lo);
        b->hi = first ? hi : std::max(b->hi, hi);
        first = false;
    }
    b->disjoint = prove_disjoint(segs, b->blocks);
    a.blocks = std::move(b);
    a.verdict = TypeVerdict::Blocks;
    return a;
}

} // namespace kupl_mpi
