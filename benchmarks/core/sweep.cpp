// The "never slower" sweep (issue 13): for every 1D size and 2D shape, hot and cold, with the
// runtime's threads awake or parked, how kupl_memcpy*_async + wait compares with the caller doing
// the copy itself (memcpy, or one memcpy per row), and how much of a copy is hidden behind
// compute on the caller.
//
// A plain timing program, not Google Benchmark: every repetition runs all variants of a case one
// after the other, in an order that rotates from repetition to repetition, so the noise of a
// shared machine hits them alike; ratios are taken per repetition (paired) and reported as
// medians. Variants, each timed from the first call to the last return:
//   caller     the caller's own copy (memcpy; 2D: one memcpy per row)
//   caller2    the same again: the A/A noise of the pair (caller / caller2)
//   kupl       kupl_memcpy(2d)_async on a queue + kupl_event_wait
//   compute    a register-only compute loop calibrated to take as long as `caller`
//   serial     caller copy, then compute: what the program does without KUPL
//   overlap    kupl async copy, compute, kupl_event_wait
// Figures: ratio = caller / kupl (> 1: KUPL faster), aa = caller / caller2, gain = serial /
// overlap, hidden = (serial - overlap) / caller (share of the copy hidden by compute: 100% is
// perfect overlap), overhead = kupl - caller (ns; what the API adds to a copy it runs inline).
// States, set up before every timed variant alike:
//   hot   the copy's buffers are in the caches (used by the previous variant);
//   cold  64 MiB of other memory traffic (a 32 MiB memcpy) first;
//   awake the runtime's threads have just worked (copies of KUPL_MEMCPY_MT_THRESHOLD bytes, the
//         smallest the engine splits, + wait, until one went to a channel without waking it:
//         they spin); hot cases then copy once more (the caller's copy), so that their data is
//         back in the caches those copies went through (until 2026-12-07 it was not: hot/awake
//         copies up to 512 KiB ran on data the wake-up copies had pushed out of L2);
//   parked the caller first computes for max(200 us, 4 x KUPL_SPIN_US): the threads have parked
//         (in cold mode the traffic itself takes that long).
//
// Usage: core_sweep_bench [--quick] [--reps=N] [--json=FILE] [--only=1d|2d] [--max=SIZE]
// Exit status 1 if a KUPL call fails or a copy is wrong, 2 on bad arguments.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include "kupl.h"
#include "kupl_ext.h"
#include "standalone_timing.h"

namespace {

using standalone_timing::alloc_pages;
using standalone_timing::compute;
using standalone_timing::die;
using standalone_timing::median;
using standalone_timing::parse_size;
using Clock = std::chrono::steady_clock;

inline double ns_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

volatile uint64_t g_sink;

// The caller's own 2D copy: what a program writes without a 2D copy call.
__attribute__((noinline)) void memcpy_rows(unsigned char *dst, size_t dpitch, const unsigned char *src,
                                           size_t spitch, size_t width, size_t height) {
    for (size_t r = 0; r < height; ++r)
        std::memcpy(dst + r * dpitch, src + r * spitch, width);
}

struct Case {
    size_t width, height, pitch; // height 1: a 1D copy of `width` bytes
    bool cold, parked;
    bool is_2d() const { return height > 1; }
    size_t bytes() const { return width * height; }
    size_t src_bytes() const { return is_2d() ? (height - 1) * pitch + width : width; }
};

struct Result {
    Case c;
    int reps = 0;
    double caller_ns = 0, caller2_ns = 0, kupl_ns = 0, compute_ns = 0, serial_ns = 0, overlap_ns = 0;
    double ratio = 0, ratio_p25 = 0, ratio_p75 = 0, aa = 0, gain = 0, ideal_gain = 0, hidden = 0,
           overhead_ns = 0;
    double inline_per_copy = 0, wakes_per_copy = 0;
};

class Sweep {
  public:
    Sweep(int reps, double compute_ns_per_iter, unsigned spin_us, size_t wake_bytes)
        : reps_(reps), ns_per_iter_(compute_ns_per_iter), park_ns_(std::max(200000.0, 4000.0 * spin_us)),
          wake_bytes_(wake_bytes) {
        queue_ = kupl_queue_create();
        event_ = kupl_event_create();
        if (queue_ == nullptr || event_ == nullptr)
            die("kupl_queue_create / kupl_event_create failed");
        evict_src_ = alloc_pages(kEvictBytes);
        evict_dst_ = alloc_pages(kEvictBytes);
        std::memset(evict_src_, 1, kEvictBytes);
        std::memset(evict_dst_, 2, kEvictBytes);
        wake_src_ = alloc_pages(wake_bytes_);
        wake_dst_ = alloc_pages(wake_bytes_);
        std::memset(wake_src_, 3, wake_bytes_);
        std::memset(wake_dst_, 4, wake_bytes_);
    }

