// The store-buffering litmus test, run by tests/cross/aarch64.sh under qemu-aarch64 to show how
// the emulator orders memory. Two threads walk the same indices: one stores x[i] then loads y[i],
// the other stores y[i] then loads x[i], all seq_cst (STLR, LDAR on aarch64). C++ and ARMv8
// forbid both loads of one index reading 0; then, with an exchange (SWPAL) in place of each store.
//
// Whether the two threads keep in step varies from run to run, so it runs `rounds` times.
//
//   store_buffering [rounds [indices]]     prints both counts; exits 1 if either is not 0
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Both threads start together (a yielding spin: under qemu a tight one can keep the other
// thread from ever starting) and then run free; returns the indices where both loads read 0.
template <bool kExchange> int both_read_zero(int indices) {
    std::vector<std::atomic<int>> x(indices), y(indices);
    std::vector<int> seen_by_x_side(indices), seen_by_y_side(indices);
    std::atomic<int> ready{0};
    // Plain pointers and a local count: a loop that reloads them from a closure each time round
    // keeps the two threads at the same index too rarely to show anything.
    auto side = [&ready](std::atomic<int> *mine, std::atomic<int> *theirs, int *seen, int count) {
        ready.fetch_add(1);
        while (ready.load() < 2)
            sched_yield();
        for (int i = 0; i < count; ++i) {
            if (kExchange)
                mine[i].exchange(1, std::memory_order_seq_cst);
            else
                mine[i].store(1, std::memory_order_seq_cst);
            seen[i] = theirs[i].load(std::memory_order_seq_cst);
        }
    };
    std::thread other(side, y.data(), x.data(), seen_by_y_side.data(), indices);
    side(x.data(), y.data(), seen_by_x_side.data(), indices);
    other.join();
    int both = 0;
    for (int i = 0; i < indices; ++i)
        both += seen_by_x_side[i] == 0 && seen_by_y_side[i] == 0;
    return both;
}

} // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    const int indices = argc > 2 ? std::atoi(argv[2]) : 500000;
    if (rounds <= 0 || indices <= 0) {
        std::fprintf(stderr, "usage: store_buffering [rounds > 0 [indices > 0]]\n");
        return 2;
    }
    long stored = 0, exchanged = 0;
    for (int round = 0; round < rounds; ++round) {
        stored += both_read_zero<false>(indices);
        exchanged += both_read_zero<true>(indices);
    }
    std::printf("store-buffering litmus, %d x %d indices: both loads read 0 at %ld after a seq_cst store, "
                "at %ld after an exchange (0 and 0 where seq_cst is kept)\n",
                rounds, indices, stored, exchanged);
    return stored == 0 && exchanged == 0 ? 0 : 1;
}
