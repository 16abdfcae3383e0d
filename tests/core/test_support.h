// Helpers shared by the core test suites: RAII handles, seeded byte patterns,
// a gate that holds a queue item until the test opens it, and run-time scaling
// for sanitizer builds.
#ifndef KUPL_TESTS_CORE_TEST_SUPPORT_H
#define KUPL_TESTS_CORE_TEST_SUPPORT_H

#include "kupl.h"
#include "kupl_ext.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kupl_test {

// Iteration counts shrink under TSan/ASan, which run ~10x slower.
#ifdef KUPL_TEST_SANITIZED
constexpr int kSlowdown = 8;
#else
constexpr int kSlowdown = 1;
#endif
inline int scaled(int n) {
    return n / kSlowdown > 0 ? n / kSlowdown : 1;
}

struct QueueDeleter {
    void operator()(kupl_queue_h q) const { kupl_queue_destroy(q); }
};
struct EventDeleter {
    void operator()(kupl_event_h e) const { kupl_event_destroy(e); }
};
using Queue = std::unique_ptr<struct kupl_queue, QueueDeleter>;
using Event = std::unique_ptr<struct kupl_event, EventDeleter>;

inline Queue make_queue() {
    return Queue(kupl_queue_create());
}
inline Event make_event() {
    return Event(kupl_event_create());
}

// splitmix64: a deterministic byte stream, different for each seed.
inline uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline void fill_pattern(void *buf, size_t n, uint64_t seed) {
    auto *p = static_cast<unsigned char *>(buf);
    uint64_t state = seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = splitmix64(state);
        std::memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = splitmix64(state);
        std::memcpy(p + i, &v, n - i);
    }
}

inline std::vector<unsigned char> pattern(size_t n, uint64_t seed) {
    std::vector<unsigned char> v(n);
    fill_pattern(v.data(), n, seed);
    return v;
}

// FNV-1a over a byte range.
inline uint64_t checksum(const void *buf, size_t n) {
    const auto *p = static_cast<const unsigned char *>(buf);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// True if no byte of v was written (v started all zero).
inline bool all_zero(const std::vector<unsigned char> &v) {
    return std::all_of(v.begin(), v.end(), [](unsigned char b) { return b == 0; });
}

// Index of the first differing byte, or SIZE_MAX if equal.
inline size_t first_difference(const void *a, const void *b, size_t n) {
    if (std::memcmp(a, b, n) == 0)
        return SIZE_MAX;
    const auto *pa = static_cast<const unsigned char *>(a);
    const auto *pb = static_cast<const unsigned char *>(b);
    for (size_t i = 0; i < n; ++i)
        if (pa[i] != pb[i])
            return i;
    return SIZE_MAX;
}

inline kuplx_engine_info_t engine_info() {
    kuplx_engine_info_t info{};
    kuplx_get_engine_info(&info);
    return info;
}

inline kuplx_counters_t counters() {
    kuplx_counters_t c{};
    kuplx_get_counters(&c);
    return c;
}

// Holds whatever runs after it on a queue until open() (or the watchdog delay, so a
// test that fails to open it still ends). `entered` says the item has started.
class Gate {
  public:
    explicit Gate(std::chrono::milliseconds watchdog = std::chrono::seconds(10)) : watchdog_(watchdog) {}

    // Enqueues the blocking item on q; returns kupl_queue_submit's result.
    int block(kupl_queue_h q) {
        kupl_queue_item_desc_t desc{};
        desc.func = &Gate::run;
        desc.args = this;
        return kupl_queue_submit(q, &desc);
    }
    void open() { open_.store(true, std::memory_order_release); }
    bool is_open() const { return open_.load(std::memory_order_acquire); }
    bool entered() const { return entered_.load(std::memory_order_acquire); }
    bool finished() const { return finished_.load(std::memory_order_acquire); }
    bool timed_out() const { return timed_out_.load(std::memory_order_acquire); }
    void wait_entered() const {
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!entered() && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }

  private:
    static void run(void *self) {
        auto *g = static_cast<Gate *>(self);
        g->entered_.store(true, std::memory_order_release);
        auto end = std::chrono::steady_clock::now() + g->watchdog_;
        while (!g->is_open()) {
            if (std::chrono::steady_clock::now() > end) {
                g->timed_out_.store(true, std::memory_order_release);
                break;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        g->finished_.store(true, std::memory_order_release);
    }

    std::chrono::milliseconds watchdog_;
    std::atomic<bool> open_{false};
    std::atomic<bool> entered_{false};
    std::atomic<bool> finished_{false};
    std::atomic<bool> timed_out_{false};
};

// Submits a callable through the C API (heap-owned, freed by the item).
template <class F> int submit_fn(kupl_queue_h q, F f) {
    struct Box {
        F f;
    };
    kupl_queue_item_desc_t desc{};
    desc.func = [](void *p) {
        std::unique_ptr<Box> box(static_cast<Box *>(p));
        box->f();
    };
    auto *box = new Box{std::move(f)};
    desc.args = box;
    int rc = kupl_queue_submit(q, &desc);
    if (rc != KUPL_OK)
        delete box;
    return rc;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace kupl_test

#endif
