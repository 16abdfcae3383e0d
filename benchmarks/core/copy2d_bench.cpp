// 2D copies that pack a strided block of a matrix into a contiguous buffer (what an
// MPI datatype pack does), side by side: one glibc memcpy per row on the calling
// thread (the peer), the synchronous kupl_memcpy2d, and kupl_memcpy2d_async + wait.
// Arguments: row width in bytes, source pitch in bytes, number of rows, and "cold":
//   cold:0  the same block every iteration (its lines stay in the caches),
//   cold:1  each iteration packs the next block of a 128 MiB matrix (64 B further along
//           the rows, then the next band of rows), so the source comes from memory as it
//           does when a large matrix is sent once.
#include "bench_support.h"

#include <algorithm>

namespace {

constexpr size_t kColdMatrixBytes = 128u << 20; // 4x the L3 of the reference machine

struct Shape {
    size_t width, pitch, height;
    bool cold;
    size_t block_bytes() const { return pitch * height; }
    size_t matrix_bytes() const { return cold ? std::max(kColdMatrixBytes, block_bytes()) : block_bytes(); }
};

Shape shape_of(const benchmark::State &state) {
    return {static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1)),
            static_cast<size_t>(state.range(2)), state.range(3) != 0};
}

// Where the source block of iteration k starts: blocks step along the rows by whole cache
// lines, then move down to the next band of rows; the walk repeats when the matrix is used up.
class BlockWalk {
  public:
    explicit BlockWalk(const Shape &s)
        : step_(std::max<size_t>(64, (s.width + 63) / 64 * 64)), per_band_((s.pitch - s.width) / step_ + 1),
          bands_(s.matrix_bytes() / s.block_bytes()), band_bytes_(s.block_bytes()), cold_(s.cold) {}

    size_t next() {
        if (!cold_)
            return 0;
        const size_t k = position()++ % (per_band_ * bands_);
        return (k / per_band_) * band_bytes_ + (k % per_band_) * step_;
    }

  private:
    size_t step_, per_band_, bands_, band_bytes_;
    bool cold_;
    // One walk for the whole process: a run continues where the previous one (of another
    // variant, with interleaved repetitions) stopped, instead of finding its lines in the L3.
    static size_t &position() {
        static size_t k = 0;
        return k;
    }
};

// Zeroes the packed destination before the timed loop and checks every row of the last
// block packed after it.
void poison(const bench::Buffers &b, const Shape &s) {
    std::memset(b.dst, 0, s.width * s.height);
}

void verify(benchmark::State &state, const bench::Buffers &b, const Shape &s, size_t last_offset) {
    const unsigned char *src = b.src + last_offset;
    for (size_t r = 0; r < s.height; ++r) {
        if (std::memcmp(b.dst + r * s.width, src + r * s.pitch, s.width) != 0) {
            bench::fail(state, "packed row " + std::to_string(r) + " differs from its source row");
            return;
        }
    }
}

void finish(benchmark::State &state, const Shape &s) {
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * s.width * s.height));
}

// The peer: what a program writes without a 2D copy call. Kept out of line with plain
// arguments so that the loop keeps everything in registers, like a library routine would.
__attribute__((noinline)) void memcpy_rows(unsigned char *dst, size_t dpitch, const unsigned char *src,
                                           size_t spitch, size_t width, size_t height) {
    for (size_t r = 0; r < height; ++r)
        std::memcpy(dst + r * dpitch, src + r * spitch, width);
}

void memcpy_per_row(benchmark::State &state) {
    const Shape s = shape_of(state);
    bench::Buffers &b = bench::buffers(s.matrix_bytes());
    BlockWalk walk(s);
    size_t offset = 0;
    poison(b, s);
    for (auto _ : state) {
        offset = walk.next();
        memcpy_rows(b.dst, s.width, b.src + offset, s.pitch, s.width, s.height);
        benchmark::ClobberMemory();
    }
    verify(state, b, s, offset);
    finish(state, s);
}

void kupl_memcpy2d_sync(benchmark::State &state) {
    const Shape s = shape_of(state);
    bench::Buffers &b = bench::buffers(s.matrix_bytes());
    BlockWalk walk(s);
    size_t offset = 0;
    poison(b, s);
    bench::EngineCounters counters;
    for (auto _ : state) {
        offset = walk.next();
        if (kupl_memcpy2d(b.dst, s.width, b.src + offset, s.pitch, s.width, s.height) != KUPL_OK) {
            bench::fail(state, "kupl_memcpy2d failed");
            break;
        }
    }
    counters.report(state);
    verify(state, b, s, offset);
    finish(state, s);
}

void kupl_memcpy2d_async_wait(benchmark::State &state) {
    const Shape s = shape_of(state);
    bench::Buffers &b = bench::buffers(s.matrix_bytes());
    BlockWalk walk(s);
    size_t offset = 0;
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    if (queue == nullptr || event == nullptr) {
        bench::fail(state, "kupl_queue_create or kupl_event_create failed");
    } else {
        poison(b, s);
        bench::EngineCounters counters;
        for (auto _ : state) {
            offset = walk.next();
            if (kupl_memcpy2d_async(b.dst, s.width, b.src + offset, s.pitch, s.width, s.height, queue,
                                    event) != KUPL_OK ||
                kupl_event_wait(event) != KUPL_OK) {
                bench::fail(state, "kupl_memcpy2d_async or kupl_event_wait failed");
                break;
            }
        }
        counters.report(state);
        verify(state, b, s, offset);
    }
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
    finish(state, s);
}

// Blocks of a row-major matrix with 4096 rows:
//  64 B x 4096 rows at pitch 4160 (8 doubles of a 520-double row, padded off a power of two),
//   8 B x 4096 rows at pitch 32 KiB (one column of a 4096 x 4096 double matrix),
// 512 B x 4096 rows at pitch 4160 (wider rows, close to contiguous speed).
void shapes(benchmark::internal::Benchmark *b) {
    b->ArgNames({"width", "pitch", "rows", "cold"});
    for (int64_t cold : {0, 1}) {
        b->Args({64, 4160, 4096, cold});
        b->Args({8, 32768, 4096, cold});
        b->Args({512, 4160, 4096, cold});
    }
    b->UseRealTime();
}

} // namespace

BENCHMARK(memcpy_per_row)->Apply(shapes);
BENCHMARK(kupl_memcpy2d_sync)->Apply(shapes);
BENCHMARK(kupl_memcpy2d_async_wait)->Apply(shapes);

int main(int argc, char **argv) {
    return bench::run_main(argc, argv);
}