    Result run(const Case &c) {
        prepare_buffers(c);
        c_ = c;
        // Calibrate the compute to the caller's copy in this very state.
        std::vector<double> probe;
        for (int i = 0; i < 5; ++i)
            probe.push_back(time_variant(kCaller));
        iterations_ = static_cast<uint64_t>(std::max(1.0, median(probe) / ns_per_iter_));

        kuplx_counters_t before{}, after{};
        kuplx_get_counters(&before);
        std::vector<double> t[kVariants];
        for (int r = 0; r < reps_; ++r)
            for (int k = 0; k < kVariants; ++k) {
                const int v = (k + r) % kVariants;
                t[v].push_back(time_variant(v));
            }
        kuplx_get_counters(&after);
        verify();

        Result res;
        res.c = c;
        res.reps = reps_;
        res.caller_ns = median(t[kCaller]);
        res.caller2_ns = median(t[kCaller2]);
        res.kupl_ns = median(t[kKupl]);
        res.compute_ns = median(t[kCompute]);
        res.serial_ns = median(t[kSerial]);
        res.overlap_ns = median(t[kOverlap]);
        std::vector<double> ratio, aa, gain, over;
        for (int r = 0; r < reps_; ++r) {
            ratio.push_back(t[kCaller][r] / t[kKupl][r]);
            aa.push_back(t[kCaller][r] / t[kCaller2][r]);
            gain.push_back(t[kSerial][r] / t[kOverlap][r]);
            over.push_back(t[kKupl][r] - t[kCaller][r]);
        }
        res.ratio = median(ratio);
        std::sort(ratio.begin(), ratio.end());
        res.ratio_p25 = ratio[ratio.size() / 4];
        res.ratio_p75 = ratio[(ratio.size() * 3) / 4];
        res.aa = median(aa);
        res.gain = median(gain);
        res.ideal_gain = res.serial_ns / std::max(res.caller_ns, res.compute_ns);
        res.hidden = (res.serial_ns - res.overlap_ns) / std::max(1.0, res.caller_ns);
        res.overhead_ns = median(over);
        const double copies = 2.0 * reps_ + 5; // kupl + overlap variants (the wake-up copies not counted)
        res.inline_per_copy = static_cast<double>(after.copies_inline - before.copies_inline) / copies;
        res.wakes_per_copy = static_cast<double>(after.worker_wakes - before.worker_wakes) / copies;
        return res;
    }

  private:
    enum { kCaller, kCaller2, kKupl, kCompute, kSerial, kOverlap, kVariants };
    static constexpr size_t kEvictBytes = 32u << 20; // copied: 64 MiB of traffic
    static constexpr int kMaxWakeCopies = 64;
    static constexpr size_t kRewarmBytes = 1u << 20;

    void prepare_buffers(const Case &c) {
        if (c.src_bytes() > src_bytes_) {
            std::free(src_);
            src_ = alloc_pages(c.src_bytes());
            src_bytes_ = c.src_bytes();
            for (size_t i = 0; i < src_bytes_; ++i)
                src_[i] = static_cast<unsigned char>(i * 131 + (i >> 12) + 7);
        }
        if (c.bytes() > dst_bytes_) {
            std::free(dst_);
            dst_ = alloc_pages(c.bytes());
            dst_bytes_ = c.bytes();
            std::memset(dst_, 0, dst_bytes_);
        }
    }

