// Copy kernels in portable C++; the one processor-specific piece, streaming stores, is in
// stream_<processor>.cpp (see stream_copy.h).
#include "copy/kernels/copy_kernels.h"

#include "copy/kernels/stream_copy.h"

#include <cstring>

namespace kupl::copy {
namespace {

// How many rows ahead the narrow kernels prefetch the source, and with which hint. Measured here
// on 8-byte columns at a 32 KiB pitch with two threads: a T0 prefetch 8 rows ahead lifts columns
// that come from DRAM by ~8% and costs ~5% when they are cached; the non-temporal hint cost up to
// 10% on cached columns. Inline (small) copies do not prefetch at all. (Measured on x86-64 only;
// __builtin_prefetch becomes PRFM PLDL1KEEP on AArch64, where the distance is still to be tuned.)
constexpr std::size_t prefetch_distance = 8;

template <bool Prefetch>
inline void prefetch_row(const char *src, std::size_t spitch, std::size_t r, std::size_t rows) {
    if (Prefetch && r + prefetch_distance < rows)
        __builtin_prefetch(src + (r + prefetch_distance) * spitch, 0, 3);
}

// Rows of exactly W bytes: the compiler turns the fixed-size memcpy into register moves.
template <std::size_t W, bool Prefetch>
void rows_fixed(char *dst, std::size_t dpitch, const char *src, std::size_t spitch, std::size_t,
                std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r) {
        prefetch_row<Prefetch>(src, spitch, r, rows);
        std::memcpy(dst + r * dpitch, src + r * spitch, W);
    }
}

// Rows of L..2L bytes: two fixed-size moves of L bytes, the second ending at the row's end
// (they overlap when the width is not 2L), so any width in the class needs no branch.
template <std::size_t L, bool Prefetch>
void rows_overlapping(char *dst, std::size_t dpitch, const char *src, std::size_t spitch, std::size_t width,
                      std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r) {
        prefetch_row<Prefetch>(src, spitch, r, rows);
        const char *s = src + r * spitch;
        char *d = dst + r * dpitch;
        char first[L], last[L];
        std::memcpy(first, s, L);
        std::memcpy(last, s + width - L, L);
        std::memcpy(d, first, L);
        std::memcpy(d + width - L, last, L);
    }
}

void rows_memcpy(char *dst, std::size_t dpitch, const char *src, std::size_t spitch, std::size_t width,
                 std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(dst + r * dpitch, src + r * spitch, width);
}

} // namespace

[[gnu::hot]] void copy_bytes(void *dst, const void *src, std::size_t n, bool non_temporal) {
    if (non_temporal && n >= 4096) {
        detail::copy_streaming(static_cast<char *>(dst), static_cast<const char *>(src), n);
        return;
    }
    std::memcpy(dst, src, n);
}

template <bool Prefetch> RowKernel row_kernel_for(std::size_t width) {
    switch (width) {
    case 1:
        return rows_fixed<1, Prefetch>;
    case 2:
        return rows_fixed<2, Prefetch>;
    case 4:
        return rows_fixed<4, Prefetch>;
    case 8:
        return rows_fixed<8, Prefetch>;
    case 16:
        return rows_fixed<16, Prefetch>;
    case 32:
        return rows_fixed<32, Prefetch>;
    case 64:
        return rows_fixed<64, Prefetch>;
    default:
        break;
    }
    if (width < 4)
        return rows_overlapping<2, Prefetch>; // width 3
    if (width < 8)
        return rows_overlapping<4, Prefetch>;
    if (width < 16)
        return rows_overlapping<8, Prefetch>;
    if (width < 32)
        return rows_overlapping<16, Prefetch>;
    if (width < 64)
        return rows_overlapping<32, Prefetch>;
    return rows_memcpy;
}

RowKernel select_row_kernel(std::size_t width, bool prefetch) {
    return prefetch ? row_kernel_for<true>(width) : row_kernel_for<false>(width);
}

} // namespace kupl::copy
