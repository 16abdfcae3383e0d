// A reference for the large-copy figures, not a peer: the fastest plain copy this machine
// does with two threads (each streams half with non-temporal stores). Measured in the same run
// as memcpy and KUPL, it shows how close KUPL is to the memory system's limit, i.e. whether a
// missed ratio against memcpy is the library's fault or the hardware's.
#ifndef KUPL_BENCH_TWO_THREAD_STREAM_COPY_H
#define KUPL_BENCH_TWO_THREAD_STREAM_COPY_H

#include <atomic>
#include <cstddef>
#include <cstring>
#include <thread>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace bench {

// Copies n bytes; dst must be 16-byte aligned and n a multiple of 64 for the streaming path.
inline void stream_copy(unsigned char *dst, const unsigned char *src, size_t n) {
#if defined(__x86_64__)
    if (reinterpret_cast<uintptr_t>(dst) % 16 == 0 && n % 64 == 0) {
        for (size_t i = 0; i < n; i += 64) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
            const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), a);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), b);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), c);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), d);
        }
        _mm_sfence();
        return;
    }
#endif
    std::memcpy(dst, src, n);
}

// A helper thread that copies the second half of each copy while the caller copies the first.
// It spins between copies only while this object lives (one benchmark run), so it never
// slows other benchmarks down.
class TwoThreadStreamCopier {
  public:
    TwoThreadStreamCopier() : helper_([this] { run(); }) {}
    ~TwoThreadStreamCopier() {
        stop_.store(true, std::memory_order_release);
        helper_.join();
    }

    void copy(unsigned char *dst, const unsigned char *src, size_t n) {
        const size_t half = n / 2 / 64 * 64;
        dst_ = dst + half;
        src_ = src + half;
        n_ = n - half;
        const unsigned generation = go_.load(std::memory_order_relaxed) + 1;
        go_.store(generation, std::memory_order_release);
        stream_copy(dst, src, half);
        while (done_.load(std::memory_order_acquire) != generation)
            std::this_thread::yield();
    }

  private:
    void run() {
        // Free of the caller's affinity (a `taskset -c 0` run keeps the caller on CPU 0, as KUPL's
        // channels are free of it too), so the two halves really run on two cores.
        cpu_set_t all;
        CPU_ZERO(&all);
        for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) && cpu < CPU_SETSIZE; ++cpu)
            CPU_SET(cpu, &all);
        pthread_setaffinity_np(pthread_self(), sizeof all, &all);
        unsigned seen = 0;
        while (!stop_.load(std::memory_order_acquire)) {
            const unsigned generation = go_.load(std::memory_order_acquire);
            if (generation == seen) {
                std::this_thread::yield();
                continue;
            }
            seen = generation;
            stream_copy(dst_, src_, n_);
            done_.store(generation, std::memory_order_release);
        }
    }

    unsigned char *dst_ = nullptr;
    const unsigned char *src_ = nullptr;
    size_t n_ = 0;
    std::atomic<unsigned> go_{0}, done_{0};
    std::atomic<bool> stop_{false};
    std::thread helper_;
};

} // namespace bench

#endif // KUPL_BENCH_TWO_THREAD_STREAM_COPY_H
