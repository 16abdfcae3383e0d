// Timing helpers shared by the MPI benchmarks: medians of repetitions, and
// variants of one experiment interleaved so a noisy host hits them alike.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

/** Seconds on a monotonic clock. */
inline double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

/** Evicts the caches by streaming through a buffer larger than the last level. */
inline void flush_caches() {
    static std::vector<char> junk(64u << 20, 1);
    volatile char sink = 0;
    for (size_t i = 0; i < junk.size(); i += 64) {
        junk[i] = static_cast<char>(junk[i] + 1);
        sink = sink + junk[i];
    }
    (void)sink;
}

/** Integer option --name=value from argv, else fallback. */
inline long option(int argc, char **argv, const char *name, long fallback) {
    const size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return std::atol(argv[i] + n + 1);
    return fallback;
}

/** True if the interposer is loaded (its MPI_Pack is not Open MPI's). */
inline bool interposer_loaded() {
    return getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "kupl_mpi");
}

} // namespace bench
