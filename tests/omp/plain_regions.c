// Regions whose image never enters libomp (no OpenMP construct or call inside any region of this
// file) run on the thread that launches them, as with the stock plugin, without a hand-off to a
// KUPL executor: that thread's OpenMP context cannot matter to them. Checked two ways: each region
// records the thread it ran on (a region launched from a host `parallel` must run on that very
// thread; a `nowait` one on a thread other than the initial one), and ctest fails the run if the
// plugin reports moving any region to an executor (LIBOMPTARGET_INFO=16). Every update is counted,
// with `nowait` regions chained by `depend` and many in flight.
#define _GNU_SOURCE
#include "omp_test.h"

#include <sys/syscall.h>
#include <unistd.h>

enum { N = 64, ROUNDS = 200, THREADS = 4 };

static long this_thread(void) {
    return (long)syscall(SYS_gettid);
}

int main(void) {
    omp_test_begin();
    long counts[N] = {0};
    long ran_on[N] = {0};
    const long initial = this_thread();
#pragma omp target enter data map(to : counts, ran_on)

    // nowait, from the initial thread: hidden-helper threads launch these.
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < N; ++i) {
#pragma omp target nowait depend(inout : counts[i])
            {
                counts[i] += 1;
                ran_on[i] = syscall(SYS_gettid);
            }
        }
    }
#pragma omp taskwait
#pragma omp target update from(counts, ran_on)
    for (int i = 0; i < N; ++i) {
        CHECK(counts[i] == ROUNDS, "counts[%d] == %ld after nowait regions", i, counts[i]);
        CHECK(ran_on[i] != 0 && ran_on[i] != initial, "nowait region %d ran on thread %ld", i, ran_on[i]);
    }

    // From the threads of a host parallel: each region runs on its launching thread.
    int misplaced = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : misplaced)
    {
        const long me = this_thread();
        for (int i = omp_get_thread_num(); i < N; i += THREADS) {
            long where = 0;
#pragma omp target map(from : where)
            {
                counts[i] += 1;
                where = syscall(SYS_gettid);
            }
            misplaced += where != me;
        }
    }
    CHECK(misplaced == 0, "%d regions left their launching thread", misplaced);
#pragma omp target exit data map(from : counts) map(delete : ran_on)
    for (int i = 0; i < N; ++i)
        CHECK(counts[i] == ROUNDS + 1, "counts[%d] == %ld at the end", i, counts[i]);
    return omp_test_end();
}
