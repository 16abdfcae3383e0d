#include "strided_layout.h"

#include <cstdio>
#include <vector>

namespace kupl_mpi {

MPI_Count StridedLayout::blocks() const {
    MPI_Count n = 1;
    for (int k = 0; k < ndims; ++k)
        n *= dims[k].count;
    return n;
}

MPI_Count StridedLayout::pieces() const {
    MPI_Count n = 1;
    for (int k = 0; k + 1 < ndims; ++k)
        n *= dims[k].count;
    return n;
}

bool StridedLayout::repeat(MPI_Count count, MPI_Aint stride) {
    if (ndims == kMaxDims)
        return false;
    for (int k = ndims; k > 0; --k)
        dims[k] = dims[k - 1];
    dims[0] = {count, stride};
    ++ndims;
    normalize();
    return true;
}

void StridedLayout::normalize() {
    bool changed = true;
    while (changed) {
        changed = false;
        int out = 0;
        for (int k = 0; k < ndims; ++k) {
            if (dims[k].count == 1) {
                changed = true;
                continue;
            }
            dims[out++] = dims[k];
        }
        ndims = out;
        // The innermost level repeats blocks back to back: one wider block.
        if (ndims > 0 && dims[ndims - 1].stride == static_cast<MPI_Aint>(width)) {
            width *= static_cast<size_t>(dims[ndims - 1].count);
            --ndims;
            changed = true;
        }
        // An outer level that steps over exactly the inner level's span: one longer level.
        for (int k = 0; k + 1 < ndims; ++k) {
            if (dims[k].stride == dims[k + 1].count * dims[k + 1].stride) {
                dims[k + 1].count *= dims[k].count;
                for (int j = k; j + 1 < ndims; ++j)
                    dims[j] = dims[j + 1];
                --ndims;
                changed = true;
                break;
            }
        }
    }
}

bool StridedLayout::is_monotonic() const {
    if (width == 0)
        return false;
    MPI_Count span = static_cast<MPI_Count>(width);
    for (int k = ndims - 1; k >= 0; --k) {
        if (dims[k].count <= 0 || dims[k].stride <= 0 || dims[k].stride < span)
            return false;
        span += (dims[k].count - 1) * dims[k].stride;
    }
    return true;
}

std::string StridedLayout::describe() const {
    char buf[256];
    int n = std::snprintf(buf, sizeof buf, "offset %ld width %zu", static_cast<long>(offset), width);
    for (int k = 0; k < ndims && n > 0 && n < static_cast<int>(sizeof buf); ++k)
        n += std::snprintf(buf + n, sizeof buf - n, " x(%lld @%ld)", static_cast<long long>(dims[k].count),
                           static_cast<long>(dims[k].stride));
    return buf;
}

const char *verdict_name(TypeVerdict v) {
    switch (v) {
    case TypeVerdict::Strided:
        return "strided";
    case TypeVerdict::Contiguous:
        return "contiguous";
    case TypeVerdict::Unsupported:
        return "unsupported-combiner";
    case TypeVerdict::NotDenseLeaf:
        return "leaf-with-holes";
    case TypeVerdict::NotMonotonic:
        return "not-monotonic";
    case TypeVerdict::Empty:
        return "empty";
    }
    return "?";
}

namespace {

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

TypeVerdict decode(MPI_Datatype t, StridedLayout *out, int depth);

/** count copies of old placed displacement bytes in: old's grid repeated blocklen times, shifted. */
TypeVerdict single_block(MPI_Datatype old, MPI_Count blocklen, MPI_Aint displacement, StridedLayout *out,
                         int depth) {
    TypeVerdict v = decode(old, out, depth + 1);
    if (v != TypeVerdict::Strided)
        return v;
    if (blocklen == 0)
        return TypeVerdict::Empty;
    if (!out->repeat(blocklen, extent_of(old)))
        return TypeVerdict::Unsupported;
    out->offset += displacement;
    return TypeVerdict::Strided;
}

TypeVerdict vector_of(MPI_Datatype old, MPI_Count count, MPI_Count blocklen, MPI_Aint stride_bytes,
                      StridedLayout *out, int depth) {
    TypeVerdict v = single_block(old, blocklen, 0, out, depth);
    if (v != TypeVerdict::Strided)
        return v;
    if (count == 0)
        return TypeVerdict::Empty;
    return out->repeat(count, stride_bytes) ? TypeVerdict::Strided : TypeVerdict::Unsupported;
}

TypeVerdict subarray_of(const Contents &c, StridedLayout *out, int depth) {
    const int nd = c.ints[0];
    const int *sizes = &c.ints[1], *subsizes = &c.ints[1 + nd], *starts = &c.ints[1 + 2 * nd];
    const bool fortran = c.ints[1 + 3 * nd] == MPI_ORDER_FORTRAN;
    TypeVerdict v = decode(c.types[0], out, depth + 1);
    if (v != TypeVerdict::Strided)
        return v;
    // Walk from the fastest-varying dimension outwards.
    MPI_Aint stride = extent_of(c.types[0]), shift = 0;
    for (int i = 0; i < nd; ++i) {
        const int d = fortran ? i : nd - 1 - i;
        if (subsizes[d] == 0)
            return TypeVerdict::Empty;
        if (!out->repeat(subsizes[d], stride))
            return TypeVerdict::Unsupported;
        shift += static_cast<MPI_Aint>(starts[d]) * stride;
        stride *= sizes[d];
    }
    out->offset += shift;
    return TypeVerdict::Strided;
}

TypeVerdict decode(MPI_Datatype t, StridedLayout *out, int depth) {
    if (depth > 16)
        return TypeVerdict::Unsupported;
    Contents c(t);
    switch (c.combiner) {
    case MPI_COMBINER_NAMED: {
        int size = 0;
        MPI_Aint lb = 0, extent = 0;
        PMPI_Type_size(t, &size);
        PMPI_Type_get_extent(t, &lb, &extent);
        if (size == 0)
            return TypeVerdict::Empty;
        if (lb != 0 || extent != size)
            return TypeVerdict::NotDenseLeaf;
        *out = StridedLayout{};
        out->width = static_cast<size_t>(size);
        out->leaf = t;
        out->leaf_size = static_cast<size_t>(size);
        return TypeVerdict::Strided;
    }
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: // moves lb/extent only: the typemap is the old one
        return decode(c.types[0], out, depth + 1);
    case MPI_COMBINER_CONTIGUOUS:
        return single_block(c.types[0], c.ints[0], 0, out, depth);
    case MPI_COMBINER_VECTOR:
        return vector_of(c.types[0], c.ints[0], c.ints[1], c.ints[2] * extent_of(c.types[0]), out, depth);
    case MPI_COMBINER_HVECTOR:
        return vector_of(c.types[0], c.ints[0], c.ints[1], c.aints[0], out, depth);
    case MPI_COMBINER_SUBARRAY:
        return subarray_of(c, out, depth);
    // A single block of an indexed/struct type is a shifted contiguous run (MPI_BOTTOM idiom).
    case MPI_COMBINER_INDEXED:
        if (c.ints[0] != 1)
            return TypeVerdict::Unsupported;
        return single_block(c.types[0], c.ints[1], c.ints[2] * extent_of(c.types[0]), out, depth);
    case MPI_COMBINER_INDEXED_BLOCK:
        if (c.ints[0] != 1)
            return TypeVerdict::Unsupported;
        return single_block(c.types[0], c.ints[1], c.ints[2] * extent_of(c.types[0]), out, depth);
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        if (c.ints[0] != 1)
            return TypeVerdict::Unsupported;
        return single_block(c.types[0], c.ints[1], c.aints[0], out, depth);
    case MPI_COMBINER_HINDEXED_BLOCK:
        if (c.ints[0] != 1)
            return TypeVerdict::Unsupported;
        return single_block(c.types[0], c.ints[1], c.aints[0], out, depth);
    default:
        return TypeVerdict::Unsupported;
    }
}

} // namespace

TypeVerdict analyse_datatype(MPI_Datatype datatype, StridedLayout *layout) {
    StridedLayout l;
    TypeVerdict v = decode(datatype, &l, 0);
    if (v != TypeVerdict::Strided)
        return v;
    if (l.blocks() == 0)
        return TypeVerdict::Empty;
    if (!l.is_monotonic())
        return TypeVerdict::NotMonotonic;
    *layout = l;
    return l.ndims == 0 ? TypeVerdict::Contiguous : TypeVerdict::Strided;
}

} // namespace kupl_mpi
