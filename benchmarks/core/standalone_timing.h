// Helpers shared by the core's standalone timing programs (sweep.cpp, overlap.cpp,
// cold_state.cpp), which alternate their variants repetition by repetition where Google
// Benchmark's loop cannot.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace standalone_timing {

inline double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Prints "<program>: <what>" and exits with status 1 (a failed call or a wrong copy).
[[noreturn]] inline void die(const char *what) {
    std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
    std::exit(1);
}

// Page-aligned, whole pages.
inline unsigned char *alloc_pages(size_t bytes) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    auto *p = static_cast<unsigned char *>(std::aligned_alloc(4096, rounded));
    if (p == nullptr)
        die("out of memory");
    return p;
}

// A dependent chain of multiply/xor-shift steps: bound by the core, not by memory.
__attribute__((noinline)) inline std::uint64_t compute(std::uint64_t iterations, std::uint64_t x) {
    for (std::uint64_t i = 0; i < iterations; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    return x;
}

// "4096", "64K", "1M", "2G" (or k, m, g); 0 for anything else.
inline size_t parse_size(const std::string &text) {
    char *end = nullptr;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    const std::string unit = end ? end : "";
    if (value == 0 || end == text.c_str())
        return 0;
    if (unit.empty())
        return value;
    if (unit == "K" || unit == "k")
        return value << 10;
    if (unit == "M" || unit == "m")
        return value << 20;
    if (unit == "G" || unit == "g")
        return value << 30;
    return 0;
}

} // namespace standalone_timing
