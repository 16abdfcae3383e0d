// What waking a parked thread costs on this machine, without KUPL: the floor under every copy
// that a parked copy channel has to take. A thread sleeps on a futex; the caller computes for a
// while (the sleeper's core goes idle), then wakes it. Prints the medians of how long the wake-up
// system call held the caller and how long after it the sleeper ran, for a caller left to the
// scheduler and, with --pin, for a caller and sleeper pinned to two different CPUs.
//
// usage: core_wake_latency [--pin] [--reps=N (51)] [--idle-us=U (300)]
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

volatile std::uint64_t g_sink;

// Keeps the calling CPU busy for `us` microseconds.
void compute_for(double us) {
    const std::int64_t end = now_ns() + static_cast<std::int64_t>(us * 1000);
    std::uint64_t x = 1;
    while (now_ns() < end)
        for (int i = 0; i < 1000; ++i)
            x = x * 6364136223846793005u + 1442695040888963407u;
    g_sink = x;
}

void futex_wait(std::atomic<std::uint32_t> &word, std::uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
            nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t> &word) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
    bool pin = false;
    int reps = 51;
    double idle_us = 300;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--pin") == 0)
            pin = true;
        else if (std::strncmp(argv[i], "--reps=", 7) == 0)
            reps = std::atoi(argv[i] + 7);
        else if (std::strncmp(argv[i], "--idle-us=", 10) == 0)
            idle_us = std::atof(argv[i] + 10);
        else {
            std::fprintf(stderr, "usage: %s [--pin] [--reps=N] [--idle-us=U]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100000 || idle_us < 0) {
        std::fprintf(stderr, "%s: --reps must be 1..100000 and --idle-us >= 0\n", argv[0]);
        return 2;
    }
    if (pin && std::thread::hardware_concurrency() < 2) {
        std::fprintf(stderr, "%s: --pin needs two CPUs\n", argv[0]);
        return 2;
    }

    std::atomic<std::uint32_t> generation{0};
    std::atomic<std::int64_t> ran_at{0};
    std::atomic<bool> stop{false};
    std::thread sleeper([&] {
        if (pin && !pin_to(1))
            std::fprintf(stderr, "cannot pin the sleeper to CPU 1\n");
        std::uint32_t seen = 0;
        for (;;) {
            while (generation.load() == seen)
                futex_wait(generation, seen);
            ran_at.store(now_ns());
            seen = generation.load();
            if (stop.load())
                return;
        }
    });
    if (pin && !pin_to(0))
        std::fprintf(stderr, "cannot pin the caller to CPU 0\n");

    std::vector<double> call_us, run_us;
    for (int r = 0; r < reps; ++r) {
        compute_for(idle_us); // the sleeper's CPU goes idle meanwhile
        const std::int64_t start = now_ns();
        generation.fetch_add(1);
        futex_wake(generation);
        const std::int64_t returned = now_ns();
        compute_for(200); // leaves the sleeper time to run and record when it did
        call_us.push_back((returned - start) / 1e3);
        run_us.push_back((ran_at.load() - start) / 1e3);
    }
    stop.store(true);
    generation.fetch_add(1);
    futex_wake(generation);
    sleeper.join();
    std::printf("caller %s: wake-up call %.1f us, sleeper running after %.1f us (medians of %d, %.0f us idle "
                "before each)\n",
                pin ? "and sleeper pinned to CPUs 0 and 1" : "left to the scheduler", median(call_us),
                median(run_us), reps, idle_us);
    return 0;
}