    // Brings the machine into the case's state; the same for every variant.
    void set_state() {
        if (c_.cold)
            std::memcpy(evict_dst_, evict_src_, kEvictBytes);
        if (c_.parked) {
            if (!c_.cold) {
                const auto t0 = Clock::now();
                uint64_t x = 1;
                while (ns_since(t0) < park_ns_)
                    x = compute(1000, x);
                g_sink = x;
            }
        } else {
            // Until a copy went to the channels without waking one (a channel was spinning):
            // while they sleep the engine keeps copies that do not pay for a wake-up on the
            // caller until a stream of them does, and a channel it woke takes a while to come.
            for (int i = 0; i < kMaxWakeCopies; ++i) {
                kuplx_counters_t before{}, after{};
                kuplx_get_counters(&before);
                if (kupl_memcpy_async(wake_dst_, wake_src_, wake_bytes_, queue_, event_) != KUPL_OK ||
                    kupl_event_wait(event_) != KUPL_OK)
                    die("the wake-up copy failed");
                kuplx_get_counters(&after);
                if (after.pieces_executed != before.pieces_executed &&
                    after.worker_wakes == before.worker_wakes)
                    break;
            }
            // Those copies moved 2 x wake_bytes through the caches: a hot case's buffers are
            // brought back, as a program has the data it just used (a few microseconds: the
            // channels still spin). A copy that moves more would not stay in L2 anyway, and
            // bringing it back would outlast the channels' spin.
            if (!c_.cold && 2 * c_.bytes() <= kRewarmBytes)
                caller_copy();
        }
    }

    void caller_copy() {
        if (c_.is_2d())
            memcpy_rows(dst_, c_.width, src_, c_.pitch, c_.width, c_.height);
        else
            std::memcpy(dst_, src_, c_.width);
    }
    void kupl_submit() {
        const int rc = c_.is_2d() ? kupl_memcpy2d_async(dst_, c_.width, src_, c_.pitch, c_.width, c_.height,
                                                        queue_, event_)
                                  : kupl_memcpy_async(dst_, src_, c_.width, queue_, event_);
        if (rc != KUPL_OK)
            die("kupl_memcpy(2d)_async failed");
    }
    void kupl_wait() {
        if (kupl_event_wait(event_) != KUPL_OK)
            die("kupl_event_wait failed");
    }

    double time_variant(int v) {
        set_state();
        const auto t0 = Clock::now();
        switch (v) {
        case kCaller:
        case kCaller2:
            caller_copy();
            break;
        case kKupl:
            kupl_submit();
            kupl_wait();
            break;
        case kCompute:
            g_sink = compute(iterations_, 1);
            break;
        case kSerial:
            caller_copy();
            g_sink = compute(iterations_, 2);
            break;
        case kOverlap:
            kupl_submit();
            g_sink = compute(iterations_, 3);
            kupl_wait();
            break;
        }
        return ns_since(t0);
    }

    // One more KUPL copy into a poisoned destination, checked row by row.
    void verify() {
        std::memset(dst_, 0, c_.bytes());
        kupl_submit();
        kupl_wait();
        for (size_t r = 0; r < c_.height; ++r) {
            const unsigned char *s = src_ + r * (c_.is_2d() ? c_.pitch : 0);
            if (std::memcmp(dst_ + r * c_.width, s, c_.width) != 0)
                die("a KUPL copy differs from its source");
        }
    }

