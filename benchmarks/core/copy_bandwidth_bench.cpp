// 1D copies, side by side at each size: glibc memcpy on the calling thread (the peer),
// kupl_memcpy_async + kupl_event_wait (the caller only waits), and the synchronous
// kupl_memcpy; from 16 MiB also a plain two-thread streaming copy, the reference for what
// the memory system allows (see two_thread_stream_copy.h).
// Ratios are taken by report_core_benchmarks.py from the medians.
#include "bench_support.h"
#include "two_thread_stream_copy.h"

namespace {

constexpr int64_t kMinBytes = 4 << 10;
constexpr int64_t kMaxBytes = 256 << 20;

// The destination is zeroed before each timed loop and every byte is checked after
// it, so a copy that silently did nothing fails the run instead of looking fast.
void poison(const bench::Buffers &b, size_t n) {
    std::memset(b.dst, 0, n);
}

void verify(benchmark::State &state, const bench::Buffers &b, size_t n) {
    if (std::memcmp(b.dst, b.src, n) != 0)
        bench::fail(state, "destination differs from source after the timed loop");
}

void memcpy_on_caller(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    bench::Buffers &b = bench::buffers(n);
    poison(b, n);
    for (auto _ : state) {
        std::memcpy(b.dst, b.src, n);
        benchmark::ClobberMemory();
    }
    verify(state, b, n);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void kupl_memcpy_async_wait(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    bench::Buffers &b = bench::buffers(n);
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    if (queue == nullptr || event == nullptr) {
        bench::fail(state, "kupl_queue_create or kupl_event_create failed");
    } else {
        poison(b, n);
        bench::EngineCounters counters;
        for (auto _ : state) {
            if (kupl_memcpy_async(b.dst, b.src, n, queue, event) != KUPL_OK ||
                kupl_event_wait(event) != KUPL_OK) {
                bench::fail(state, "kupl_memcpy_async or kupl_event_wait failed");
                break;
            }
        }
        counters.report(state);
        verify(state, b, n);
    }
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void kupl_memcpy_sync(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    bench::Buffers &b = bench::buffers(n);
    poison(b, n);
    bench::EngineCounters counters;
    for (auto _ : state) {
        if (kupl_memcpy(b.dst, b.src, n) != KUPL_OK) {
            bench::fail(state, "kupl_memcpy failed");
            break;
        }
    }
    counters.report(state);
    verify(state, b, n);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void ceiling_two_thread_stream(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    bench::Buffers &b = bench::buffers(n);
    poison(b, n);
    {
        bench::TwoThreadStreamCopier copier;
        for (auto _ : state)
            copier.copy(b.dst, b.src, n);
    }
    verify(state, b, n);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

// 4 KiB .. 256 MiB in steps of 4x. Real time: the caller's CPU time says nothing
// about a copy done by another thread.
void sizes(benchmark::internal::Benchmark *b) {
    b->RangeMultiplier(4)->Range(kMinBytes, kMaxBytes)->UseRealTime();
}

} // namespace

BENCHMARK(memcpy_on_caller)->Apply(sizes);
BENCHMARK(kupl_memcpy_async_wait)->Apply(sizes);
BENCHMARK(kupl_memcpy_sync)->Apply(sizes);
BENCHMARK(ceiling_two_thread_stream)->RangeMultiplier(4)->Range(16 << 20, kMaxBytes)->UseRealTime();

int main(int argc, char **argv) {
    return bench::run_main(argc, argv);
}
