// Chunked offload pipeline: every chunk goes host -> device (target update to), is computed on
// (target parallel for), and comes back (target update from), each step nowait with depend, so
// several chunks are in flight at once. Prints the median wall time of the pipeline and checks
// every element.
//
// usage: omp_bench_pipeline [MiB total (64)] [chunks (16)] [repetitions (5)]
// The compute region is `target parallel for`, not `target teams ...`: with teams the stock
// plugin loses iterations on hidden-helper threads (tests/omp/teams_regions.c) and a comparison
// against a wrong answer means nothing.
#include "median.h"
#include "plugin_name.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    const int chunks = argc > 2 ? atoi(argv[2]) : 16;
    const int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (mib == 0 || chunks <= 0 || reps <= 0 || reps > 100) {
        fprintf(stderr, "usage: %s [MiB>0] [chunks>0] [repetitions 1..100]\n", argv[0]);
        return 2;
    }
    const size_t n = mib * (1 << 20) / sizeof(double);
    const size_t chunk = (n + chunks - 1) / chunks;
    double *a = malloc(n * sizeof(double));
    if (!a)
        return 2;
#pragma omp target enter data map(alloc : a [0:n])
    double times[100];
    int bad = 0;
    for (int rep = -1; rep < reps; ++rep) { // rep -1 warms up
        for (size_t i = 0; i < n; ++i)
            a[i] = (double)(i % 4096);
        const double start = omp_get_wtime();
        for (int c = 0; c < chunks; ++c) {
            const size_t first = c * chunk;
            if (first >= n)
                break;
            const size_t len = first + chunk <= n ? chunk : n - first;
#pragma omp target update to(a [first:len]) nowait depend(out : a[first])
#pragma omp target parallel for nowait depend(inout : a[first])
            for (size_t i = first; i < first + len; ++i)
                a[i] = a[i] * 1.5 + 2.0;
#pragma omp target update from(a [first:len]) nowait depend(in : a[first])
        }
#pragma omp taskwait
        const double elapsed = omp_get_wtime() - start;
        for (size_t i = 0; i < n; ++i)
            if (a[i] != (double)(i % 4096) * 1.5 + 2.0) {
                ++bad;
                break;
            }
        if (rep >= 0)
            times[rep] = elapsed;
    }
#pragma omp target exit data map(delete : a [0:n])
    printf("metric pipeline_%zuMiB_%dchunks %.6f s\n", mib, chunks, median(times, reps));
    print_plugin_name();
    printf("check %s\n", bad ? "FAILED" : "ok");
    free(a);
    return bad ? 1 : 0;
}
