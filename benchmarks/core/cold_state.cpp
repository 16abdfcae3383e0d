// What a cold runtime costs a copy (issue 13's "cold" cases), and the machine's part in it.
//
// After 64 MiB of other memory traffic (a 32 MiB memcpy, as the sweep's "cold" state), every
// repetition times, in an order that rotates from repetition to repetition:
//   caller     the caller's own memcpy of N bytes
//   caller2    the same again: the A/A noise of the pair
//   kupl       kupl_memcpy_async on a queue + kupl_event_wait (the runtime's state is cold too)
//   kupl_warm  the same, after an untimed 256 B async + wait on other buffers: the runtime's
//              state is warm, the copy's buffers are as cold as the caller's
// two calls that copy nothing, for the floor under "kupl":
//   entry      kupl_get_version: a call into libkupl that touches none of the runtime's state
//              (the caller's PLT and GOT, libkupl's code): what any call into a library pays
//   query      kupl_event_query: the runtime's entry, a handle looked up, an event's state
// and two probes of the machine:
//   page       one load from a page last touched before the traffic: a TLB miss whose page walk
//              misses the caches too (on a virtual machine a two-level walk)
//   line       one load from a line flushed (clflush) on a page touched just before: a cache
//              miss alone (x86 only; 0 elsewhere)
// "runtime cold" = kupl - kupl_warm: what the runtime's own cold state (code, handles, queue,
// event, counters) adds. A copy must take 20x that for the 0.95x target to be within reach.
//
// --idle-us=N: instead of the traffic, N us of computing in registers (no memory touched, no
// system call): what the process's state loses while it only computes, which on a shared VM
// is not nothing (the sweep's "parked" state is 200 us of such compute).
//
// Usage: core_cold_state_bench [--reps=N] [--bytes=256,64K,...] [--idle-us=N]
// Exit status 1 if a KUPL call fails or a copy is wrong, 2 on bad arguments.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kupl.h"
#include "standalone_timing.h"

namespace {

using standalone_timing::alloc_pages;
using standalone_timing::compute;
using standalone_timing::die;
using standalone_timing::median;
using Clock = std::chrono::steady_clock;

volatile std::uint64_t g_sink;

class Bench {
  public:
    // idle_us > 0: computing that long replaces the traffic.
    explicit Bench(unsigned idle_us) : queue_(kupl_queue_create()), event_(kupl_event_create()) {
        if (queue_ == nullptr || event_ == nullptr)
            die("cannot create a queue and an event");
        traffic_src_ = alloc_pages(kTrafficBytes);
        traffic_dst_ = alloc_pages(kTrafficBytes);
        std::memset(traffic_src_, 1, kTrafficBytes);
        std::memset(traffic_dst_, 2, kTrafficBytes);
        probes_ = alloc_pages(kProbeBytes);
        std::memset(probes_, 3, kProbeBytes);
        if (idle_us > 0) {
            const std::uint64_t calibration = 10000000;
            const auto t0 = Clock::now();
            g_sink = compute(calibration, 1);
            const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
            idle_steps_ =
                static_cast<std::uint64_t>(static_cast<double>(calibration) * idle_us * 1000.0 / ns);
        }
    }
    ~Bench() {
        kupl_event_destroy(event_);
        kupl_queue_destroy(queue_);
        std::free(traffic_src_);
        std::free(traffic_dst_);
        std::free(probes_);
    }

    enum { kCaller, kCaller2, kKupl, kKuplWarm, kEntry, kQuery, kPage, kLine, kVariants };

    void run(size_t bytes, int reps) {
        unsigned char *src = alloc_pages(bytes), *dst = alloc_pages(bytes);
        for (size_t i = 0; i < bytes; ++i)
            src[i] = static_cast<unsigned char>(i * 131 + 7);
        std::vector<double> times[kVariants];
        for (int rep = 0; rep < reps; ++rep) {
            for (int k = 0; k < kVariants; ++k) {
                const int v = (k + rep) % kVariants;
                std::memset(dst, 0, bytes); // before the traffic: as cold as the source
                times[v].push_back(time_variant(v, dst, src, bytes, rep));
                if ((v == kKupl || v == kKuplWarm) && std::memcmp(dst, src, bytes) != 0)
                    die("a KUPL copy differs from its source");
            }
        }
        double m[kVariants];
        for (int v = 0; v < kVariants; ++v)
            m[v] = median(times[v]);
        std::printf("| %7zu | %8.0f | %4.2f | %8.0f | %8.0f | %8.0f | %5.0f | %5.0f | %5.0f | %5.0f |\n",
                    bytes, m[kCaller], m[kCaller] / m[kCaller2], m[kKupl], m[kKuplWarm],
                    m[kKupl] - m[kKuplWarm], m[kEntry], m[kQuery], m[kPage], m[kLine]);
        std::free(src);
        std::free(dst);
    }

