// What waking a parked thread costs on this machine, without KUPL: the floor under every copy
// that a parked copy channel has to take. A thread sleeps on a futex; the caller computes for a
// while (the sleeper's core goes idle), then wakes it. Prints the medians of how long the wake-up
// system call held the caller and how long after it the sleeper ran, for a caller left to the
// scheduler and, with --pin, for a caller and sleeper pinned to two different CPUs.
// Then the floor under a hand-off to an awake channel: how long a thread spinning on a word takes
// to see it change, polling between a few pauses, and polling with a sched_yield at every poll
// (what KUPL's spin-waits did before they yielded every 5 us), and what one sched_yield costs.
// Last, a sleeping hand-off there and back: the caller wakes a sleeping thread and sleeps until
// that thread wakes it back, both on one CPU and on two. That is the least a thread pays to have
// another thread run something for it while it waits (the OpenMP plugin's `nowait` regions that
// enter libomp, moved off libomp's hidden-helper threads).
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

void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// How long after the caller posts a word a thread spinning on it sees it (us, medians of
// `reps`), the spinner pausing between polls and, when `yield_every_poll`, yielding too.
double spin_pickup_us(bool yield_every_poll, int reps) {
    std::atomic<std::int64_t> posted{0}, seen_after{-1};
    std::atomic<bool> stop{false};
    std::thread spinner([&] {
        std::int64_t last = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const std::int64_t at = posted.load(std::memory_order_acquire);
            if (at != last) {
                seen_after.store(now_ns() - at, std::memory_order_release);
                last = at;
                continue;
            }
            for (int i = 0; i < 8; ++i)
                cpu_pause();
            if (yield_every_poll)
                sched_yield();
        }
    });
    std::vector<double> after_us;
    for (int r = 0; r < reps; ++r) {
        seen_after.store(-1);
        posted.store(now_ns(), std::memory_order_release);
        while (seen_after.load(std::memory_order_acquire) < 0) {
        }
        after_us.push_back(seen_after.load() / 1e3);
        compute_for(20); // the spinner goes back to polling
    }
    stop.store(true);
    spinner.join();
    return median(after_us);
}

// A sleeping hand-off there and back, back to back: us per round trip (median of `reps` batches of
// 100), the caller on `caller_cpu` and its partner on `partner_cpu` (-1: wherever the scheduler
// puts them).
double sleeping_round_trip_us(int caller_cpu, int partner_cpu, int reps) {
    cpu_set_t before;
    pthread_getaffinity_np(pthread_self(), sizeof before, &before);
    std::atomic<std::uint32_t> to_partner{0}, to_caller{0};
    constexpr int kBatch = 100;
    std::thread partner([&] {
        if (partner_cpu >= 0)
            pin_to(partner_cpu);
        for (std::uint32_t seen = 0; seen < static_cast<std::uint32_t>(reps * kBatch); ++seen) {
            while (to_partner.load() == seen)
                futex_wait(to_partner, seen);
            to_caller.fetch_add(1);
            futex_wake(to_caller);
        }
    });
    if (caller_cpu >= 0)
        pin_to(caller_cpu);
    std::vector<double> per_trip_us;
    for (int r = 0; r < reps; ++r) {
        const std::int64_t start = now_ns();
        for (int i = 0; i < kBatch; ++i) {
            const std::uint32_t expected = to_caller.load();
            to_partner.fetch_add(1);
            futex_wake(to_partner);
            while (to_caller.load() == expected)
                futex_wait(to_caller, expected);
        }
        per_trip_us.push_back((now_ns() - start) / 1e3 / kBatch);
    }
    partner.join();
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    return median(per_trip_us);
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

    const int yields = 20000;
    const std::int64_t began = now_ns();
    for (int i = 0; i < yields; ++i)
        sched_yield();
    const double yield_us = (now_ns() - began) / 1e3 / yields;
    std::printf("spinning thread: sees a posted word after %.2f us polling between pauses, %.2f us with a "
                "sched_yield at every poll (one sched_yield: %.2f us; medians of %d)\n",
                spin_pickup_us(false, reps * 20), spin_pickup_us(true, reps * 20), yield_us, reps * 20);
    // The first two CPUs this process may run on.
    cpu_set_t allowed;
    int cpus[2] = {-1, -1};
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) == 0)
        for (int cpu = 0, found = 0; cpu < CPU_SETSIZE && found < 2; ++cpu)
            if (CPU_ISSET(cpu, &allowed))
                cpus[found++] = cpu;
    if (cpus[1] >= 0)
        std::printf("sleeping hand-off there and back: %.2f us on one CPU, %.2f us on two, %.2f us left to "
                    "the scheduler (medians of %d batches of 100)\n",
                    sleeping_round_trip_us(cpus[0], cpus[0], reps),
                    sleeping_round_trip_us(cpus[0], cpus[1], reps), sleeping_round_trip_us(-1, -1, reps),
                    reps);
    return 0;
}
