/*
 * The v and w collectives with derived datatypes (MPI_Gatherv, MPI_Scatterv,
 * MPI_Allgatherv, MPI_Alltoallv, MPI_Alltoallw): every call is made twice,
 * through MPI_* (the interposer, when preloaded) and through PMPI_* (Open MPI
 * itself), on identical sentinel-filled buffers, and the whole receive arena
 * (and, in place, the in-place buffer) compared byte for byte.
 *
 * Types with gaps: a column (vector), a subarray, an indexed type with permuted
 * blocks of several lengths, a transpose (resized column, the 2D FFT), each on
 * both sides and against contiguous doubles; a struct of int and double with a
 * gap (mixed leaves: left to Open MPI). Per-peer counts: irregular (including
 * zeros: blocks of different lengths, which travel as plain leaves) and uniform
 * (equal or zero: one two-block wire type); displacements in reverse peer order
 * with holes between blocks. MPI_IN_PLACE wherever the standard allows it (root
 * of Gatherv/Scatterv, Allgatherv, Alltoallv/w with symmetric counts), a nonzero
 * root, an intercommunicator (left to Open MPI) and MPI_COMM_NULL (the same error).
 *
 * usage: mpi_test_collectives_v [gatherv|scatterv|allgatherv|alltoallv|alltoallw|intercomm
 *                                |costmodel [inplace]]
 * (default: all but costmodel), so that the statistics of one run speak of one call;
 * "inplace" runs only the MPI_IN_PLACE forms.
 */
#include "mpi_check.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA = 1 << 20, MAXR = 16 };

static unsigned char *src, *recv_mine, *recv_ompi;
static int rank, nranks;
static const char *only;
static int in_place_only; /* second argument "inplace": only the MPI_IN_PLACE forms */

