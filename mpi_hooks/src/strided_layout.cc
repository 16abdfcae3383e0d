#include "strided_layout.h"

#include <cstdio>
#include <utility>
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

bool StridedLayout::strides_positive() const {
    for (int k = 0; k < ndims; ++k)
        if (dims[k].stride <= 0)
            return false;
    return true;
}

bool StridedLayout::is_disjoint() const {
    if (width == 0)
        return false;
    // Visit the dimensions from the smallest stride up: each must step over all
    // the smaller ones span. (Sufficient, not necessary: a grid that fails is
    // only treated as possibly overlapping.)
    StridedDim d[kMaxDims];
    for (int k = 0; k < ndims; ++k)
        d[k] = {dims[k].count, dims[k].stride < 0 ? -dims[k].stride : dims[k].stride};
    for (int k = 1; k < ndims; ++k) // insertion sort: at most kMaxDims entries
        for (int j = k; j > 0 && d[j].stride < d[j - 1].stride; --j)
            std::swap(d[j], d[j - 1]);
    MPI_Count span = static_cast<MPI_Count>(width);
    for (int k = 0; k < ndims; ++k) {
        if (d[k].count > 1 && d[k].stride < span)
            return false;
        span += (d[k].count - 1) * d[k].stride;
    }
    return true;
}

void StridedLayout::bounds(MPI_Aint *lo, MPI_Aint *hi) const {
    MPI_Aint l = offset, h = offset + static_cast<MPI_Aint>(width);
    for (int k = 0; k < ndims; ++k) {
        const MPI_Aint reach = static_cast<MPI_Aint>(dims[k].count - 1) * dims[k].stride;
        (reach < 0 ? l : h) += reach;
    }
    *lo = l;
    *hi = h;
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
    case TypeVerdict::Blocks:
        return "block-list";
    case TypeVerdict::Unsupported:
        return "unsupported-combiner";
    case TypeVerdict::NotDenseLeaf:
        return "leaf-with-holes";
    case TypeVerdict::TooManyBlocks:
        return "too-many-blocks";
    case TypeVerdict::Empty:
        return "empty";
    case TypeVerdict::kCount:
        break;
    }
    return "?";
}

} // namespace kupl_mpi
