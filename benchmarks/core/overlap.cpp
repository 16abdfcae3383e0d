// Overlap of a copy with computation on the calling thread.
//
// A compute loop (registers only) is calibrated to take as long as memcpy of the same
// bytes on the calling thread. Each repetition then times, in rotating order:
//   memcpy alone, kupl_memcpy_async + wait alone, compute alone, and
//   "together": kupl_memcpy_async, compute, kupl_event_wait.
// speedup          = (memcpy + compute) / together   (the serial program / the overlapped one;
//                    ideal (a+b)/max(a,b), 2.0 when equal)
// compute slowdown = compute time while the copy runs / compute alone
// The report also gives (KUPL copy alone + compute) / together: below the memcpy-based figure
// when the copy alone is faster than memcpy (a waiting caller helps it; a computing one cannot).
// Medians over the repetitions. Exit status 1 if any KUPL call fails or a copy is wrong.
//
// Usage: overlap [--bytes=4M,64M,256M] [--reps=15] [--json=FILE]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>

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

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// compute(): bound by the core, not by memory, so any slowdown while the copy runs comes from
// sharing the machine, not the data.
volatile uint64_t g_sink; // keeps compute() results alive

struct Args {
    std::vector<size_t> sizes{4u << 20, 64u << 20, 256u << 20};
    int reps = 15;
    std::string json;
};

Args parse_args(int argc, char **argv) {
    Args args;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--bytes=", 0) == 0) {
            args.sizes.clear();
            std::string list = a.substr(8) + ",";
            for (size_t pos; (pos = list.find(',')) != std::string::npos; list.erase(0, pos + 1)) {
                const size_t bytes = parse_size(list.substr(0, pos));
                if (bytes == 0) {
                    std::fprintf(stderr, "overlap: bad size '%s'\n", list.substr(0, pos).c_str());
                    std::exit(2);
                }
                args.sizes.push_back(bytes);
            }
        } else if (a.rfind("--reps=", 0) == 0) {
            args.reps = std::atoi(a.c_str() + 7);
            if (args.reps < 1) {
                std::fprintf(stderr, "overlap: --reps must be at least 1\n");
                std::exit(2);
            }
        } else if (a.rfind("--json=", 0) == 0) {
            args.json = a.substr(7);
        } else {
            std::fprintf(stderr, "usage: overlap [--bytes=4M,64M,256M] [--reps=15] [--json=FILE]\n");
            std::exit(2);
        }
    }
    return args;
}

struct Result {
    size_t bytes = 0;
    int reps = 0;
    double memcpy_s = 0, kupl_copy_s = 0, compute_s = 0, together_s = 0;
    double submit_s = 0, compute_during_s = 0, wait_after_compute_s = 0;
    double wakes_per_copy = 0, pieces_per_copy = 0;
    std::string caller_cpus; // e.g. "cpu0 x14 cpu1 x1": where the overlapped copies were submitted
    double speedup() const { return (memcpy_s + compute_s) / together_s; }
    double ideal() const { return (memcpy_s + compute_s) / std::max(memcpy_s, compute_s); }
    double slowdown() const { return compute_during_s / compute_s; }
};

class Bench {
  public:
    explicit Bench(size_t bytes) : bytes_(bytes) {
        src_ = alloc_pages(bytes);
        dst_ = alloc_pages(bytes);
        for (size_t i = 0; i < bytes; ++i)
            src_[i] = static_cast<unsigned char>(i * 7 + (i >> 13));
        std::memset(dst_, 0, bytes);
        queue_ = kupl_queue_create();
        event_ = kupl_event_create();
        if (queue_ == nullptr || event_ == nullptr)
            die("kupl_queue_create / kupl_event_create failed");
    }
    ~Bench() {
        kupl_event_destroy(event_);
        kupl_queue_destroy(queue_);
        std::free(src_);
        std::free(dst_);
    }

    double time_memcpy() {
        const auto t0 = Clock::now();
        std::memcpy(dst_, src_, bytes_);
        return seconds_since(t0);
    }
    double time_kupl_copy() {
        const auto t0 = Clock::now();
        submit();
        wait();
        return seconds_since(t0);
    }
    double time_compute() {
        const auto t0 = Clock::now();
        g_sink = compute(iterations_, g_sink);
        return seconds_since(t0);
    }
    // One overlapped copy: the whole span, the submit call, the compute part and the wait left
    // after compute.
    void time_together(double &together, double &submit_part, double &compute_part, double &wait_part) {
        caller_cpus_.push_back(sched_getcpu());
        const auto t0 = Clock::now();
        submit();
        const auto c0 = Clock::now();
        g_sink = compute(iterations_, g_sink);
        const auto c1 = Clock::now();
        wait();
        const auto t1 = Clock::now();
        together = std::chrono::duration<double>(t1 - t0).count();
        submit_part = std::chrono::duration<double>(c0 - t0).count();
        compute_part = std::chrono::duration<double>(c1 - c0).count();
        wait_part = std::chrono::duration<double>(t1 - c1).count();
    }

    // Sizes the compute loop to the median time of memcpy alone.
    void calibrate() {
        std::vector<double> copies, probe;
        for (int i = 0; i < 9; ++i)
            copies.push_back(time_memcpy());
        const double target = median(copies);
        iterations_ = 1u << 20;
        for (int round = 0; round < 3; ++round) {
            probe.clear();
            for (int i = 0; i < 5; ++i)
                probe.push_back(time_compute());
            iterations_ = std::max<uint64_t>(1, static_cast<uint64_t>(iterations_ * target / median(probe)));
        }
    }

    // One extra overlapped copy into a zeroed destination, checked byte for byte.
    void verify() {
        std::memset(dst_, 0, bytes_);
        double a, b, c, d;
        time_together(a, b, c, d);
        if (std::memcmp(dst_, src_, bytes_) != 0)
            die("verification of the copied bytes failed");
    }

