// Shared helpers for the core benchmarks: buffers that memcpy and KUPL copy alike,
// a failure flag that turns into the exit status (so a ctest smoke run can fail),
// engine facts in the report context, and per-operation engine counters.
#ifndef KUPL_BENCH_SUPPORT_H
#define KUPL_BENCH_SUPPORT_H

#include <benchmark/benchmark.h>
#include <sched.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kupl.h"
#include "kupl_ext.h"

namespace bench {

// Set once any benchmark reports an error; main() then exits non-zero.
inline bool &any_failure() {
    static bool failed = false;
    return failed;
}

inline void fail(benchmark::State &state, const std::string &why) {
    any_failure() = true;
    state.SkipWithError(why.c_str());
}

// One page-aligned source/destination pair per binary, grown on demand and faulted in
// before use, so that every variant of a benchmark copies the very same pages.
// Plain 4 KiB pages (no MADV_HUGEPAGE): what an application's malloc gets here.
struct Buffers {
    unsigned char *src = nullptr;
    unsigned char *dst = nullptr;
    size_t bytes = 0;
};

inline Buffers &buffers(size_t bytes) {
    static Buffers b;
    if (bytes > b.bytes) {
        std::free(b.src);
        std::free(b.dst);
        const size_t rounded = (bytes + 4095) / 4096 * 4096;
        b.src = static_cast<unsigned char *>(std::aligned_alloc(4096, rounded));
        b.dst = static_cast<unsigned char *>(std::aligned_alloc(4096, rounded));
        if (b.src == nullptr || b.dst == nullptr) {
            std::fprintf(stderr, "cannot allocate 2 x %zu bytes\n", rounded);
            std::exit(2);
        }
        // A pattern that differs in every 8-byte word, so a misplaced word is caught.
        for (size_t i = 0; i < rounded / 8; ++i) {
            const uint64_t word = (i + 1) * 0x9E3779B97F4A7C15ull;
            std::memcpy(b.src + 8 * i, &word, 8);
        }
        std::memset(b.dst, 0, rounded);
        b.bytes = rounded;
    }
    return b;
}

// Puts the runtime's configuration into the report header (console and JSON).
inline void add_engine_context() {
    kuplx_engine_info_t info;
    if (kuplx_get_engine_info(&info) != KUPL_OK) {
        benchmark::AddCustomContext("kupl_engine", "unavailable");
        return;
    }
    benchmark::AddCustomContext("kupl_backend", info.backend);
    benchmark::AddCustomContext("kupl_channels", std::to_string(info.num_channels));
    benchmark::AddCustomContext("kupl_executors", std::to_string(info.num_executors));
    benchmark::AddCustomContext("kupl_inline_threshold", std::to_string(info.inline_threshold));
    benchmark::AddCustomContext("kupl_mt_threshold", std::to_string(info.mt_threshold));
    benchmark::AddCustomContext("kupl_sync_threshold", std::to_string(info.sync_threshold));
    benchmark::AddCustomContext("kupl_nt_threshold", std::to_string(info.nt_threshold));
    benchmark::AddCustomContext("kupl_spin_us", std::to_string(info.spin_us));
    for (int channel = 0; channel < info.num_channels; ++channel) {
        char where[128];
        if (kuplx_get_channel_placement(channel, where, sizeof where) == KUPL_OK)
            benchmark::AddCustomContext("kupl_channel_" + std::to_string(channel), where);
    }
}

// Engine counters over a benchmark's timed loop, reported per operation: they say
// whether copies ran inline, how many pieces they were split into and how often a
// sleeping worker had to be woken (the usual cause of poor small-copy latency), plus the
// CPU the benchmark thread ended on: sharing a core with a pinned channel costs the overlap.
class EngineCounters {
  public:
    EngineCounters() { kuplx_get_counters(&before_); }

    void report(benchmark::State &state) const {
        kuplx_counters_t after;
        if (kuplx_get_counters(&after) != KUPL_OK || state.iterations() == 0)
            return;
        const double ops = static_cast<double>(state.iterations());
        auto per_op = [&](uint64_t a, uint64_t b) { return static_cast<double>(a - b) / ops; };
        state.counters["inline/op"] = per_op(after.copies_inline, before_.copies_inline);
        state.counters["pieces/op"] = per_op(after.pieces_executed, before_.pieces_executed);
        state.counters["wakes/op"] = per_op(after.worker_wakes, before_.worker_wakes);
        state.counters["parks/op"] = per_op(after.worker_parks, before_.worker_parks);
        state.counters["caller_cpu"] = sched_getcpu();
    }

  private:
    kuplx_counters_t before_{};
};

// Google Benchmark's main, plus the engine context and an exit status that reports
// failed benchmarks (SkipWithError alone leaves the status at 0).
inline int run_main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    add_engine_context();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return any_failure() ? 1 : 0;
}

} // namespace bench

#endif // KUPL_BENCH_SUPPORT_H
