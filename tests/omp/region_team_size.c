// The team a target region's `parallel` forks is the one it would fork on the launching thread,
// as with the stock plugin: the default team from the initial thread, one thread from a nowait
// task (a hidden-helper thread) or from inside a host `parallel`, where a `parallel` is nested.
// Run with OMP_NUM_THREADS=2. A num_threads clause still gets its team on our plugin (the
// stock plugin serializes it under nowait).
#include "omp_test.h"

/// omp_get_num_threads() inside the region's `parallel`, launched as given.
static int team_of_plain_region(void) {
    int threads = -1;
#pragma omp target parallel map(from : threads)
    {
#pragma omp single
        threads = omp_get_num_threads();
    }
    return threads;
}

static int team_of_nowait_region(int clause_threads) {
    int threads = -1;
    int *result = &threads;
    if (clause_threads > 0) {
#pragma omp target parallel num_threads(clause_threads) map(from                                             \
                                                            : result [0:1]) nowait                           \
depend(out                                                                                                   \
       : result[0])
        {
#pragma omp single
            result[0] = omp_get_num_threads();
        }
    } else {
#pragma omp target parallel map(from : result [0:1]) nowait depend(out : result[0])
        {
#pragma omp single
            result[0] = omp_get_num_threads();
        }
    }
#pragma omp taskwait
    return threads;
}

int main(void) {
    omp_test_begin();
    CHECK(omp_get_max_threads() == 2, "run with OMP_NUM_THREADS=2 (got %d)", omp_get_max_threads());

    const int plain = team_of_plain_region();
    CHECK(plain == 2, "a region from the initial thread forked %d threads, not 2", plain);

    const int nowait = team_of_nowait_region(0);
    CHECK(nowait == 1, "a nowait region forked %d threads, not 1", nowait);

    int in_parallel[2] = {-1, -1};
#pragma omp parallel num_threads(2)
    in_parallel[omp_get_thread_num()] = team_of_plain_region();
    CHECK(in_parallel[0] == 1 && in_parallel[1] == 1,
          "regions from a host parallel forked %d and %d threads, not 1", in_parallel[0], in_parallel[1]);

    if (omp_test_plugin_is_kupl()) {
        const int clause = team_of_nowait_region(2);
        CHECK(clause == 2, "a nowait region with num_threads(2) forked %d threads", clause);
    }
    return omp_test_end();
}
