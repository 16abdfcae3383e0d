// Copy kernels, chosen once per copy by shape and size so the hot loop decides nothing.
#pragma once

#include <cstddef>

namespace kupl::copy {

// Copies n bytes. With non_temporal, stores bypass the caches (for copies much larger than the
// last-level cache, where they save the read-for-ownership of every destination line).
void copy_bytes(void *dst, const void *src, std::size_t n, bool non_temporal);

// Copies `rows` rows of `width` bytes; rows are dpitch / spitch bytes apart.
using RowKernel = void (*)(char *dst, std::size_t dpitch, const char *src, std::size_t spitch,
                           std::size_t width, std::size_t rows);

// The kernel for rows of this width: for 1..64 B a loop of fixed-size moves with no library
// call per row (and, with prefetch, a prefetch of the source rows ahead: channel copies are large
// enough to pay for it, inline ones are not); wider rows use memcpy per row.
RowKernel select_row_kernel(std::size_t width, bool prefetch);

} // namespace kupl::copy
