/*
 * trace_program.c: a program that does one of everything the core trace shows, in known numbers,
 * for check_trace.py: 1D and 2D copies on a queue, a named and an unnamed host item, an event
 * record waited for by another queue (kuplx_queue_wait_event_async: a cross-queue arrow) and by
 * the caller, the synchronous queue, a copy no queue orders, a failed copy (fault injection), a
 * rejected call, and kupl_queue_wait_all. Checks every byte; exit status 1 on a mismatch.
 */
#include "kupl.h"
#include "kupl_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIG = 4 << 20, ROWS = 512, WIDTH = 64, PITCH = 256 };

static void spin_a_little(void *arg) {
    volatile double *x = arg;
    for (int i = 0; i < 200000; ++i)
        *x = *x * 0.5 + 1.0;
}

static int check(int ok, const char *what) {
    if (!ok)
        fprintf(stderr, "trace_program: %s\n", what);
    return ok;
}

int main(void) {
    unsigned char *a = malloc(BIG), *b = malloc(BIG), *m = malloc(ROWS * PITCH), *n = calloc(ROWS, PITCH);
    kupl_queue_h q1 = kupl_queue_create(), q2 = kupl_queue_create();
    kupl_event_h e1 = kupl_event_create(), e2 = kupl_event_create();
    int ok = a && b && m && n && q1 && q2 && e1 && e2;
    if (!ok)
        return 1;
    for (size_t i = 0; i < BIG; ++i)
        a[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < ROWS * PITCH; ++i)
        m[i] = (unsigned char)(i * 3 + 5);
    double x = 1.0, y = 2.0;

    /* q1: a 4 MiB copy, a 2D copy, a named item, a record of e1. */
    ok &= kupl_memcpy_async(b, a, BIG, q1, NULL) == KUPL_OK;
    ok &= kupl_memcpy2d_async(n, PITCH, m, PITCH, WIDTH, ROWS, q1, NULL) == KUPL_OK;
    kupl_queue_item_desc_t named = {.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME,
                                    .func = spin_a_little,
                                    .args = &x,
                                    .name = "stencil \"A\""};
    ok &= kupl_queue_submit(q1, &named) == KUPL_OK;
    ok &= kupl_event_record(e1, q1) == KUPL_OK;
    /* q2 waits for e1 without blocking anyone, then runs an unnamed item and records e2. */
    ok &= kuplx_queue_wait_event_async(q2, e1) == KUPL_OK;
    kupl_queue_item_desc_t unnamed = {.func = spin_a_little, .args = &y};
    ok &= kupl_queue_submit(q2, &unnamed) == KUPL_OK;
    ok &= kupl_event_record(e2, q2) == KUPL_OK;
    ok &= kupl_event_wait(e2) == KUPL_OK;
    ok &= kupl_queue_wait(q1) == KUPL_OK;
    ok &= check(memcmp(a, b, BIG) == 0, "1D copy wrong");
    for (int r = 0; r < ROWS; ++r)
        ok &= check(memcmp(n + r * PITCH, m + r * PITCH, WIDTH) == 0, "2D copy wrong");

    /* The synchronous queue, a copy no queue orders, and a synchronous copy. */
    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    memset(b, 0, BIG);
    ok &= kupl_memcpy_async(b, a, 1000, sync, NULL) == KUPL_OK;
    ok &= kupl_memcpy_async(b + 4096, a + 4096, 100000, NULL, e1) == KUPL_OK;
    ok &= kupl_event_wait(e1) == KUPL_OK;
    ok &= kupl_memcpy(b + 200000, a + 200000, 1 << 20) == KUPL_OK;
    ok &= check(memcmp(a, b, 1000) == 0 && memcmp(a + 4096, b + 4096, 100000) == 0 &&
                    memcmp(a + 200000, b + 200000, 1 << 20) == 0,
                "synchronous or unordered copy wrong");

    /* A copy that fails, and a call that is rejected. */
    ok &= kuplx_inject_copy_faults(1) == KUPL_OK;
    ok &= kupl_memcpy_async(b, a, 64, q1, e1) == KUPL_OK;
    ok &= check(kupl_event_wait(e1) == KUPL_ERROR, "injected fault not reported");
    ok &= check(kupl_queue_wait(q1) == KUPL_ERROR, "injected fault not reported by the queue");
    ok &= check(kupl_memcpy(b, b + 1, 100) == KUPL_ERROR, "overlap not rejected");

    /* An acquired queue and kupl_queue_wait_all, which also writes the trace out. */
    kupl_queue_h acquired = kupl_queue_acquire(0);
    ok &= kupl_memcpy_async(b, a, 64 << 10, acquired, NULL) == KUPL_OK;
    ok &= kupl_queue_wait_all() == KUPL_OK;
    ok &= check(memcmp(a, b, 64 << 10) == 0, "acquired-queue copy wrong");

    kupl_event_destroy(e1);
    kupl_event_destroy(e2);
    kupl_queue_destroy(q1);
    kupl_queue_destroy(q2);
    free(a), free(b), free(m), free(n);
    printf("trace_program: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
