// AArch64: ASIMD loads and STNP (store pair, non-temporal hint) of two 16-byte registers.
// Not yet measured on a Kunpeng 920: correctness is tested (natively on x86-64 the x86 file
// runs; this one under qemu-aarch64), the threshold that selects it (KUPL_NT_THRESHOLD, default
// the last-level cache size) is the x86 one.
#include "copy/kernels/stream_copy.h"

#include <arm_neon.h>

#include <atomic>
#include <cstdint>

namespace kupl::copy::detail {
namespace {

// One 32-byte STNP of two Q registers; dst needs no alignment for correctness, 16 B is best.
inline void store_pair_non_temporal(char *dst, uint8x16_t a, uint8x16_t b) {
    asm volatile("stnp %q[a], %q[b], [%[dst]]" : : [a] "w"(a), [b] "w"(b), [dst] "r"(dst) : "memory");
}

} // namespace

void copy_streaming(char *dst, const char *src, std::size_t n) {
    copy_in_aligned_lines(
        dst, src, n,
        [](char *d, const char *s) {
            const auto *from = reinterpret_cast<const std::uint8_t *>(s);
            uint8x16_t a = vld1q_u8(from);
            uint8x16_t b = vld1q_u8(from + 16);
            uint8x16_t c = vld1q_u8(from + 32);
            uint8x16_t e = vld1q_u8(from + 48);
            store_pair_non_temporal(d, a, b);
            store_pair_non_temporal(d + 32, c, e);
        },
        // STNP is an ordinary store for ordering purposes (only its cache allocation is hinted),
        // so the release that publishes completion orders it; this fence keeps that explicit.
        [] { std::atomic_thread_fence(std::memory_order_release); });
}

} // namespace kupl::copy::detail