    const int reps_;
    const double ns_per_iter_;
    const double park_ns_;
    const size_t wake_bytes_;
    kupl_queue_h queue_ = nullptr;
    kupl_event_h event_ = nullptr;
    unsigned char *src_ = nullptr, *dst_ = nullptr;
    size_t src_bytes_ = 0, dst_bytes_ = 0;
    unsigned char *evict_src_, *evict_dst_, *wake_src_, *wake_dst_;
    Case c_{};
    uint64_t iterations_ = 1;
};

double calibrate_compute() {
    std::vector<double> per_iter;
    for (int i = 0; i < 9; ++i) {
        const auto t0 = Clock::now();
        g_sink = compute(1u << 20, static_cast<uint64_t>(i));
        per_iter.push_back(ns_since(t0) / (1u << 20));
    }
    return median(per_iter);
}

std::string size_name(size_t n) {
    char buf[32];
    if (n >= (1u << 30) && n % (1u << 30) == 0)
        std::snprintf(buf, sizeof buf, "%zuG", n >> 30);
    else if (n >= (1u << 20) && n % (1u << 20) == 0)
        std::snprintf(buf, sizeof buf, "%zuM", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        std::snprintf(buf, sizeof buf, "%zuK", n >> 10);
    else
        std::snprintf(buf, sizeof buf, "%zu", n);
    return buf;
}

std::string case_name(const Case &c) {
    if (!c.is_2d())
        return "1D " + size_name(c.width);
    return "2D " + size_name(c.width) + "B x " + std::to_string(c.height) + " @" + size_name(c.pitch);
}

// The shapes: 1D sizes, and 2D row widths 1 B..64 KiB with row counts up to 10^6, as far as the
// source fits in `max_footprint`. Pitches as applications have them: a matrix column (8 B at
// 32 KiB), a halo row of a padded grid, a tile of a wider matrix.
std::vector<Case> shapes(bool quick, size_t max_footprint, bool want_1d, bool want_2d) {
    std::vector<Case> out;
    const std::vector<size_t> sizes1d =
        quick
            ? std::vector<size_t>{256,        4u << 10, 16u << 10, 64u << 10,
                                  256u << 10, 1u << 20, 4u << 20,  64u << 20}
            : std::vector<size_t>{64,       256,      1u << 10,  4u << 10,  16u << 10,  64u << 10, 256u << 10,
                                  1u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30};
    struct Shape2 {
        size_t width, pitch;
        std::vector<size_t> rows;
    };
    const std::vector<Shape2> shapes2d =
        quick ? std::vector<Shape2>{{8, 32u << 10, {256, 1024, 8192}},
                                    {64, 4160, {1024, 16384}},
                                    {1, 64, {65536}},
                                    {4096, 8192 + 64, {256}}}
              : std::vector<Shape2>{{1, 64, {1024, 65536, 1000000}},
                                    {8, 32u << 10, {16, 256, 1024, 4096, 8192}},
                                    {8, 128, {1000000}},
                                    {64, 4160, {16, 1024, 4096, 16384, 65536}},
                                    {512, 1024 + 64, {256, 4096, 65536}},
                                    {4096, 8192 + 64, {16, 256, 4096, 16384}},
                                    {65536, 2 * 65536, {4, 64, 1024}}};
    for (int cold = 0; cold < 2; ++cold)
        for (int parked = 0; parked < 2; ++parked) {
            if (want_1d)
                for (size_t n : sizes1d) {
                    // Beyond the last-level cache a copy is cold whatever came before it.
                    if (2 * n > max_footprint || (cold && n >= (64u << 20)))
                        continue;
                    out.push_back({n, 1, n, cold != 0, parked != 0});
                }
            if (want_2d)
                for (const Shape2 &s : shapes2d)
                    for (size_t rows : s.rows) {
                        const Case c{s.width, rows, s.pitch, cold != 0, parked != 0};
                        if (c.src_bytes() + c.bytes() > max_footprint)
                            continue;
                        out.push_back(c);
                    }
        }
    return out;
}

void write_json(const std::string &path, const std::vector<Result> &results, bool quick, int reps,
                double ns_per_iter) {
    FILE *f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
        die("cannot write the JSON file");
    kuplx_engine_info_t info{};
    kuplx_get_engine_info(&info);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) != 3)
        load[0] = load[1] = load[2] = -1;
    std::fprintf(f,
                 "{\n  \"context\": {\"quick\": %s, \"reps\": %d, \"compute_ns_per_iter\": %.4f, "
                 "\"load_after\": [%.2f, %.2f, %.2f], \"cores\": %d, \"backend\": \"%s\", \"channels\": %d, "
                 "\"inline_threshold\": %zu, \"mt_threshold\": %zu, \"spin_us\": %u},\n  \"cases\": [\n",
                 quick ? "true" : "false", reps, ns_per_iter, load[0], load[1], load[2], info.num_cores,
                 info.backend, info.num_channels, static_cast<size_t>(info.inline_threshold),
                 static_cast<size_t>(info.mt_threshold), static_cast<unsigned>(info.spin_us));
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        std::fprintf(
            f,
            "    {\"name\": \"%s\", \"kind\": \"%s\", \"width\": %zu, \"height\": %zu, \"pitch\": %zu, "
            "\"bytes\": %zu, \"temp\": \"%s\", \"threads\": \"%s\", \"reps\": %d, "
            "\"caller_ns\": %.1f, \"caller2_ns\": %.1f, \"kupl_ns\": %.1f, \"compute_ns\": %.1f, "
            "\"serial_ns\": %.1f, \"overlap_ns\": %.1f, \"ratio\": %.4f, \"ratio_p25\": %.4f, "
            "\"ratio_p75\": %.4f, \"aa\": %.4f, \"gain\": %.4f, \"ideal_gain\": %.4f, \"hidden\": %.4f, "
            "\"overhead_ns\": %.1f, \"inline_per_copy\": %.3f, \"wakes_per_copy\": %.3f}%s\n",
            case_name(r.c).c_str(), r.c.is_2d() ? "2d" : "1d", r.c.width, r.c.height, r.c.pitch, r.c.bytes(),
            r.c.cold ? "cold" : "hot", r.c.parked ? "parked" : "awake", r.reps, r.caller_ns, r.caller2_ns,
            r.kupl_ns, r.compute_ns, r.serial_ns, r.overlap_ns, r.ratio, r.ratio_p25, r.ratio_p75, r.aa,
            r.gain, r.ideal_gain, r.hidden, r.overhead_ns, r.inline_per_copy, r.wakes_per_copy,
            i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

} // namespace

int main(int argc, char **argv) {
    bool quick = false;
    int reps = 15;
    std::string json, only;
    size_t max_footprint = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a.rfind("--reps=", 0) == 0)
            reps = std::atoi(a.c_str() + 7);
        else if (a.rfind("--json=", 0) == 0)
            json = a.substr(7);
        else if (a.rfind("--only=", 0) == 0)
            only = a.substr(7);
        else if (a.rfind("--max=", 0) == 0) {
            max_footprint = parse_size(a.substr(6));
            if (max_footprint == 0) {
                std::fprintf(stderr, "core_sweep_bench: bad size in %s (e.g. 512M)\n", a.c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "usage: core_sweep_bench [--quick] [--reps=N] [--json=FILE] [--only=1d|2d] "
                                 "[--max=SIZE]\n");
            return 2;
        }
    }
    if (reps < 1 || (!only.empty() && only != "1d" && only != "2d")) {
        std::fprintf(stderr, "core_sweep_bench: bad --reps or --only\n");
        return 2;
    }
    if (max_footprint == 0)
        max_footprint = quick ? (size_t{160} << 20) : (size_t{2} << 30) + (size_t{64} << 20);

