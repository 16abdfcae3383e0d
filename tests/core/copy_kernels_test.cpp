// The copy kernels themselves (core/copy/kernels, compiled into this test directly) against
// memcpy, on every shape they distinguish: rows of 1-64 B (fixed and overlapping moves) and wider,
// prefetching or not, heights around the prefetch distance, odd pitches, every alignment of
// source and destination within 16 B; 1D copies with and without streaming stores around
// the 4 KiB and cache-line edges, unaligned. Guard bytes around and between the destination's
// rows must stay untouched. Runs natively and under qemu-aarch64 (tests/cross/aarch64.sh),
// so the x86-64, AArch64 and portable kernels are each checked where they are built.
#include "copy/kernels/copy_kernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr unsigned char kGuard = 0xA5;

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto &b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<unsigned char>(x >> 24);
        if (b == kGuard)
            b = 0x5A; // a guard byte in the source would hide a stray store
    }
    return v;
}

// Runs one 2D copy through the kernel for `width` and checks the destination byte by byte.
::testing::AssertionResult check_rows(std::size_t width, std::size_t rows, std::size_t spitch,
                                      std::size_t dpitch, std::size_t src_offset, std::size_t dst_offset,
                                      bool prefetch) {
    const std::size_t slack = 64;
    std::vector<unsigned char> src =
        pattern(src_offset + (rows - 1) * spitch + width + slack, unsigned(width * 131 + rows));
    std::vector<unsigned char> dst(dst_offset + (rows - 1) * dpitch + width + slack, kGuard);
    std::vector<unsigned char> expected = dst;
    for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(&expected[dst_offset + r * dpitch], &src[src_offset + r * spitch], width);
    kupl::copy::RowKernel kernel = kupl::copy::select_row_kernel(width, prefetch);
    kernel(reinterpret_cast<char *>(&dst[dst_offset]), dpitch,
           reinterpret_cast<const char *>(&src[src_offset]), spitch, width, rows);
    for (std::size_t i = 0; i < dst.size(); ++i)
        if (dst[i] != expected[i])
            return ::testing::AssertionFailure()
                   << "width " << width << " rows " << rows << " spitch " << spitch << " dpitch " << dpitch
                   << " src+" << src_offset << " dst+" << dst_offset << (prefetch ? " prefetch" : "")
                   << ": byte " << i << " is " << int(dst[i]) << ", expected " << int(expected[i])
                   << (expected[i] == kGuard ? " (guard)" : "");
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_bytes(std::size_t n, std::size_t src_offset, std::size_t dst_offset,
                                       bool non_temporal) {
    const std::size_t slack = 64;
    std::vector<unsigned char> src = pattern(src_offset + n + slack, unsigned(n));
    std::vector<unsigned char> dst(dst_offset + n + slack, kGuard);
    std::vector<unsigned char> expected = dst;
    std::memcpy(&expected[dst_offset], &src[src_offset], n);
    kupl::copy::copy_bytes(&dst[dst_offset], &src[src_offset], n, non_temporal);
    for (std::size_t i = 0; i < dst.size(); ++i)
        if (dst[i] != expected[i])
            return ::testing::AssertionFailure()
                   << n << " B src+" << src_offset << " dst+" << dst_offset
                   << (non_temporal ? " streaming" : "") << ": byte " << i << " is " << int(dst[i])
                   << ", expected " << int(expected[i]) << (expected[i] == kGuard ? " (guard)" : "");
    return ::testing::AssertionSuccess();
}

TEST(CopyKernels, NarrowRowsEveryWidthAlignmentAndHeight) {
    for (std::size_t width = 1; width <= 64; ++width)
        for (std::size_t rows : {1, 2, 8, 9, 17})
            for (std::size_t offset = 0; offset < 16; ++offset)
                for (bool prefetch : {false, true}) {
                    // Packed rows, then odd gaps on both sides.
                    ASSERT_TRUE(check_rows(width, rows, width, width, offset, (offset * 7) % 16, prefetch));
                    ASSERT_TRUE(
                        check_rows(width, rows, width + 3, width + 5, (offset * 3) % 16, offset, prefetch));
                }
}

TEST(CopyKernels, WideRowsAndOddWidths) {
    for (std::size_t width : {65, 66, 127, 128, 129, 255, 1000, 4095, 4097})
        for (std::size_t rows : {1, 3, 10})
            for (std::size_t offset : {0, 1, 7, 15})
                for (bool prefetch : {false, true})
                    ASSERT_TRUE(
                        check_rows(width, rows, width + 1, width + 13, offset, 15 - offset, prefetch));
}

TEST(CopyKernels, LargePitches) {
    for (std::size_t width : {1, 3, 8, 33, 64})
        for (bool prefetch : {false, true})
            ASSERT_TRUE(check_rows(width, 20, 32 << 10, (4 << 10) + 1, 5, 3, prefetch));
}

TEST(CopyKernels, BytesEverySmallSizeAndAlignment) {
    for (std::size_t n = 0; n <= 200; ++n)
        for (std::size_t offset = 0; offset < 16; ++offset)
            for (bool non_temporal : {false, true})
                ASSERT_TRUE(check_bytes(n, offset, (offset * 5) % 16, non_temporal));
}

TEST(CopyKernels, BytesAroundTheStreamingEdges) {
    // 4 KiB is where streaming starts; the streaming loop moves whole 64 B lines after aligning
    // the destination to 16 B, so sizes around multiples of 64 and every destination alignment.
    for (std::size_t base : {4032, 4096, 8192, 65536, 1 << 18})
        for (std::size_t delta : {0, 1, 15, 16, 17, 63, 64, 65})
            for (std::size_t offset : {0, 1, 8, 15, 16, 31, 63})
                for (bool non_temporal : {false, true})
                    ASSERT_TRUE(check_bytes(base + delta, 63 - offset, offset, non_temporal));
}

} // namespace
