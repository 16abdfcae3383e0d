/*
 * seed_overlap.c — the KUPL seed pattern: copy A -> B with kupl_memcpy_async on
 * queue 1 while a compute kernel runs as a queue item on queue 2, then
 * kupl_queue_wait(q2) and kupl_event_wait(event).
 *
 * It times the copy alone, the compute alone and both together, and prints the
 * overlap achieved: speedup = (copy + compute) / together; perfect overlap gives
 * (copy + compute) / max(copy, compute), 2.00x when both take equally long.
 * Usage: seed_overlap [MiB to copy, default 128]. Exit status 1 if a result is wrong.
 */
#include "kupl.h"
#include "kupl_ext.h" /* only for the engine description line */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPEATS = 7, COMPUTE_DOUBLES = 32 * 1024 }; /* 256 KiB: compute runs from cache */

typedef struct compute_args {
    double *data;
    size_t count;
    int passes;
    double result;
} compute_args_t;

/* The compute kernel: a few multiply-adds per element, repeated `passes` times. */
static void compute(void *p) {
    compute_args_t *a = p;
    double acc = 0.0;
    for (int k = 0; k < a->passes; ++k)
        for (size_t i = 0; i < a->count; ++i) {
            a->data[i] = a->data[i] * 0.999 + 0.5;
            acc += a->data[i];
        }
    a->result = acc;
}

static void reset(double *data, size_t count) {
    for (size_t i = 0; i < count; ++i)
        data[i] = (double)(i % 97);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return v[n / 2];
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 128;
    if (mib == 0)
        mib = 128;
    const size_t bytes = mib << 20;

    unsigned char *a = kupl_malloc(KUPL_MEM_DEFAULT, bytes);
    unsigned char *b = kupl_malloc(KUPL_MEM_DEFAULT, bytes);
    double *c = kupl_malloc(KUPL_MEM_DEFAULT, COMPUTE_DOUBLES * sizeof(double));
    kupl_queue_h q1 = kupl_queue_create();
    kupl_queue_h q2 = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    if (!a || !b || !c || !q1 || !q2 || !event) {
        fprintf(stderr, "seed_overlap: setup failed\n");
        return 1;
    }
    for (size_t i = 0; i < bytes; ++i)
        a[i] = (unsigned char)(i * 131 + 7);
    memset(b, 0, bytes); /* touch every page before timing */

    /* Size the compute so that alone it takes about as long as the copy alone
       (both measured warm, the faster of three tries). */
    double t_copy_once = 1e30, t_pass = 1e30, t0;
    compute_args_t args = {c, COMPUTE_DOUBLES, 8, 0.0};
    for (int r = 0; r < 3; ++r) {
        t0 = kupl_get_wtime();
        kupl_memcpy_async(b, a, bytes, q1, event);
        kupl_event_wait(event);
        double t = kupl_get_wtime() - t0;
        t_copy_once = t < t_copy_once ? t : t_copy_once;
        t0 = kupl_get_wtime();
        compute(&args);
        t = (kupl_get_wtime() - t0) / args.passes;
        t_pass = t < t_pass ? t : t_pass;
    }
    args.passes = (int)(t_copy_once / t_pass) + 1;

    /* The expected compute result, computed directly. */
    reset(c, COMPUTE_DOUBLES);
    compute(&args);
    const double expected = args.result;

    kupl_queue_item_desc_t desc = {.func = compute, .args = &args};
    double copy_alone[REPEATS], compute_alone[REPEATS], together[REPEATS];
    int ok = 1;
    for (int r = 0; r < REPEATS; ++r) {
        /* copy alone */
        memset(b, 0, bytes);
        t0 = kupl_get_wtime();
        kupl_memcpy_async(b, a, bytes, q1, event);
        kupl_event_wait(event);
        copy_alone[r] = kupl_get_wtime() - t0;
        ok &= memcmp(a, b, bytes) == 0;

        /* compute alone */
        reset(c, COMPUTE_DOUBLES);
        t0 = kupl_get_wtime();
        kupl_queue_submit(q2, &desc);
        kupl_queue_wait(q2);
        compute_alone[r] = kupl_get_wtime() - t0;
        ok &= args.result == expected;

        /* the seed pattern: both at once */
        memset(b, 0, bytes);
        reset(c, COMPUTE_DOUBLES);
        t0 = kupl_get_wtime();
        int rc = kupl_memcpy_async(b, a, bytes, q1, event);
        rc |= kupl_queue_submit(q2, &desc);
        rc |= kupl_queue_wait(q2);
        rc |= kupl_event_wait(event);
        together[r] = kupl_get_wtime() - t0;
        ok &= rc == KUPL_OK && memcmp(a, b, bytes) == 0 && args.result == expected;
    }

    double tc = median(copy_alone, REPEATS), tk = median(compute_alone, REPEATS),
           tt = median(together, REPEATS);
    printf("kupl seed example: copy %zu MiB A->B on queue 1 while a compute item runs on queue 2\n", mib);
    kuplx_engine_info_t info;
    if (kuplx_get_engine_info(&info) == KUPL_OK)
        printf("  (%d cores; %s copy engine, %d channel(s); %d executor(s) for queue items)\n",
               info.num_cores, info.backend, info.num_channels, info.num_executors);
    printf("  copy alone       : %8.2f ms  (%.1f GB/s)\n", tc * 1e3, (double)bytes / tc / 1e9);
    printf("  compute alone    : %8.2f ms  (%d passes over %d KiB)\n", tk * 1e3, args.passes,
           (int)(COMPUTE_DOUBLES * sizeof(double) / 1024));
    printf("  both, overlapped : %8.2f ms\n", tt * 1e3);
    printf("  overlap speedup  : %8.2fx  ((copy + compute) / together; perfect overlap would give %.2fx)\n",
           (tc + tk) / tt, (tc + tk) / (tc > tk ? tc : tk));
    printf("  (medians of %d runs)\n", REPEATS);
    printf("  result check     : %s\n", ok ? "B == A and compute result correct" : "MISMATCH");

    kupl_event_destroy(event);
    kupl_queue_destroy(q1);
    kupl_queue_destroy(q2);
    kupl_free(KUPL_MEM_DEFAULT, a);
    kupl_free(KUPL_MEM_DEFAULT, b);
    kupl_free(KUPL_MEM_DEFAULT, c);
    return ok ? 0 : 1;
}
