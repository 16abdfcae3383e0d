/*
 * The measurements behind mpi_hooks/src/cost_model.cc: for block widths and
 * message sizes, MPI_Pack, MPI_Unpack and a ping-pong of one message, each
 * timed with the interposer on and off (kupl_mpi_set_enabled) in the same
 * processes, alternating every repetition. Run with the interposer preloaded
 * and KUPL_MPI_FORCE=1 (so "on" always stages):
 *   mpirun -np 2 --mca btl self,vader -x LD_PRELOAD=libkupl_mpi.so -x KUPL_MPI_FORCE=1 ./kupl_mpi_cost_probe
 * With one rank only MPI_Pack/MPI_Unpack are timed. An argument runs only the cases whose name contains it
 * ("FFT", "w=8 ", "irregular"). Prints one line per case: median times off/on and the ratio off/on (> 1: the
 * interposer is faster).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 31, INNER_BYTES = 1 << 21 };

typedef int (*set_fn)(int);
static set_fn set_enabled;
static int rank;
static char *buf, *buf2, *packed;

static double now(void) {
    return MPI_Wtime();
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds per operation of op(kind) with the interposer on and off. */
typedef void (*op_fn)(MPI_Datatype t, int count, int inner);
static void pack_op(MPI_Datatype t, int count, int inner) {
    for (int i = 0; i < inner; ++i) {
        int pos = 0;
        MPI_Pack(buf, count, t, packed, INNER_BYTES * 4, &pos, MPI_COMM_SELF);
    }
}
static void unpack_op(MPI_Datatype t, int count, int inner) {
    for (int i = 0; i < inner; ++i) {
        int pos = 0;
        MPI_Unpack(packed, INNER_BYTES * 4, &pos, buf2, count, t, MPI_COMM_SELF);
    }
}
static void pingpong_op(MPI_Datatype t, int count, int inner) {
    for (int i = 0; i < inner; ++i) {
        if (rank == 0) {
            MPI_Send(buf, count, t, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf2, count, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf2, count, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, t, 0, 0, MPI_COMM_WORLD);
        }
    }
}

static int nranks_world = 1;
static MPI_Datatype a2a_recv_type = MPI_DATATYPE_NULL; /* contiguous receive side of the transpose */
static void alltoall_op(MPI_Datatype t, int count, int inner) {
    for (int i = 0; i < inner; ++i)
        MPI_Alltoall(buf, count, t, buf2, 1, a2a_recv_type, MPI_COMM_WORLD);
}

/* The same transpose through MPI_Alltoallv and MPI_Alltoallw: count elements of t to every peer. */
static int v_counts[64], v_sdispls[64], v_rcounts[64], v_rdispls[64];
static MPI_Datatype w_stypes[64], w_rtypes[64];
static void v_args(MPI_Datatype t, int count) {
    for (int j = 0; j < nranks_world; ++j) {
        v_counts[j] = count;
        v_rcounts[j] = 1;
        v_sdispls[j] = j * count; /* in extents (Alltoallv) */
        v_rdispls[j] = j;
        w_stypes[j] = t;
        w_rtypes[j] = a2a_recv_type;
    }
}
static void alltoallv_op(MPI_Datatype t, int count, int inner) {
    (void)count; /* in v_counts */
    for (int i = 0; i < inner; ++i)
        MPI_Alltoallv(buf, v_counts, v_sdispls, t, buf2, v_rcounts, v_rdispls, a2a_recv_type, MPI_COMM_WORLD);
}
static void alltoallw_op(MPI_Datatype t, int count, int inner) {
    (void)t;
    MPI_Aint lb, extent, rextent;
    MPI_Type_get_extent(w_stypes[0], &lb, &extent);
    MPI_Type_get_extent(w_rtypes[0], &lb, &rextent);
    int sd[64], rd[64]; /* in bytes (Alltoallw) */
    for (int j = 0; j < nranks_world; ++j) {
        sd[j] = (int)(j * count * extent);
        rd[j] = (int)(j * rextent);
    }
    for (int i = 0; i < inner; ++i)
        MPI_Alltoallw(buf, v_counts, sd, w_stypes, buf2, v_rcounts, rd, w_rtypes, MPI_COMM_WORLD);
}

