// x86-64: SSE2 streaming stores (the only file of the core that uses x86 intrinsics).
#include "copy/kernels/stream_copy.h"

#include <emmintrin.h>

namespace kupl::copy::detail {

// Unaligned loads, aligned non-temporal 16-byte stores, one cache line per step.
void copy_streaming(char *dst, const char *src, std::size_t n) {
    copy_in_aligned_lines(
        dst, src, n,
        [](char *d, const char *s) {
            __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s));
            __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 16));
            __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 32));
            __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 48));
            _mm_stream_si128(reinterpret_cast<__m128i *>(d), a);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + 16), b);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + 32), c);
            _mm_stream_si128(reinterpret_cast<__m128i *>(d + 48), e);
        },
        // Streaming stores are weakly ordered: make them visible before completion.
        [] { _mm_sfence(); });
}

} // namespace kupl::copy::detail