    // CPUs the caller was on when it submitted the overlapped copies.
    const std::vector<int> &caller_cpus() const { return caller_cpus_; }

  private:
    void submit() {
        if (kupl_memcpy_async(dst_, src_, bytes_, queue_, event_) != KUPL_OK)
            die("kupl_memcpy_async failed");
    }
    void wait() {
        if (kupl_event_wait(event_) != KUPL_OK)
            die("kupl_event_wait failed");
    }

    size_t bytes_;
    unsigned char *src_ = nullptr, *dst_ = nullptr;
    kupl_queue_h queue_ = nullptr;
    kupl_event_h event_ = nullptr;
    uint64_t iterations_ = 1;
    std::vector<int> caller_cpus_;
};

Result measure(size_t bytes, int reps) {
    Bench bench(bytes);
    bench.calibrate();
    kuplx_counters_t before{}, after{};
    kuplx_get_counters(&before);
    std::vector<double> mem, kc, comp, tog, submit, during, tail;
    for (int r = 0; r < reps; ++r) {
        // Rotate the order so slow phases of a noisy host do not always hit the same step.
        for (int step = 0; step < 4; ++step) {
            switch ((step + r) % 4) {
            case 0:
                mem.push_back(bench.time_memcpy());
                break;
            case 1:
                kc.push_back(bench.time_kupl_copy());
                break;
            case 2:
                comp.push_back(bench.time_compute());
                break;
            default: {
                double t, s, c, w;
                bench.time_together(t, s, c, w);
                tog.push_back(t);
                submit.push_back(s);
                during.push_back(c);
                tail.push_back(w);
            }
            }
        }
    }
    kuplx_get_counters(&after);
    bench.verify();
    Result res;
    res.bytes = bytes;
    res.reps = reps;
    res.memcpy_s = median(mem);
    res.kupl_copy_s = median(kc);
    res.compute_s = median(comp);
    res.together_s = median(tog);
    res.submit_s = median(submit);
    res.compute_during_s = median(during);
    res.wait_after_compute_s = median(tail);
    const double copies = 2.0 * reps; // kupl copy alone + together
    res.wakes_per_copy = (after.worker_wakes - before.worker_wakes) / copies;
    res.pieces_per_copy = (after.pieces_executed - before.pieces_executed) / copies;
    std::vector<int> cpus = bench.caller_cpus();
    std::sort(cpus.begin(), cpus.end());
    for (size_t i = 0; i < cpus.size();) {
        const size_t j = std::upper_bound(cpus.begin(), cpus.end(), cpus[i]) - cpus.begin();
        res.caller_cpus += (res.caller_cpus.empty() ? "" : " ") + std::string("cpu") +
                           std::to_string(cpus[i]) + " x" + std::to_string(j - i);
        i = j;
    }
    return res;
}

void write_json(const std::string &path, const std::vector<Result> &results) {
    FILE *f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
        die(("opening " + path).c_str());
    kuplx_engine_info_t info{};
    kuplx_get_engine_info(&info);
    std::string placement;
    for (int channel = 0; channel < info.num_channels; ++channel) {
        char where[128] = "";
        kuplx_get_channel_placement(channel, where, sizeof where);
        placement += (channel ? "; " : "") + std::string(where);
    }
    std::fprintf(f,
                 "{\n  \"context\": {\"kupl_backend\": \"%s\", \"kupl_channels\": %d, \"kupl_spin_us\": %u, "
                 "\"kupl_channel_placement\": \"%s\"},\n",
                 info.backend, info.num_channels, info.spin_us, placement.c_str());
    std::fprintf(f, "  \"results\": [\n");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        std::fprintf(f,
                     "    {\"bytes\": %zu, \"reps\": %d, \"memcpy_ns\": %.0f, \"kupl_copy_ns\": %.0f, "
                     "\"compute_ns\": %.0f, \"together_ns\": %.0f, \"submit_ns\": %.0f, "
                     "\"compute_during_copy_ns\": %.0f, "
                     "\"wait_after_compute_ns\": %.0f, \"speedup\": %.4f, \"ideal_speedup\": %.4f, "
                     "\"compute_slowdown\": %.4f, \"wakes_per_copy\": %.3f, \"pieces_per_copy\": %.3f, "
                     "\"caller_cpus\": \"%s\"}%s\n",
                     r.bytes, r.reps, r.memcpy_s * 1e9, r.kupl_copy_s * 1e9, r.compute_s * 1e9,
                     r.together_s * 1e9, r.submit_s * 1e9, r.compute_during_s * 1e9,
                     r.wait_after_compute_s * 1e9, r.speedup(), r.ideal(), r.slowdown(), r.wakes_per_copy,
                     r.pieces_per_copy, r.caller_cpus.c_str(), i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

} // namespace

int main(int argc, char **argv) {
    const Args args = parse_args(argc, argv);
    std::vector<Result> results;
    std::printf("%10s %10s %10s %10s %10s %10s %8s %8s %9s\n", "bytes", "memcpy_ms", "kupl_ms", "compute_ms",
                "together", "comp_dur", "speedup", "ideal", "slowdown");
    for (size_t bytes : args.sizes) {
        const Result r = measure(bytes, args.reps);
        std::printf("%10zu %10.3f %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %9.2f\n", r.bytes, r.memcpy_s * 1e3,
                    r.kupl_copy_s * 1e3, r.compute_s * 1e3, r.together_s * 1e3, r.compute_during_s * 1e3,
                    r.speedup(), r.ideal(), r.slowdown());
        std::fflush(stdout);
        results.push_back(r);
    }
    if (!args.json.empty())
        write_json(args.json, results);
    return 0;
}
