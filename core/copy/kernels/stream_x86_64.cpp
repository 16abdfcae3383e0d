// x86-64: SSE2 streaming stores (the only file of the core that uses x86 intrinsics).
#include "copy/kernels/stream_copy.h"

#include <cstdint>
#include <cstring>
#include <emmintrin.h>

namespace kupl::copy::detail {

// Unaligned loads, aligned non-temporal 16-byte stores, one cache line per step.
void copy_streaming(char *dst, const char *src, std::size_t n) {
    std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
    if (head > n)
        head = n;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    const std::size_t lines = n / 64;
    for (std::size_t i = 0; i < lines; ++i) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 16));
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 32));
        __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 48), d);
        src += 64;
        dst += 64;
    }
    _mm_sfence(); // streaming stores are weakly ordered: make them visible before completion
    std::memcpy(dst, src, n % 64);
}

} // namespace kupl::copy::detail
