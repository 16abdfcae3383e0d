// Small-update round trip: `target update to` then `target update from` of a few bytes, as
// plain constructs and as nowait+depend tasks; prints the median time per round trip.
//
// usage: omp_bench_round_trip [bytes (64)] [round trips per sample (2000)] [samples (5)]
#include "median.h"
#include "plugin_name.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    const int trips = argc > 2 ? atoi(argv[2]) : 2000;
    const int samples = argc > 3 ? atoi(argv[3]) : 5;
    if (bytes == 0 || trips <= 0 || samples <= 0 || samples > 100) {
        fprintf(stderr, "usage: %s [bytes>0] [trips>0] [samples 1..100]\n", argv[0]);
        return 2;
    }
    unsigned char *x = malloc(bytes);
#pragma omp target enter data map(alloc : x [0:bytes])
    double sync_us[100], nowait_us[100];
    int bad = 0;
    for (int s = -1; s < samples; ++s) {
        double start = omp_get_wtime();
        for (int t = 0; t < trips; ++t) {
            memset(x, t & 0xff, bytes);
#pragma omp target update to(x [0:bytes])
            x[0] = 0;
            x[bytes - 1] = 0;
#pragma omp target update from(x [0:bytes])
            bad |= x[0] != (t & 0xff) || x[bytes - 1] != (t & 0xff);
        }
        const double sync = (omp_get_wtime() - start) / trips * 1e6;
        start = omp_get_wtime();
        for (int t = 0; t < trips; ++t) {
            memset(x, t & 0xff, bytes);
#pragma omp target update to(x [0:bytes]) nowait depend(out : x[0])
#pragma omp target update from(x [0:bytes]) nowait depend(inout : x[0])
#pragma omp taskwait
            bad |= x[0] != (t & 0xff) || x[bytes - 1] != (t & 0xff);
        }
        const double nowait = (omp_get_wtime() - start) / trips * 1e6;
        if (s >= 0) {
            sync_us[s] = sync;
            nowait_us[s] = nowait;
        }
    }
#pragma omp target exit data map(delete : x [0:bytes])
    printf("metric round_trip_%zuB %.3f us\n", bytes, median(sync_us, samples));
    printf("metric round_trip_%zuB_nowait %.3f us\n", bytes, median(nowait_us, samples));
    print_plugin_name();
    printf("check %s\n", bad ? "FAILED" : "ok");
    free(x);
    return bad ? 1 : 0;
}