static int wanted(const char *what) {
    return !only || strcmp(only, what) == 0;
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

/* Fresh input; both result arenas sentinel-filled, or (in place) both holding the same data. */
static void reset(int in_place) {
    fill_pattern(src, ARENA, 77 + (unsigned)rank);
    if (in_place) {
        memcpy(recv_mine, src, ARENA);
        memcpy(recv_ompi, src, ARENA);
    } else {
        memset(recv_mine, 0x5C, ARENA);
        memset(recv_ompi, 0x5C, ARENA);
    }
}

static void same(const char *what, const char *name, const char *counts) {
    CHECK(memcmp(recv_mine, recv_ompi, ARENA) == 0, "%s with %s, %s counts: result differs from Open MPI's",
          what, name, counts);
}

/* Elements (of the side's unit) from rank i to rank j. */
static int count_of(int uniform, int i, int j) {
    if (uniform)
        return (i + 2 * j) % 3 == 1 ? 0 : 2;
    return (i * 2 + j * 3 + 1) % 4;
}
/* Symmetric counts, for Alltoallv/w in place: what i sends to j is what j sends to i. */
static int sym_count_of(int uniform, int i, int j) {
    if (uniform)
        return (i + j) % 3 == 1 ? 0 : 2;
    return (i + j) % 4;
}

/* Block i's displacement in units: reverse peer order, holes between and in front of blocks. */
static int slot(int i, int unit) {
    return (nranks - 1 - i) * (4 * unit + 3) + (i & 1) + 1;
}

/*
 * All five with (stype, su) on the send side and (rtype, ru) on the receive side:
 * su elements of stype carry what ru elements of rtype do. Counts are in those units.
 */
static void all_v(const char *name, MPI_Datatype stype, int su, MPI_Datatype rtype, int ru) {
    const int root = nranks > 2 ? 1 : nranks - 1;
    int scounts[MAXR], sdispls[MAXR], rcounts[MAXR], rdispls[MAXR];
    for (int uniform = 0; uniform < 2; ++uniform) {
        const char *cname = uniform ? "uniform" : "irregular";
        for (int i = 0; i < nranks; ++i) {
            sdispls[i] = slot(i, su);
            rdispls[i] = slot(i, ru);
        }

        if (wanted("gatherv")) {
            for (int i = 0; i < nranks; ++i)
                rcounts[i] = count_of(uniform, i, root) * ru;
            const int sc = count_of(uniform, rank, root) * su;
            if (!in_place_only) {
                reset(0);
                MPI_Gatherv(src, sc, stype, recv_mine, rcounts, rdispls, rtype, root, MPI_COMM_WORLD);
                PMPI_Gatherv(src, sc, stype, recv_ompi, rcounts, rdispls, rtype, root, MPI_COMM_WORLD);
                same("Gatherv", name, cname);
            }
            if (stype == rtype && su == ru) { /* the root's block is already in place */
                reset(1);
                if (rank == root) {
                    MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_mine, rcounts, rdispls, rtype, root,
                                MPI_COMM_WORLD);
                    PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_ompi, rcounts, rdispls, rtype, root,
                                 MPI_COMM_WORLD);
                } else {
                    MPI_Gatherv(src, sc, stype, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                    PMPI_Gatherv(src, sc, stype, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                }
                same("Gatherv in place", name, cname);
            }
        }

        if (wanted("scatterv")) {
            for (int j = 0; j < nranks; ++j)
                scounts[j] = count_of(uniform, root, j) * su;
            const int rc = count_of(uniform, root, rank) * ru;
            if (!in_place_only) {
                reset(0);
                MPI_Scatterv(src, scounts, sdispls, stype, recv_mine, rc, rtype, root, MPI_COMM_WORLD);
                PMPI_Scatterv(src, scounts, sdispls, stype, recv_ompi, rc, rtype, root, MPI_COMM_WORLD);
                same("Scatterv", name, cname);
            }
            if (stype == rtype && su == ru) { /* the root's own block stays in its send buffer */
                reset(1);
                if (rank == root) {
                    MPI_Scatterv(recv_mine, scounts, sdispls, stype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                                 MPI_COMM_WORLD);
                    PMPI_Scatterv(recv_ompi, scounts, sdispls, stype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                                  root, MPI_COMM_WORLD);
                } else {
                    MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, recv_mine, rc, rtype, root,
                                 MPI_COMM_WORLD);
                    PMPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, recv_ompi, rc, rtype, root,
                                  MPI_COMM_WORLD);
                }
                same("Scatterv in place", name, cname);
            }
        }

        if (wanted("allgatherv")) {
            for (int i = 0; i < nranks; ++i)
                rcounts[i] = count_of(uniform, i, 0) * ru;
            const int sc = count_of(uniform, rank, 0) * su;
            if (!in_place_only) {
                reset(0);
                MPI_Allgatherv(src, sc, stype, recv_mine, rcounts, rdispls, rtype, MPI_COMM_WORLD);
                PMPI_Allgatherv(src, sc, stype, recv_ompi, rcounts, rdispls, rtype, MPI_COMM_WORLD);
                same("Allgatherv", name, cname);
            }
            if (stype == rtype && su == ru) {
                reset(1);
                MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_mine, rcounts, rdispls, rtype,
                               MPI_COMM_WORLD);
                PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_ompi, rcounts, rdispls, rtype,
                                MPI_COMM_WORLD);
                same("Allgatherv in place", name, cname);
            }
        }

        if (wanted("alltoallv")) {
            for (int i = 0; i < nranks; ++i) {
                scounts[i] = count_of(uniform, rank, i) * su;
                rcounts[i] = count_of(uniform, i, rank) * ru;
            }
            if (!in_place_only) {
                reset(0);
                MPI_Alltoallv(src, scounts, sdispls, stype, recv_mine, rcounts, rdispls, rtype,
                              MPI_COMM_WORLD);
                PMPI_Alltoallv(src, scounts, sdispls, stype, recv_ompi, rcounts, rdispls, rtype,
                               MPI_COMM_WORLD);
                same("Alltoallv", name, cname);
            }
            if (stype == rtype && su == ru) {
                for (int i = 0; i < nranks; ++i)
                    rcounts[i] = sym_count_of(uniform, rank, i) * ru;
                reset(1);
                MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv_mine, rcounts, rdispls, rtype,
                              MPI_COMM_WORLD);
                PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv_ompi, rcounts, rdispls,
                               rtype, MPI_COMM_WORLD);
                same("Alltoallv in place", name, cname);
            }
        }
    }
}

/*
 * Alltoallw with a type per peer: stypes[j] to rank j, rtypes[i] from rank i, all of
 * one signature per element (so any pairing matches); displacements in bytes, units
 * of sstride (rstride) bytes on the send (receive) side.
 */
