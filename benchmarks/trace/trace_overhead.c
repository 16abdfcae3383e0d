/*
 * trace_overhead.c: what tracing costs per copy and per host item. Prints the median time per
 * operation (ns) of:
 *   copy_4k     4 KiB kupl_memcpy_async + kupl_event_wait (the inline path: the cost of the call)
 *   copy_1m     1 MiB kupl_memcpy_async + kupl_event_wait (the engine: channels, pieces)
 *   item        an empty kupl_queue_submit + kupl_queue_wait (hand-off to an executor and back)
 * run_trace_overhead.sh runs it against libkupl built without trace calls, with tracing off and
 * with tracing on, interleaved, and prints the ratios. Exit status 1 if a copy is wrong.
 * usage: trace_overhead [operations per sample (2000)] [samples (7)]
 */
#include "kupl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void nothing(void *arg) {
    (void)arg;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare);
    return v[n / 2];
}

int main(int argc, char **argv) {
    const int ops = argc > 1 ? atoi(argv[1]) : 2000;
    const int samples = argc > 2 ? atoi(argv[2]) : 7;
    if (ops <= 0 || samples <= 0 || samples > 100) {
        fprintf(stderr, "usage: %s [operations>0] [samples 1..100]\n", argv[0]);
        return 2;
    }
    const size_t big = 1 << 20;
    unsigned char *a = malloc(big), *b = malloc(big);
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h e = kupl_event_create();
    if (!a || !b || !q || !e)
        return 1;
    for (size_t i = 0; i < big; ++i)
        a[i] = (unsigned char)(i * 13 + 1);
    kupl_queue_item_desc_t desc = {.func = nothing, .args = NULL};
    double copy_4k[100], copy_1m[100], item[100];
    int ok = 1;
    for (int s = -1; s < samples; ++s) { /* sample -1 warms up */
        double t0 = kupl_get_wtime();
        for (int i = 0; i < ops; ++i) {
            ok &= kupl_memcpy_async(b, a, 4096, q, e) == KUPL_OK;
            ok &= kupl_event_wait(e) == KUPL_OK;
        }
        const double t4k = (kupl_get_wtime() - t0) / ops * 1e9;
        const int big_ops = ops / 20 > 0 ? ops / 20 : 1;
        t0 = kupl_get_wtime();
        for (int i = 0; i < big_ops; ++i) {
            ok &= kupl_memcpy_async(b, a, big, q, e) == KUPL_OK;
            ok &= kupl_event_wait(e) == KUPL_OK;
        }
        const double t1m = (kupl_get_wtime() - t0) / big_ops * 1e9;
        t0 = kupl_get_wtime();
        for (int i = 0; i < ops; ++i) {
            ok &= kupl_queue_submit(q, &desc) == KUPL_OK;
            ok &= kupl_queue_wait(q) == KUPL_OK;
        }
        const double titem = (kupl_get_wtime() - t0) / ops * 1e9;
        if (s >= 0) {
            copy_4k[s] = t4k;
            copy_1m[s] = t1m;
            item[s] = titem;
        }
    }
    ok &= memcmp(a, b, big) == 0;
    printf("copy_4k %.1f\ncopy_1m %.1f\nitem %.1f\n", median(copy_4k, samples), median(copy_1m, samples),
           median(item, samples));
    kupl_event_destroy(e);
    kupl_queue_destroy(q);
    free(a);
    free(b);
    if (!ok)
        fprintf(stderr, "trace_overhead: a copy or call failed\n");
    return ok ? 0 : 1;
}
