// Target regions launched together all make progress (issue 10 item 4), as with LLVM's stock
// plugin: the four threads of a host `parallel` each launch a `target` region, and the regions
// meet at a spin barrier in host memory (a counter whose address each region gets by value:
// the device is host memory). Our plugin runs regions met inside a host `parallel` as KUPL queue
// items on executor threads; with KUPL_NUM_EXECUTORS=2 only two of them used to run and the
// other two never started. A region gives up after 20 s, so a starved pool fails, not hangs.
#include "omp_test.h"

#include <sched.h>
#include <stdint.h>

enum { REGIONS = 4 };

int main(void) {
    omp_test_begin();
    int arrived = 0;
    const uintptr_t address = (uintptr_t)&arrived;
    int saw_all[REGIONS] = {0};
    int team = 0;
#pragma omp parallel num_threads(REGIONS)
    {
#pragma omp single
        team = omp_get_num_threads();
        int all = 0;
#pragma omp target map(from : all) firstprivate(address)
        {
            int *counter = (int *)address;
            __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
            const double end = omp_get_wtime() + 20.0;
            while (__atomic_load_n(counter, __ATOMIC_SEQ_CST) < REGIONS && omp_get_wtime() < end)
                sched_yield();
            all = __atomic_load_n(counter, __ATOMIC_SEQ_CST) == REGIONS;
        }
        saw_all[omp_get_thread_num()] = all;
    }
    CHECK(team == REGIONS, "the host parallel has %d threads, not %d", team, REGIONS);
    for (int r = 0; r < REGIONS; ++r)
        CHECK(saw_all[r], "region %d gave up at the barrier after 20 s: %d of %d regions arrived", r,
              __atomic_load_n(&arrived, __ATOMIC_SEQ_CST), REGIONS);
    return omp_test_end();
}
