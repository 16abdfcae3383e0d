// AArch64: ASIMD loads and STNP (store pair, non-temporal hint) of two 16-byte registers.
// Not yet measured on a Kunpeng 920: correctness is tested (natively on x86-64 the x86 file
// runs; this one under qemu-aarch64), the threshold that selects it (KUPL_NT_THRESHOLD, default
// the last-level cache size) is the x86 one.
#include "copy/kernels/stream_copy.h"

#include <arm_neon.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace kupl::copy::detail {
namespace {

// One 32-byte STNP of two Q registers; dst needs no alignment for correctness, 16 B is best.
inline void store_pair_non_temporal(char *dst, uint8x16_t a, uint8x16_t b) {
    asm volatile("stnp %q[a], %q[b], [%[dst]]" : : [a] "w"(a), [b] "w"(b), [dst] "r"(dst) : "memory");
}

} // namespace

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
        const auto *s = reinterpret_cast<const std::uint8_t *>(src);
        uint8x16_t a = vld1q_u8(s);
        uint8x16_t b = vld1q_u8(s + 16);
        uint8x16_t c = vld1q_u8(s + 32);
        uint8x16_t d = vld1q_u8(s + 48);
        store_pair_non_temporal(dst, a, b);
        store_pair_non_temporal(dst + 32, c, d);
        src += 64;
        dst += 64;
    }
    // STNP is an ordinary store for ordering purposes (only its cache allocation is hinted), so
    // the release that publishes completion orders it; this fence keeps that explicit here.
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(dst, src, n % 64);
}

} // namespace kupl::copy::detail
