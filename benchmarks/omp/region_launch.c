// Launch cost of a tiny target region (one add on a mapped array): as a plain `target` from the
// initial thread and as `target nowait` + taskwait; prints the median time per region.
//
// Built twice. As omp_bench_region_launch the region never enters libomp, so our plugin runs its
// `nowait` regions on the launching (hidden-helper) thread, as the stock plugin does. Built with
// REGION_ENTERS_OPENMP (omp_bench_region_launch_openmp) the region also asks omp_get_thread_num(),
// and our plugin moves the image's `nowait` regions to a KUPL executor thread, where the OpenMP
// calls in them answer as in a target region of their own (omp_plugin/README.md): the price of
// that hand-off is what this one measures.
//
// usage: omp_bench_region_launch [regions per sample (2000)] [samples (5)]
#include "median.h"
#include "plugin_name.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef REGION_ENTERS_OPENMP
// omp_get_thread_num() is never negative: one add, as in the plain build.
#define REGION_ADD (1 + (omp_get_thread_num() < 0))
#define METRIC "region_launch_openmp"
#else
#define REGION_ADD 1
#define METRIC "region_launch"
#endif

int main(int argc, char **argv) {
    const int regions = argc > 1 ? atoi(argv[1]) : 2000;
    const int samples = argc > 2 ? atoi(argv[2]) : 5;
    if (regions <= 0 || samples <= 0 || samples > 100) {
        fprintf(stderr, "usage: %s [regions>0] [samples 1..100]\n", argv[0]);
        return 2;
    }
    enum { n = 64 };
    long x[n] = {0};
#pragma omp target enter data map(to : x)
    double sync_us[100], nowait_us[100];
    for (int s = -1; s < samples; ++s) {
        double start = omp_get_wtime();
        for (int r = 0; r < regions; ++r) {
#pragma omp target
            x[r % n] += REGION_ADD;
        }
        const double sync = (omp_get_wtime() - start) / regions * 1e6;
        start = omp_get_wtime();
        for (int r = 0; r < regions; ++r) {
#pragma omp target nowait
            x[r % n] += REGION_ADD;
#pragma omp taskwait
        }
        const double nowait = (omp_get_wtime() - start) / regions * 1e6;
        if (s >= 0) {
            sync_us[s] = sync;
            nowait_us[s] = nowait;
        }
    }
#pragma omp target exit data map(from : x)
    long total = 0;
    for (int i = 0; i < n; ++i)
        total += x[i];
    printf("metric " METRIC " %.3f us\n", median(sync_us, samples));
    printf("metric " METRIC "_nowait %.3f us\n", median(nowait_us, samples));
    print_plugin_name();
    const long expected = 2L * regions * (samples + 1);
    printf("check %s\n", total == expected ? "ok" : "FAILED");
    return total == expected ? 0 : 1;
}
