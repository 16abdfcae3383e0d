/* Exhaustion tests (tests/omp/exhaustion.c, tests/mpi/memory_exhaustion.c): an address-space cap
 * (RLIMIT_AS) filled with ballast, so that allocations the test then makes really fail. C, header
 * only; each test judges the returned message with its own CHECK. */
#ifndef KUPL_TESTS_COMMON_ADDRESS_SPACE_CAP_H
#define KUPL_TESTS_COMMON_ADDRESS_SPACE_CAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct {
    size_t chunk_bytes; /* ballast granularity */
    int capacity;       /* chunks at most, the size of `chunks` */
    void **chunks;
    int count; /* chunks held now */
} ballast_t;

/* The process's address space in use now (from /proc/self/statm), or 0 if unreadable. */
static size_t address_space_in_use(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Caps the address space `above` bytes over its use now and fills it with ballast chunks (each
 * written, so really the process's) until none fits anywhere, then frees `headroom` bytes of them.
 * Returns NULL, or what went wrong (b->count says how many chunks it holds). */
static const char *cap_address_space(ballast_t *b, size_t above, size_t headroom) {
    const size_t in_use = address_space_in_use();
    if (in_use == 0)
        return "cannot read /proc/self/statm";
    struct rlimit lim;
    getrlimit(RLIMIT_AS, &lim);
    lim.rlim_cur = in_use + above;
    if (setrlimit(RLIMIT_AS, &lim) != 0)
        return "setrlimit(RLIMIT_AS)";
    while (b->count < b->capacity && (b->chunks[b->count] = malloc(b->chunk_bytes)) != NULL) {
        memset(b->chunks[b->count], 1, b->chunk_bytes);
        ++b->count;
    }
    if (b->count == 0 || b->count == b->capacity)
        return "the ballast did not fill the capped address space";
    for (size_t freed = 0; freed < headroom && b->count > 0; freed += b->chunk_bytes)
        free(b->chunks[--b->count]);
    return NULL;
}

/* Frees the ballast and lifts the cap. Returns NULL, or what went wrong. */
static const char *lift_address_space_cap(ballast_t *b) {
    while (b->count > 0)
        free(b->chunks[--b->count]);
    struct rlimit lim;
    getrlimit(RLIMIT_AS, &lim);
    lim.rlim_cur = lim.rlim_max;
    return setrlimit(RLIMIT_AS, &lim) == 0 ? NULL : "lifting RLIMIT_AS";
}

#endif
