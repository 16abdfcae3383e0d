/*
 * halo_column.c — exchanging halo columns of a 2D grid with kupl_memcpy2d_async.
 *
 * The grid is NY rows of HALO + NX + HALO doubles (row-major). A column block is
 * HALO doubles wide and NY rows tall, one row pitch apart: one 2D copy packs it into
 * a contiguous buffer and another unpacks it. With periodic boundaries the east
 * interior columns become the west halo and the west interior columns the east halo.
 * Usage: halo_column [MiB of grid, default 64]. Exit status 1 if a halo is wrong.
 */
#include "kupl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HALO = 2, NX = 2048, REPEATS = 7 };

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v) {
    qsort(v, REPEATS, sizeof *v, compare_doubles);
    return v[REPEATS / 2];
}

static double value_at(size_t y, size_t x) {
    return (double)y * 10000.0 + (double)x;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
    if (mib == 0)
        mib = 64;
    const size_t row = HALO + NX + HALO; /* doubles per row */
    const size_t pitch = row * sizeof(double);
    const size_t ny = (mib << 20) / pitch;
    const size_t width = HALO * sizeof(double);

    double *grid = kupl_malloc(KUPL_MEM_DEFAULT, ny * pitch);
    double *send_east = kupl_malloc(KUPL_MEM_DEFAULT, ny * width);
    double *send_west = kupl_malloc(KUPL_MEM_DEFAULT, ny * width);
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h packed = kupl_event_create(), done = kupl_event_create();
    if (!grid || !send_east || !send_west || !q || !packed || !done) {
        fprintf(stderr, "halo_column: setup failed\n");
        return 1;
    }
    for (size_t y = 0; y < ny; ++y)
        for (size_t x = 0; x < row; ++x)
            grid[y * row + x] = (x < HALO || x >= HALO + NX) ? -1.0 : value_at(y, x);
    memset(send_east, 0, ny * width);
    memset(send_west, 0, ny * width);

    double pack[REPEATS], unpack[REPEATS], loop[REPEATS];
    int rc = KUPL_OK;
    for (int r = 0; r < REPEATS; ++r) {
        /* Pack: the easternmost and westernmost interior columns into contiguous buffers. */
        double t0 = kupl_get_wtime();
        rc |= kupl_memcpy2d_async(send_east, width, grid + NX, pitch, width, ny, q, NULL);
        rc |= kupl_memcpy2d_async(send_west, width, grid + HALO, pitch, width, ny, q, packed);
        rc |= kupl_event_wait(packed);
        pack[r] = kupl_get_wtime() - t0;

        /* Unpack (periodic): east interior -> west halo, west interior -> east halo. */
        t0 = kupl_get_wtime();
        rc |= kupl_memcpy2d_async(grid, pitch, send_east, width, width, ny, q, NULL);
        rc |= kupl_memcpy2d_async(grid + HALO + NX, pitch, send_west, width, width, ny, q, done);
        rc |= kupl_event_wait(done);
        unpack[r] = kupl_get_wtime() - t0;

        /* The same pack of one column block with a plain loop, for comparison. */
        t0 = kupl_get_wtime();
        for (size_t y = 0; y < ny; ++y)
            memcpy(send_east + y * HALO, grid + y * row + NX, width);
        loop[r] = kupl_get_wtime() - t0;
    }
    double t_pack = median(pack), t_unpack = median(unpack), t_loop = median(loop);

    int ok = rc == KUPL_OK;
    for (size_t y = 0; y < ny && ok; ++y)
        for (size_t h = 0; h < HALO; ++h) {
            ok &= grid[y * row + h] == value_at(y, NX + h);               /* west halo */
            ok &= grid[y * row + HALO + NX + h] == value_at(y, HALO + h); /* east halo */
            ok &= grid[y * row + HALO + h] == value_at(y, HALO + h);      /* interior untouched */
        }

    const double mb = (double)(ny * width) / 1e6;
    printf("kupl halo example: %zu x %d grid of doubles, halo columns %d wide (%zu B rows, pitch %zu B)\n",
           ny, NX, HALO, width, pitch);
    printf("  pack 2 columns (2D async)   : %8.3f ms  (%.2f GB/s)\n", t_pack * 1e3, 2 * mb / 1e3 / t_pack);
    printf("  unpack 2 columns (2D async) : %8.3f ms  (%.2f GB/s)\n", t_unpack * 1e3,
           2 * mb / 1e3 / t_unpack);
    printf("  pack 1 column, plain loop   : %8.3f ms  (%.2f GB/s)\n", t_loop * 1e3, mb / 1e3 / t_loop);
    printf("  (medians of %d runs)\n", REPEATS);
    printf("  result check                : %s\n", ok ? "halos correct" : "MISMATCH");

    kupl_event_destroy(packed);
    kupl_event_destroy(done);
    kupl_queue_destroy(q);
    kupl_free(KUPL_MEM_DEFAULT, grid);
    kupl_free(KUPL_MEM_DEFAULT, send_east);
    kupl_free(KUPL_MEM_DEFAULT, send_west);
    return ok ? 0 : 1;
}