static void all_w(const char *name, const MPI_Datatype *stypes, int su, MPI_Aint sstride,
                  const MPI_Datatype *rtypes, int ru, MPI_Aint rstride) {
    if (!wanted("alltoallw"))
        return;
    int scounts[MAXR], sdispls[MAXR], rcounts[MAXR], rdispls[MAXR];
    for (int uniform = 0; uniform < 2; ++uniform) {
        const char *cname = uniform ? "uniform" : "irregular";
        for (int i = 0; i < nranks; ++i) {
            scounts[i] = count_of(uniform, rank, i) * su;
            rcounts[i] = count_of(uniform, i, rank) * ru;
            sdispls[i] = (int)(slot(i, su) * sstride);
            rdispls[i] = (int)(slot(i, ru) * rstride);
        }
        if (!in_place_only) {
            reset(0);
            MPI_Alltoallw(src, scounts, sdispls, stypes, recv_mine, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
            PMPI_Alltoallw(src, scounts, sdispls, stypes, recv_ompi, rcounts, rdispls, rtypes,
                           MPI_COMM_WORLD);
            same("Alltoallw", name, cname);
        }
        if (su == ru) {
            for (int i = 0; i < nranks; ++i)
                rcounts[i] = sym_count_of(uniform, rank, i) * ru;
            reset(1);
            MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, recv_mine, rcounts, rdispls, rtypes,
                          MPI_COMM_WORLD);
            PMPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, recv_ompi, rcounts, rdispls, rtypes,
                           MPI_COMM_WORLD);
            same("Alltoallw in place", name, cname);
        }
    }
}

/* Alltoallv on an intercommunicator (even ranks against odd ones): Open MPI's, same bytes. */
static void intercomm(MPI_Datatype type) {
    if (!wanted("intercomm") || nranks < 2)
        return;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 21, &inter);
    int remote = 0, local = 0;
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm_rank(inter, &local);
    int scounts[MAXR], sdispls[MAXR], rcounts[MAXR], rdispls[MAXR];
    for (int i = 0; i < remote; ++i) {
        /* what local rank a of one group sends to remote rank b: a + b + 1 elements */
        scounts[i] = rcounts[i] = local + i + 1;
        sdispls[i] = rdispls[i] = slot(i, 4);
    }
    reset(0);
    MPI_Alltoallv(src, scounts, sdispls, type, recv_mine, rcounts, rdispls, type, inter);
    PMPI_Alltoallv(src, scounts, sdispls, type, recv_ompi, rcounts, rdispls, type, inter);
    same("Alltoallv on an intercommunicator", "a column", "irregular");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* MPI_COMM_NULL (errors returned): each call fails as Open MPI's does, with the same error class. */