static void measure(const char *what, const char *name, op_fn op, MPI_Datatype t, int count, int both) {
    int size = 0;
    MPI_Type_size(t, &size);
    const long bytes = (long)size * count;
    int inner = (int)(INNER_BYTES / (bytes > 0 ? bytes : 1));
    if (inner < 1)
        inner = 1;
    if (inner > 200)
        inner = 200;
    double on[REPS], off[REPS];
    if (both || rank == 0) {
        op(t, count, 1); /* warm up both ways */
        set_enabled(0);
        op(t, count, 1);
        set_enabled(1);
    }
    for (int r = 0; r < REPS; ++r) {
        for (int k = 0; k < 2; ++k) {
            const int enabled = (r + k) % 2;
            set_enabled(enabled);
            if (both)
                MPI_Barrier(MPI_COMM_WORLD);
            if (!both && rank != 0)
                continue;
            double t0 = now();
            op(t, count, inner);
            double dt = (now() - t0) / inner;
            (enabled ? on : off)[r] = dt;
        }
    }
    set_enabled(1);
    if (rank == 0) {
        qsort(on, REPS, sizeof(double), cmp);
        qsort(off, REPS, sizeof(double), cmp);
        printf("%-8s %-34s %8ld B  off %9.2f us  on %9.2f us  off/on %5.2f\n", what, name, bytes,
               off[REPS / 2] * 1e6, on[REPS / 2] * 1e6, off[REPS / 2] / on[REPS / 2]);
        fflush(stdout);
    }
}

static const char *only = "";
static int with_pingpong; /* only with two ranks */ /* argv[1]: run only the cases whose name contains it */

static void run(const char *name, MPI_Datatype t, int count) {
    if (*only && !strstr(name, only)) {
        MPI_Type_free(&t);
        return;
    }
    MPI_Type_commit(&t);
    measure("pack", name, pack_op, t, count, 0);
    measure("unpack", name, unpack_op, t, count, 0);
    if (with_pingpong)
        measure("pingpong", name, pingpong_op, t, count, 1);
    MPI_Type_free(&t);
}

