/*
 * Collectives with derived datatypes (MPI_Bcast, MPI_Gather, MPI_Scatter,
 * MPI_Allgather, MPI_Alltoall): every call is made twice, through MPI_* (the
 * interposer, when preloaded) and through PMPI_* (Open MPI itself), on
 * identical sentinel-filled buffers, and the results compared byte for byte.
 * Types: a transpose (resized column sent with a count: the 2D FFT's
 * MPI_Alltoall), an indexed_block type, a vector, a struct with gaps (mixed
 * leaves: left to Open MPI); one side derived and the other contiguous too;
 * MPI_IN_PLACE forms (left to Open MPI) and a nonzero root.
 */
#include "mpi_check.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA = 1 << 20 };

static unsigned char *send_a, *send_b, *recv_mine, *recv_ompi;
static int rank, nranks;

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

static void reset(void) {
    fill_pattern(send_a, ARENA, 31 + (unsigned)rank);
    memcpy(send_b, send_a, ARENA);
    memset(recv_mine, 0x5C, ARENA);
    memset(recv_ompi, 0x5C, ARENA);
}

static void same(const char *what, const char *type) {
    CHECK(memcmp(recv_mine, recv_ompi, ARENA) == 0, "%s with %s: result differs from Open MPI's", what, type);
    CHECK(memcmp(send_a, send_b, ARENA) == 0, "%s with %s: in-place buffer differs from Open MPI's", what,
          type);
}

/* All five collectives with (scount, stype) on the send side and (rcount, rtype) on the receive side. */
static void all(const char *name, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype) {
    const int root = nranks - 1;
    reset();
    MPI_Bcast(recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
    PMPI_Bcast(recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
    if (rank == root) { /* the root's buffer is the data: compare what the others got with it */
        memcpy(recv_mine, recv_ompi, ARENA);
    }
    same("Bcast", name);
    /* Bcast of real data from the root (send layout at the root, receive layout elsewhere is the same type).
     */
    reset();
    memcpy(recv_mine, send_a, ARENA);
    memcpy(recv_ompi, send_a, ARENA);
    MPI_Bcast(recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
    PMPI_Bcast(recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
    same("Bcast of data", name);

    reset();
    MPI_Gather(send_a, scount, stype, recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
    PMPI_Gather(send_a, scount, stype, recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
    same("Gather", name);
    reset();
    MPI_Scatter(send_a, scount, stype, recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
    PMPI_Scatter(send_a, scount, stype, recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
    same("Scatter", name);
    reset();
    MPI_Allgather(send_a, scount, stype, recv_mine, rcount, rtype, MPI_COMM_WORLD);
    PMPI_Allgather(send_a, scount, stype, recv_ompi, rcount, rtype, MPI_COMM_WORLD);
    same("Allgather", name);
    reset();
    MPI_Alltoall(send_a, scount, stype, recv_mine, rcount, rtype, MPI_COMM_WORLD);
    PMPI_Alltoall(send_a, scount, stype, recv_ompi, rcount, rtype, MPI_COMM_WORLD);
    same("Alltoall", name);

    /* MPI_IN_PLACE forms (same type both sides): the in-place buffer is the result. */
    if (scount * 1 == rcount && stype == rtype) {
        reset();
        memcpy(recv_mine, send_a, ARENA);
        memcpy(recv_ompi, send_a, ARENA);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_mine, rcount, rtype, MPI_COMM_WORLD);
        PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_ompi, rcount, rtype, MPI_COMM_WORLD);
        same("Allgather in place", name);
        reset();
        memcpy(recv_mine, send_a, ARENA);
        memcpy(recv_ompi, send_a, ARENA);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_mine, rcount, rtype, MPI_COMM_WORLD);
        PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_ompi, rcount, rtype, MPI_COMM_WORLD);
        same("Alltoall in place", name);
        reset();
        memcpy(recv_mine, send_a, ARENA);
        memcpy(recv_ompi, send_a, ARENA);
        if (rank == root) {
            MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
            PMPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
        } else {
            MPI_Gather(send_a, scount, stype, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
            PMPI_Gather(send_a, scount, stype, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
        }
        same("Gather in place", name);
        reset();
        if (rank == root) {
            memcpy(recv_mine, send_a, ARENA);
            memcpy(recv_ompi, send_a, ARENA);
            MPI_Scatter(recv_mine, scount, stype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
            PMPI_Scatter(recv_ompi, scount, stype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
        } else {
            MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, recv_mine, rcount, rtype, root, MPI_COMM_WORLD);
            PMPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, recv_ompi, rcount, rtype, root, MPI_COMM_WORLD);
        }
        same("Scatter in place", name);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    send_a = malloc(ARENA);
    send_b = malloc(ARENA);
    recv_mine = malloc(ARENA);
    recv_ompi = malloc(ARENA);
    MPI_Datatype a, t, packed;

    /* The 2D FFT transpose: N x N doubles distributed by rows; each peer's block a resized column. */
    const int n = 24 * nranks, rows = n / nranks;
    MPI_Type_vector(rows, 1, n, MPI_DOUBLE, &a);
    MPI_Type_create_resized(a, 0, sizeof(double), &t);
    MPI_Type_free(&a);
    MPI_Type_commit(&t);
    MPI_Type_contiguous(rows, MPI_DOUBLE, &packed);
    MPI_Type_commit(&packed);
    all("transpose -> contiguous", rows, t, rows * rows, MPI_DOUBLE);
    all("contiguous -> transpose", rows * rows, MPI_DOUBLE, rows, t);
    all("transpose both sides", rows, t, rows, t);
    MPI_Type_free(&t);
    MPI_Type_free(&packed);

    { /* indexed_block of 3 doubles (LAMMPS atoms), resized so that peers' blocks interleave */
        int disp[40];
        for (int i = 0; i < 40; ++i)
            disp[i] = (i * 17) % 41 * 3;
        MPI_Type_create_indexed_block(40, 3, disp, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        all("indexed_block", 2, t, 2, t);
        all("indexed_block -> contiguous", 1, t, 120, MPI_DOUBLE);
        MPI_Type_free(&t);
    }
    { /* a vector (column of 8 B) */
        MPI_Type_vector(300, 1, 7, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        all("vector column", 1, t, 1, t);
        MPI_Type_free(&t);
    }
    { /* struct with gaps: mixed leaves, Open MPI's */
        int lens[2] = {1, 2};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, lens, d, types, &t);
        MPI_Type_commit(&t);
        all("struct with gaps", 50, t, 50, t);
        MPI_Type_free(&t);
    }
    if (rank == 0)
        printf("collectives: every result byte-identical to Open MPI's\n");
    MPI_Finalize();
    return 0;
}
