// `target teams distribute parallel for` from a host parallel region and as a nowait task.
// LLVM's stock plugin runs the region on the calling OpenMP thread, its `teams` nested in an
// OpenMP team (which libomp does not support; llvm/llvm-project#63298 reports that nesting as
// "OMP: Error #132"), and here skips iterations or asserts; ours runs it on a KUPL executor
// thread and must count every one.
// With OMP_TEST_EXPECT_PLUGIN=stock this program asserts the stock plugin's wrong answer.
#include "omp_test.h"

enum { N = 100000 };

/// Runs the region once per calling context; returns how many increments landed.
static long count_hits(int *hits) {
    long total = 0;
    for (int i = 0; i < N; ++i)
        total += hits[i];
    return total;
}

static void teams_increment(int *hits) {
#pragma omp target teams distribute parallel for map(tofrom : hits [0:N])
    for (int i = 0; i < N; ++i) {
#pragma omp atomic
        hits[i] += 1;
    }
}

static long in_parallel_region(int *hits) {
#pragma omp parallel num_threads(2)
    teams_increment(hits);
    return count_hits(hits);
}

static long as_nowait_tasks(int *hits) {
#pragma omp target enter data map(to : hits [0:N])
    for (int k = 0; k < 4; ++k) {
#pragma omp target teams distribute parallel for nowait map(tofrom : hits [0:N])
        for (int i = 0; i < N; ++i) {
#pragma omp atomic
            hits[i] += 1;
        }
    }
#pragma omp taskwait
#pragma omp target exit data map(from : hits [0:N])
    return count_hits(hits);
}

/// argv[1]: "parallel" (from each thread of a host parallel region) or "nowait" (four nowait
/// tasks at once, on hidden-helper threads).
int main(int argc, char **argv) {
    CHECK(argc == 2 && (!strcmp(argv[1], "parallel") || !strcmp(argv[1], "nowait")),
          "usage: %s parallel|nowait", argv[0]);
    omp_test_begin();
    int *hits = calloc(N, sizeof(int));

    // From the initial thread both plugins are right.
    teams_increment(hits);
    CHECK(count_hits(hits) == N, "plain: %ld of %d", count_hits(hits), N);
    memset(hits, 0, N * sizeof(int));

    const int parallel = !strcmp(argv[1], "parallel");
    const long expected = parallel ? 2L * N : 4L * N;
    const long got = parallel ? in_parallel_region(hits) : as_nowait_tasks(hits);
    printf("%s: %ld of %ld iterations\n", argv[1], got, expected);
    if (!omp_test_plugin_is_kupl()) {
        // ctest expects this line (or libomp's assertion) from the stock plugin.
        if (got != expected)
            printf("stock plugin lost iterations\n");
        return 0;
    }
    CHECK(got == expected, "iterations lost");
    for (int i = 0; i < N; ++i)
        CHECK(hits[i] == expected / N, "iteration %d ran %d times", i, hits[i]);
    free(hits);
    return omp_test_end();
}