/* n blocks of w bytes (as doubles or floats), spread irregularly (permuted) or regularly over span bytes. */
static MPI_Datatype blocks(int n, int w, int irregular, long gap) {
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * n);
    for (int i = 0; i < n; ++i) {
        long slot = irregular ? ((long)i * 7919) % n : i;
        d[i] = slot * (w + gap);
    }
    MPI_Datatype t;
    if (w % 8 == 0)
        MPI_Type_create_hindexed_block(n, w / 8, d, MPI_DOUBLE, &t);
    else
        MPI_Type_create_hindexed_block(n, w / 4, d, MPI_FLOAT, &t);
    free(d);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    set_enabled = (set_fn)dlsym(RTLD_DEFAULT, "kupl_mpi_set_enabled");
    if (!set_enabled) {
        if (rank == 0)
            fprintf(stderr, "preload libkupl_mpi.so (kupl_mpi_set_enabled not found)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const size_t arena = (size_t)64 << 20;
    buf = malloc(arena);
    buf2 = malloc(arena);
    packed = malloc((size_t)INNER_BYTES * 4);
    memset(buf, 1, arena);
    memset(buf2, 2, arena);
    only = argc > 1 ? argv[1] : "";
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_world);
    int nranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    with_pingpong = nranks >= 2;
    char name[96];
    {
        const int widths[] = {4, 8, 16, 24, 40, 48, 64, 128, 256, 512};
        const long totals[] = {4096, 32768, 262144};
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; ++wi)
            for (size_t ti = 0; ti < 3; ++ti)
                for (int irr = 0; irr < 2; ++irr) {
                    const int w = widths[wi], n = (int)(totals[ti] / w);
                    snprintf(name, sizeof name, "%s w=%d n=%d", irr ? "irregular" : "regular-idx", w, n);
                    run(name, blocks(n, w, irr, w), 1);
                }
    }
    {
        MPI_Datatype a, b, t;
        /* NAS LU x: 5 doubles per point, along y of a 5 x 66 x 66 grid */
        MPI_Type_vector(64, 5, 5 * 66, MPI_DOUBLE, &t);
        run("NAS LU x (vector 64 x 40 B)", t, 1);
        /* NAS LU y: 5 doubles x 64 contiguous points at 66*66 stride... */
        MPI_Type_vector(64, 5 * 64, 5 * 66 * 66, MPI_DOUBLE, &t);
        run("NAS LU y (vector 64 x 2560 B)", t, 1);
        /* NAS MG x-face (column), y-face (rows of 66 doubles), z-face (contiguous plane, in a vector) */
        MPI_Type_vector(66, 1, 66, MPI_DOUBLE, &a);
        MPI_Type_create_hvector(66, 1, 66 * 66 * 8, a, &t);
        MPI_Type_free(&a);
        run("NAS MG x (hvector of column)", t, 1);
        MPI_Type_vector(66, 66, 66 * 66, MPI_DOUBLE, &t);
        run("NAS MG y (vector 66 x 528 B)", t, 1);
        MPI_Type_vector(66 * 66, 1, 1, MPI_DOUBLE, &t);
        run("NAS MG z (plane)", t, 1);
        /* MILC: su3 vectors (6 floats... 3 complex doubles = 48 B) at every other site of a 4D face */
        MPI_Type_vector(8 * 8 * 8, 6, 12, MPI_DOUBLE, &a);
        MPI_Type_create_hvector(8, 1, 8 * 8 * 8 * 8 * 12 * 8, a, &t);
        MPI_Type_free(&a);
        run("MILC (hvector of vector 48 B)", t, 1);
        /* WRF: struct of 4 subarrays of floats (x-halo 3 wide of 64 x 32 x 64) */
        int sizes[3] = {64, 32, 64}, sub[3] = {64, 32, 3}, start[3] = {0, 0, 3};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_FLOAT, &a);
        int lens[4] = {1, 1, 1, 1};
        MPI_Aint disp[4] = {0, 64 * 32 * 64 * 4, 2 * 64 * 32 * 64 * 4, 3 * 64 * 32 * 64 * 4};
        MPI_Datatype types[4] = {a, a, a, a};
        MPI_Type_create_struct(4, lens, disp, types, &t);
        MPI_Type_free(&a);
        run("WRF x (struct of 4 subarrays, 12 B)", t, 1);
        /* SPECFEM3D: indexed_block of single floats at mesh indices */
        int *idx = malloc(sizeof(int) * 6000);
        for (int i = 0; i < 6000; ++i)
            idx[i] = (int)(((long)i * 7919) % 60000);
        MPI_Type_create_indexed_block(6000, 1, idx, MPI_FLOAT, &t);
        run("SPECFEM3D (indexed_block 6000 x 4 B)", t, 1);
        MPI_Type_create_indexed_block(6000, 3, idx, MPI_FLOAT, &t);
        run("SPECFEM3D cm (indexed_block 6000 x 12 B)", t, 1);
        free(idx);
        /* LAMMPS full: atoms of 3 doubles (x) at irregular indices, plus an int tag: a struct */
        int *ai = malloc(sizeof(int) * 2000);
        for (int i = 0; i < 2000; ++i)
            ai[i] = (int)(((long)i * 104729) % 20000) * 3;
        MPI_Type_create_indexed_block(2000, 3, ai, MPI_DOUBLE, &t);
        run("LAMMPS (indexed_block 2000 x 24 B)", t, 1);
        free(ai);
        /* 2D FFT transpose: resized column of 256 doubles in a 256 x 256 matrix, count 64 */
        MPI_Type_vector(256, 1, 256, MPI_DOUBLE, &a);
        MPI_Type_create_resized(a, 0, 8, &b);
        MPI_Type_free(&a);
        run("FFT transpose (256 x 64 of 8 B)", b, 64);
        MPI_Type_vector(256, 2, 512, MPI_DOUBLE, &a);
        MPI_Type_create_resized(a, 0, 16, &b);
        MPI_Type_free(&a);
        run("FFT transpose complex (16 B)", b, 64);
    }
    /* The 2D FFT's MPI_Alltoall: an n x n matrix of doubles distributed by rows, each peer's
     * block sent as `rows` resized columns, received contiguous. */
    if (with_pingpong) {
        const int sizes[] = {64, 128, 256, 512, 1024};
        for (int si = 0; si < 5; ++si) {
            const int n = sizes[si], rows = n / nranks_world;
            MPI_Datatype col, t;
            MPI_Type_vector(rows, 1, n, MPI_DOUBLE, &col);
            MPI_Type_create_resized(col, 0, sizeof(double), &t);
            MPI_Type_free(&col);
            MPI_Type_commit(&t);
            MPI_Type_contiguous(rows * rows, MPI_DOUBLE, &a2a_recv_type);
            MPI_Type_commit(&a2a_recv_type);
            snprintf(name, sizeof name, "FFT Alltoall n=%d (%d KiB per peer)", n, rows * rows * 8 / 1024);
            if (!*only || strstr(name, only)) {
                measure("alltoall", name, alltoall_op, t, rows, 1);
                if (nranks_world <= 64) {
                    v_args(t, rows);
                    measure("alltoallv", name, alltoallv_op, t, rows, 1);
                    measure("alltoallw", name, alltoallw_op, t, rows, 1);
                }
            }
            MPI_Type_free(&t);
            MPI_Type_free(&a2a_recv_type);
        }
    }
    MPI_Finalize();
    return 0;
}
