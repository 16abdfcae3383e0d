#include "stats.h"
#include "trace.h"

#include "config.h"

#include <atomic>
#include <cstdio>
#include <new>
#include <string>

namespace kupl_mpi {
namespace {

constexpr int kVerdicts = static_cast<int>(TypeVerdict::kCount);
std::atomic<uint64_t> g_types[kVerdicts];
std::atomic<uint64_t> g_fallbacks[static_cast<int>(Fallback::kCount)];
std::atomic<uint64_t> g_accel_calls[static_cast<int>(Accel::kCount)];
std::atomic<uint64_t> g_accel_bytes[static_cast<int>(Accel::kCount)];
std::atomic<uint64_t> g_engine_errors;

const char *accel_name(Accel a) {
    switch (a) {
    case Accel::Send:
        return "send";
    case Accel::Recv:
        return "recv";
    case Accel::Pack:
        return "pack";
    case Accel::Unpack:
        return "unpack";
    case Accel::Persistent:
        return "persistent-start";
    case Accel::Collective:
        return "collective";
    case Accel::kCount:
        break;
    }
    return "?";
}

} // namespace

const char *fallback_name(Fallback f) {
    switch (f) {
    case Fallback::Disabled:
        return "disabled";
    case Fallback::SwitchedOff:
        return "switched-off";
    case Fallback::NotCommitted:
        return "type-not-derived-or-not-seen";
    case Fallback::TypeUnsupported:
        return "type-unsupported-combiner";
    case Fallback::TypeLeafHoles:
        return "type-leaf-with-holes";
    case Fallback::TypeTooManyBlocks:
        return "type-too-many-blocks";
    case Fallback::TypeEmpty:
        return "type-empty";
    case Fallback::NotMonotonic:
        return "not-monotonic";
    case Fallback::Overlapping:
        return "overlapping";
    case Fallback::MixedLeaves:
        return "mixed-leaves";
    case Fallback::Contiguous:
        return "contiguous";
    case Fallback::ZeroCount:
        return "zero-count";
    case Fallback::ProcNull:
        return "proc-null";
    case Fallback::Intercomm:
        return "intercommunicator";
    case Fallback::OffNode:
        return "peer-off-node";
    case Fallback::AnySourceOffNode:
        return "any-source-multi-node";
    case Fallback::NoNodeMap:
        return "no-node-map";
    case Fallback::CostModel:
        return "cost-model";
    case Fallback::TooLarge:
        return "count-overflow";
    case Fallback::BufferTooSmall:
        return "pack-buffer-too-small";
    case Fallback::BadArgument:
        return "bad-argument";
    case Fallback::NoMemory:
        return "no-memory";
    case Fallback::InPlace:
        return "in-place";
    case Fallback::CollMultiNode:
        return "collective-multi-node";
    case Fallback::kCount:
        break;
    }
    return "?";
}

void stats_type_committed(TypeVerdict v) {
    g_types[static_cast<int>(v)].fetch_add(1, std::memory_order_relaxed);
}
void stats_fallback(Fallback f) {
    trace_verdict("fallback", fallback_name(f));
    g_fallbacks[static_cast<int>(f)].fetch_add(1, std::memory_order_relaxed);
}
void stats_accelerated(Accel a, uint64_t bytes) {
    trace_verdict("accelerated", nullptr);
    g_accel_calls[static_cast<int>(a)].fetch_add(1, std::memory_order_relaxed);
    g_accel_bytes[static_cast<int>(a)].fetch_add(bytes, std::memory_order_relaxed);
}
void stats_engine_error() {
    g_engine_errors.fetch_add(1, std::memory_order_relaxed);
}

bool stats_enabled() {
    return config().stats;
}

void stats_print(int rank) {
    try {
        std::string out = "[kupl_mpi] rank " + std::to_string(rank) + " stats\n";
        out += "[kupl_mpi]   committed types:";
        for (int v = 0; v < kVerdicts; ++v)
            out += std::string(" ") + verdict_name(static_cast<TypeVerdict>(v)) + "=" +
                   std::to_string(g_types[v].load());
        out += "\n[kupl_mpi]   accelerated:";
        for (int a = 0; a < static_cast<int>(Accel::kCount); ++a)
            out += std::string(" ") + accel_name(static_cast<Accel>(a)) + "=" +
                   std::to_string(g_accel_calls[a].load()) + " (" + std::to_string(g_accel_bytes[a].load()) +
                   " B)";
        out += "\n[kupl_mpi]   fell back:";
        for (int f = 0; f < static_cast<int>(Fallback::kCount); ++f)
            if (uint64_t n = g_fallbacks[f].load())
                out += std::string(" ") + fallback_name(static_cast<Fallback>(f)) + "=" + std::to_string(n);
        out += "\n[kupl_mpi]   engine errors (redone on the CPU): " + std::to_string(g_engine_errors.load()) +
               "\n";
        std::fputs(out.c_str(), stderr);
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "[kupl_mpi] rank %d stats: no memory to format them\n", rank);
    }
}

} // namespace kupl_mpi