  private:
    static constexpr size_t kTrafficBytes = 32u << 20; // copied: 64 MiB of traffic
    static constexpr size_t kProbeBytes = 64u << 20;   // a page of it per probe, never reused soon

    double time_variant(int v, unsigned char *dst, const unsigned char *src, size_t bytes, int rep) {
        // A page of the probe area this repetition alone uses (a stride of 33 pages, mod its size).
        unsigned char *probe = probes_ + (static_cast<size_t>(rep) * 33 * 4096) % kProbeBytes + 64;
        if (idle_steps_ > 0)
            g_sink = compute(idle_steps_, static_cast<std::uint64_t>(rep));
        else
            std::memcpy(traffic_dst_, traffic_src_, kTrafficBytes);
        if (v == kKuplWarm) {
            if (kupl_memcpy_async(warm_dst_, warm_src_, sizeof warm_src_, queue_, event_) != KUPL_OK ||
                kupl_event_wait(event_) != KUPL_OK)
                die("the warming copy failed");
        }
        if (v == kLine) {
#if defined(__x86_64__)
            g_sink =
                g_sink + *reinterpret_cast<volatile unsigned char *>(probe + 2048); // the page's TLB entry
            _mm_clflush(probe);
            _mm_mfence();
#else
            return 0;
#endif
        }
        const auto t0 = Clock::now();
        switch (v) {
        case kCaller:
        case kCaller2:
            std::memcpy(dst, src, bytes);
            break;
        case kKupl:
        case kKuplWarm:
            if (kupl_memcpy_async(dst, src, bytes, queue_, event_) != KUPL_OK ||
                kupl_event_wait(event_) != KUPL_OK)
                die("kupl_memcpy_async + kupl_event_wait failed");
            break;
        case kEntry: {
            kupl_version_t version;
            if (kupl_get_version(&version) != KUPL_OK)
                die("kupl_get_version failed");
            break;
        }
        case kQuery:
            if (kupl_event_query(event_) == KUPL_ERROR)
                die("kupl_event_query failed");
            break;
        case kPage:
        case kLine:
            g_sink = g_sink + *reinterpret_cast<volatile unsigned char *>(probe);
            break;
        }
        return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    }

    kupl_queue_h queue_;
    kupl_event_h event_;
    unsigned char *traffic_src_, *traffic_dst_, *probes_;
    std::uint64_t idle_steps_ = 0; // compute steps instead of the traffic; 0: the traffic
    unsigned char warm_src_[256] = {}, warm_dst_[256];
};

} // namespace

int main(int argc, char **argv) {
    int reps = 31;
    unsigned idle_us = 0;
    std::vector<size_t> sizes = {256, 64 << 10, 256 << 10};
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--reps=", 0) == 0) {
            reps = std::atoi(arg.c_str() + 7);
            if (reps < 1)
                return std::fprintf(stderr, "core_cold_state_bench: --reps must be >= 1\n"), 2;
        } else if (arg.rfind("--bytes=", 0) == 0) {
            sizes.clear();
            std::string list = arg.substr(8);
            for (size_t start = 0; start <= list.size();) {
                const size_t comma = std::min(list.find(',', start), list.size());
                const size_t bytes = standalone_timing::parse_size(list.substr(start, comma - start));
                if (bytes == 0)
                    return std::fprintf(stderr, "core_cold_state_bench: bad size in %s\n", arg.c_str()), 2;
                sizes.push_back(bytes);
                start = comma + 1;
            }
        } else if (arg.rfind("--idle-us=", 0) == 0) {
            char *end = nullptr;
            const unsigned long value = std::strtoul(arg.c_str() + 10, &end, 10);
            if (end == arg.c_str() + 10 || *end != '\0' || value < 1 || value > 1000000)
                return std::fprintf(stderr, "core_cold_state_bench: --idle-us must be 1..1000000\n"), 2;
            idle_us = static_cast<unsigned>(value);
        } else {
            std::fprintf(stderr,
                         "usage: core_cold_state_bench [--reps=N] [--bytes=256,64K,...] [--idle-us=N]\n");
            return 2;
        }
    }
    Bench bench(idle_us);
    if (idle_us > 0)
        std::printf(
            "after %u us of computing in registers (no memory traffic), medians of %d repetitions, ns\n\n",
            idle_us, reps);
    else
        std::printf("after 64 MiB of other memory traffic, medians of %d repetitions, ns\n\n", reps);
    std::printf("| bytes | caller | A/A | kupl | kupl, runtime warm | runtime cold | entry | query | page "
                "probe | line probe |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t bytes : sizes)
        bench.run(bytes, reps);
    return 0;
}
