// The processor-specific part of the copy kernels: one implementation per architecture, chosen
// at build time (core/CMakeLists.txt compiles exactly one of stream_*.cpp). Everything else in
// copy_kernels.cpp is portable C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kupl::copy::detail {

// Copies n bytes with stores that bypass the caches where the processor has them (x86-64:
// MOVNTDQ, AArch64: STNP); a plain memcpy elsewhere. Called for copies much larger than the
// last-level cache only. The stores are visible to other threads once it returns and the
// caller publishes completion with a release operation.
void copy_streaming(char *dst, const char *src, std::size_t n);

// The frame every streaming kernel shares: bytes up to dst's first 16-byte boundary with memcpy,
// then whole 64-byte lines with copy_line(dst, src) (dst 16-byte aligned, src any), then
// after_lines() (the architecture's store ordering), then the tail with memcpy.
template <typename CopyLine, typename AfterLines>
inline void copy_in_aligned_lines(char *dst, const char *src, std::size_t n, CopyLine copy_line,
                                  AfterLines after_lines) {
    std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
    if (head > n)
        head = n;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    const std::size_t lines = n / 64;
    for (std::size_t i = 0; i < lines; ++i) {
        copy_line(dst, src);
        src += 64;
        dst += 64;
    }
    after_lines();
    std::memcpy(dst, src, n % 64);
}

} // namespace kupl::copy::detail