static void null_comm(MPI_Datatype type) {
    if (!wanted("intercomm"))
        return;
    int counts[MAXR], displs[MAXR];
    MPI_Datatype types[MAXR];
    for (int i = 0; i < nranks; ++i) {
        counts[i] = 1;
        displs[i] = slot(i, 1);
        types[i] = type;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int mine[5], ompi[5];
    mine[0] = MPI_Gatherv(src, 1, type, recv_mine, counts, displs, type, 0, MPI_COMM_NULL);
    ompi[0] = PMPI_Gatherv(src, 1, type, recv_ompi, counts, displs, type, 0, MPI_COMM_NULL);
    mine[1] = MPI_Scatterv(src, counts, displs, type, recv_mine, 1, type, 0, MPI_COMM_NULL);
    ompi[1] = PMPI_Scatterv(src, counts, displs, type, recv_ompi, 1, type, 0, MPI_COMM_NULL);
    mine[2] = MPI_Allgatherv(src, 1, type, recv_mine, counts, displs, type, MPI_COMM_NULL);
    ompi[2] = PMPI_Allgatherv(src, 1, type, recv_ompi, counts, displs, type, MPI_COMM_NULL);
    mine[3] = MPI_Alltoallv(src, counts, displs, type, recv_mine, counts, displs, type, MPI_COMM_NULL);
    ompi[3] = PMPI_Alltoallv(src, counts, displs, type, recv_ompi, counts, displs, type, MPI_COMM_NULL);
    mine[4] = MPI_Alltoallw(src, counts, displs, types, recv_mine, counts, displs, types, MPI_COMM_NULL);
    ompi[4] = PMPI_Alltoallw(src, counts, displs, types, recv_ompi, counts, displs, types, MPI_COMM_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    for (int k = 0; k < 5; ++k) {
        int cm = -1, co = -2;
        MPI_Error_class(mine[k], &cm);
        MPI_Error_class(ompi[k], &co);
        CHECK(mine[k] != MPI_SUCCESS && cm == co, "call %d on MPI_COMM_NULL: error class %d, Open MPI's %d",
              k, cm, co);
    }
}

/*
 * Run without KUPL_MPI_FORCE: Alltoallv of columns of 8 B rows, 4.8 KiB per element.
 * Equal blocks share a two-block wire type and are staged; blocks of different lengths
 * would travel contiguous beyond Open MPI's eager size, which the cost model refuses.
 */
static void cost_model(void) {
    MPI_Datatype col;
    MPI_Type_vector(600, 1, 2, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    int scounts[MAXR], sdispls[MAXR], rcounts[MAXR], rdispls[MAXR];
    for (int uniform = 0; uniform < 2; ++uniform) {
        for (int i = 0; i < nranks; ++i) {
            scounts[i] = uniform ? 1 : 1 + (rank + 2 * i) % 3;
            rcounts[i] = uniform ? 1 : 1 + (i + 2 * rank) % 3;
            sdispls[i] = rdispls[i] = 4 * (nranks - 1 - i);
        }
        reset(0);
        MPI_Alltoallv(src, scounts, sdispls, col, recv_mine, rcounts, rdispls, col, MPI_COMM_WORLD);
        PMPI_Alltoallv(src, scounts, sdispls, col, recv_ompi, rcounts, rdispls, col, MPI_COMM_WORLD);
        same("Alltoallv (cost model)", "column of 600", uniform ? "uniform" : "irregular");
    }
    MPI_Type_free(&col);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks <= MAXR, "at most %d ranks", MAXR);
    only = argc > 1 ? argv[1] : NULL;
    in_place_only = argc > 2 && strcmp(argv[2], "inplace") == 0;
    src = malloc(ARENA);
    recv_mine = malloc(ARENA);
    recv_ompi = malloc(ARENA);

    /* A column of 40 doubles with gaps (extent 118 doubles). */
    MPI_Datatype column;
    MPI_Type_vector(40, 1, 3, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    all_v("column", column, 1, column, 1);
    all_v("column -> contiguous", column, 1, MPI_DOUBLE, 40);
    intercomm(column);
    null_comm(column);

    /* An 8 x 5 subarray of a 16 x 16 double matrix (40 doubles, rows of 40 B with gaps). */
    MPI_Datatype sub;
    int sizes[2] = {16, 16}, subsizes[2] = {8, 5}, starts[2] = {3, 2};
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    all_v("contiguous -> subarray", MPI_DOUBLE, 40, sub, 1);
    all_v("subarray", sub, 1, sub, 1);

    /* Indexed, 40 doubles in permuted blocks of 1-5 with holes (a block list). */
    MPI_Datatype idx;
    int lens[10] = {1, 3, 2, 5, 1, 4, 8, 6, 3, 7}, disp[10];
    for (int b = 0, at = 0; b < 10; ++b) {
        disp[(b * 7) % 10] = at; /* blocks laid out in an order other than the typemap's */
        at += 9;
    }
    MPI_Type_indexed(10, lens, disp, MPI_DOUBLE, &idx);
    MPI_Type_commit(&idx);
    all_v("indexed", idx, 1, idx, 1);
    all_v("indexed -> column", idx, 1, column, 1);

    { /* The 2D FFT transpose: a resized column of 6 rows of an N-wide matrix, counts in columns. */
        const int n = 200;
        MPI_Datatype a, t;
        MPI_Type_vector(6, 1, n, MPI_DOUBLE, &a);
        MPI_Type_create_resized(a, 0, sizeof(double), &t);
        MPI_Type_free(&a);
        MPI_Type_commit(&t);
        all_v("transpose -> contiguous", t, 1, MPI_DOUBLE, 6);
        all_v("transpose both sides", t, 1, t, 1);
        MPI_Type_free(&t);
    }

    if (!in_place_only) { /* struct of int and double with a gap: mixed leaves, Open MPI's */
        int blens[2] = {1, 2};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st;
        MPI_Type_create_struct(2, blens, d, types, &st);
        MPI_Type_commit(&st);
        all_v("struct with gaps", st, 3, st, 3);
        MPI_Type_free(&st);
    }

    { /* Alltoallw: column, indexed and subarray per peer (40 doubles each) */
        MPI_Datatype stypes[MAXR], rtypes[MAXR], contig[MAXR], pick[3] = {column, idx, sub};
        for (int i = 0; i < nranks; ++i) {
            stypes[i] = pick[i % 3];
            rtypes[i] = pick[(i + 1) % 3];
            contig[i] = MPI_DOUBLE;
        }
        const MPI_Aint stride = 256 * sizeof(double); /* the largest extent: the subarray's */
        all_w("column/indexed/subarray per peer", stypes, 1, stride, rtypes, 1, stride);
        /* A contiguous side is Open MPI's; the other side is still staged. */
        all_w("contiguous -> per-peer types", contig, 40, sizeof(double), rtypes, 1, stride);
    }

    if (only && strcmp(only, "costmodel") == 0)
        cost_model();

    MPI_Type_free(&column);
    MPI_Type_free(&sub);
    MPI_Type_free(&idx);
    if (rank == 0)
        printf("collectives_v%s%s: every result byte-identical to Open MPI's\n", only ? " " : "",
               only ? only : "");
    free(src);
    free(recv_mine);
    free(recv_ompi);
    MPI_Finalize();
    return 0;
}
