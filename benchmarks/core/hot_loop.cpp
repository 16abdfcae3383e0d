// A loop of copies waited for at once, the data hot (issue 13): a program that copies the same
// tile or halo again and again, each time with kupl_memcpy(2d)_async + kupl_event_wait, against
// the same program doing the copy itself. The sweep (sweep.cpp) times one copy after other work
// (its awake state copies 512 KiB first); here nothing else runs between the copies, so the data
// sits in the caller's caches and the channels stay awake: the halved copies' hand-off is all
// that can be lost.
//
// Every repetition runs the three variants once each, in one of the six orders, taken in turn:
// each variant follows each other one equally often (with the three rotations alone, caller2
// always came right after caller, in the caches it had just warmed, and a 16 KiB copy's A/A read
// 1.6 instead of 1); each has its own destination (a program copies to its own buffers), all read
// the same source:
//   caller     memcpy (2D: one memcpy per row)
//   caller2    the same into a third buffer: the A/A noise of the pair
//   kupl       async on a queue + event wait
// Figures: medians over the repetitions; ratio = caller / kupl (> 1: KUPL faster), A/A =
// caller / caller2; and the ratio of the whole loop's times (sums over the repetitions), which
// the median hides when one copy in a hundred pays a channel's wake-up.
//
// Usage: core_hot_loop_bench [--reps=N]
// Exit status 1 if a KUPL call fails or a copy is wrong, 2 on bad arguments.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kupl.h"
#include "standalone_timing.h"

namespace {

using standalone_timing::alloc_pages;
using standalone_timing::die;
using standalone_timing::median;
using Clock = std::chrono::steady_clock;

struct Shape {
    const char *name;
    size_t width, height, pitch; // height 1: a 1D copy of `width` bytes
};

// Inline-sized, halved (128 KiB to 512 KiB of cost) and split copies.
const Shape kShapes[] = {
    {"1D 16K", 16 << 10, 1, 0},
    {"1D 64K", 64 << 10, 1, 0},
    {"1D 256K", 256 << 10, 1, 0},
    {"1D 1M", 1 << 20, 1, 0},
    {"2D 8B x 1024 @32K", 8, 1024, 32 << 10},
    {"2D 64B x 1024 @4160", 64, 1024, 4160},
};

__attribute__((noinline)) void memcpy_rows(unsigned char *dst, const unsigned char *src, const Shape &s) {
    for (size_t r = 0; r < s.height; ++r)
        std::memcpy(dst + r * s.width, src + r * s.pitch, s.width);
}

double ns_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

void run_shape(const Shape &s, int reps, kupl_queue_h queue, kupl_event_h event) {
    const bool two_d = s.height > 1;
    const size_t bytes = s.width * s.height, src_bytes = two_d ? (s.height - 1) * s.pitch + s.width : bytes;
    unsigned char *src = alloc_pages(src_bytes), *dst_kupl = alloc_pages(bytes),
                  *dst_caller = alloc_pages(bytes), *dst_caller2 = alloc_pages(bytes);
    for (size_t i = 0; i < src_bytes; ++i)
        src[i] = static_cast<unsigned char>(i * 131 + (i >> 12) + 7);
    std::memset(dst_kupl, 0, bytes);
    std::memset(dst_caller, 0, bytes);
    std::memset(dst_caller2, 0, bytes);
    auto caller_copy = [&](unsigned char *dst) {
        if (two_d)
            memcpy_rows(dst, src, s);
        else
            std::memcpy(dst, src, bytes);
    };
    auto kupl_copy = [&] {
        const int rc =
            two_d ? kupl_memcpy2d_async(dst_kupl, s.width, src, s.pitch, s.width, s.height, queue, event)
                  : kupl_memcpy_async(dst_kupl, src, bytes, queue, event);
        if (rc != KUPL_OK || kupl_event_wait(event) != KUPL_OK)
            die("kupl copy failed");
    };
    std::vector<double> caller, caller2, kupl, ratio, aa;
    for (int rep = -reps / 10; rep < reps; ++rep) { // the first tenth warms up, untimed
        static const int kOrders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        const int *order = kOrders[(rep < 0 ? 0 : rep) % 6];
        double t[3];
        for (int k = 0; k < 3; ++k) {
            const int v = order[k];
            const auto t0 = Clock::now();
            if (v == 0)
                caller_copy(dst_caller);
            else if (v == 1)
                caller_copy(dst_caller2);
            else
                kupl_copy();
            t[v] = ns_since(t0);
        }
        if (rep < 0)
            continue;
        caller.push_back(t[0]);
        caller2.push_back(t[1]);
        kupl.push_back(t[2]);
        ratio.push_back(t[0] / t[2]);
        aa.push_back(t[0] / t[1]);
    }
    for (size_t r = 0; r < s.height; ++r)
        if (std::memcmp(dst_kupl + r * s.width, src + r * (two_d ? s.pitch : 0), s.width) != 0)
            die("a KUPL copy differs from its source");
    const auto sum = [](const std::vector<double> &v) {
        double total = 0;
        for (double x : v)
            total += x;
        return total;
    };
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", s.name, median(caller) / 1e3,
                median(kupl) / 1e3, median(ratio), median(aa), sum(caller) / sum(kupl));
    std::free(src);
    std::free(dst_kupl);
    std::free(dst_caller);
    std::free(dst_caller2);
}

} // namespace

int main(int argc, char **argv) {
    int reps = 2000;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--reps=", 0) == 0 && std::atoi(arg.c_str() + 7) > 0) {
            reps = std::atoi(arg.c_str() + 7);
        } else {
            std::fprintf(stderr, "usage: %s [--reps=N]\n", argv[0]);
            return 2;
        }
    }
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    if (queue == nullptr || event == nullptr)
        die("no queue or event");
    std::printf("A loop of hot copies, each waited for at once; medians of %d repetitions\n\n", reps);
    std::printf(
        "| copy | caller us | kupl us | ratio | A/A | loop ratio |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const Shape &s : kShapes)
        run_shape(s, reps, queue, event);
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
    return 0;
}
