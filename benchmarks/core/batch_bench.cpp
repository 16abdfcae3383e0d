// Packing a 3D block (pieces x rows x width, out of a matrix with a row pitch twice the width)
// into a contiguous buffer, three ways side by side:
//   caller     one memcpy per row on the calling thread (the peer);
//   per_piece  one kupl_memcpy2d_async per 2D piece, each with its own event, then a wait on each
//              (what the MPI interposer did for a multi-piece grid handed to the engine);
//   batch      all pieces in one kuplx_memcpy_batch_async with one event, then one wait.
// Arguments: row width in bytes, rows per piece, pieces. Every variant's packed bytes are checked
// after its timed loop.
#include "bench_support.h"

#include <vector>

namespace {

struct Block {
    size_t width, rows, pieces;
    size_t pitch() const { return 2 * width; }
    size_t piece_src_bytes() const { return rows * pitch(); }
    size_t packed_bytes() const { return width * rows * pieces; }
};

Block block_of(const benchmark::State &state) {
    return {static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1)),
            static_cast<size_t>(state.range(2))};
}

bool packed_right(const bench::Buffers &b, const Block &k) {
    for (size_t p = 0; p < k.pieces; ++p)
        for (size_t r = 0; r < k.rows; ++r)
            if (std::memcmp(b.dst + (p * k.rows + r) * k.width,
                            b.src + p * k.piece_src_bytes() + r * k.pitch(), k.width) != 0)
                return false;
    return true;
}

void finish(benchmark::State &state, const bench::Buffers &b, const Block &k,
            const bench::EngineCounters &c) {
    if (!packed_right(b, k))
        bench::fail(state, "packed bytes differ from the source rows");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * k.packed_bytes()));
    c.report(state);
}

void BM_caller(benchmark::State &state) {
    const Block k = block_of(state);
    const bench::Buffers &b = bench::buffers(k.pieces * k.piece_src_bytes());
    std::memset(b.dst, 0, k.packed_bytes());
    bench::EngineCounters counters;
    for (auto _ : state)
        for (size_t p = 0; p < k.pieces; ++p)
            for (size_t r = 0; r < k.rows; ++r)
                std::memcpy(b.dst + (p * k.rows + r) * k.width,
                            b.src + p * k.piece_src_bytes() + r * k.pitch(), k.width);
    finish(state, b, k, counters);
}

void BM_per_piece(benchmark::State &state) {
    const Block k = block_of(state);
    const bench::Buffers &b = bench::buffers(k.pieces * k.piece_src_bytes());
    std::memset(b.dst, 0, k.packed_bytes());
    std::vector<kupl_event_h> events(k.pieces);
    for (kupl_event_h &e : events)
        e = kupl_event_create();
    bench::EngineCounters counters;
    for (auto _ : state) {
        for (size_t p = 0; p < k.pieces; ++p)
            if (kupl_memcpy2d_async(b.dst + p * k.rows * k.width, k.width, b.src + p * k.piece_src_bytes(),
                                    k.pitch(), k.width, k.rows, nullptr, events[p]) != KUPL_OK)
                bench::fail(state, "kupl_memcpy2d_async failed");
        for (kupl_event_h e : events)
            if (kupl_event_wait(e) != KUPL_OK)
                bench::fail(state, "kupl_event_wait failed");
    }
    finish(state, b, k, counters);
    for (kupl_event_h e : events)
        kupl_event_destroy(e);
}

void BM_batch(benchmark::State &state) {
    const Block k = block_of(state);
    const bench::Buffers &b = bench::buffers(k.pieces * k.piece_src_bytes());
    std::memset(b.dst, 0, k.packed_bytes());
    std::vector<kuplx_copy_piece_t> pieces(k.pieces);
    for (size_t p = 0; p < k.pieces; ++p)
        pieces[p] = {b.dst + p * k.rows * k.width,
                     k.width,
                     b.src + p * k.piece_src_bytes(),
                     k.pitch(),
                     k.width,
                     k.rows};
    kupl_event_h event = kupl_event_create();
    bench::EngineCounters counters;
    for (auto _ : state) {
        if (kuplx_memcpy_batch_async(pieces.data(), pieces.size(), nullptr, event) != KUPL_OK ||
            kupl_event_wait(event) != KUPL_OK)
            bench::fail(state, "batch copy failed");
    }
    finish(state, b, k, counters);
    kupl_event_destroy(event);
}

// {width, rows per piece, pieces}: small pieces that run inline, mid-size pieces near the
// engine's hand-off size, and large ones that the channels split.
void shapes(benchmark::internal::Benchmark *b) {
    b->ArgNames({"width", "rows", "pieces"});
    for (const auto &s : std::vector<std::vector<int64_t>>{
             {64, 16, 256}, {8, 512, 64}, {1024, 16, 256}, {1024, 64, 64}, {4096, 64, 16}, {64, 4096, 16}})
        b->Args(s);
    b->UseRealTime();
}

BENCHMARK(BM_caller)->Apply(shapes);
BENCHMARK(BM_per_piece)->Apply(shapes);
BENCHMARK(BM_batch)->Apply(shapes);

} // namespace

int main(int argc, char **argv) {
    return bench::run_main(argc, argv);
}