    kuplx_engine_info_t info{};
    if (kuplx_get_engine_info(&info) != KUPL_OK)
        die("kuplx_get_engine_info failed");
    const double ns_per_iter = calibrate_compute();
    Sweep sweep(reps, ns_per_iter, info.spin_us, std::max<size_t>(info.mt_threshold, 4096));
    std::vector<Result> results;
    std::printf("%-28s %-4s %-6s %11s %11s %7s %6s %6s %6s %7s %9s\n", "case", "temp", "thread", "caller us",
                "kupl us", "ratio", "aa", "gain", "ideal", "hidden", "+ns");
    for (const Case &c : shapes(quick, max_footprint, only != "2d", only != "1d")) {
        const Result r = sweep.run(c);
        results.push_back(r);
        std::printf("%-28s %-4s %-6s %11.2f %11.2f %7.2f %6.2f %6.2f %6.2f %6.0f%% %9.0f\n",
                    case_name(c).c_str(), c.cold ? "cold" : "hot", c.parked ? "parked" : "awake",
                    r.caller_ns / 1e3, r.kupl_ns / 1e3, r.ratio, r.aa, r.gain, r.ideal_gain, 100 * r.hidden,
                    r.overhead_ns);
        std::fflush(stdout);
    }
    if (!json.empty())
        write_json(json, results, quick, reps, ns_per_iter);
    return 0;
}
