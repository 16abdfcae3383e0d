/*
 * Four ranks on two nodes (run by run_two_nodes_test.sh: ranks 0,1 on node1,
 * 2,3 on node2). Every rank sends a block-list type (indexed_block, LAMMPS-like)
 * and a transposed grid to every other rank: same-node peers go through the
 * interposer, other-node peers to Open MPI; then every rank receives from all
 * the others with MPI_ANY_SOURCE (which mixes both and must be left to Open
 * MPI on a communicator spanning nodes), and an MPI_Alltoall with a derived
 * type on MPI_COMM_WORLD (spans nodes: Open MPI's) and on the node's own
 * communicator (staged). Every received byte is compared with what Open MPI's
 * own pack and unpack of the sender's data give.
 */
#include "mpi_check.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA = 1 << 18, NB = 400 };

static int rank, nranks;

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

/* Open MPI's result of receiving sender's data (count of type) into a sentinel arena. */
static void expected(int sender, MPI_Datatype type, int count, unsigned char *out) {
    unsigned char *src = malloc(ARENA), *packed = malloc(ARENA);
    fill_pattern(src, ARENA, 100u + (unsigned)sender);
    int pos = 0, upos = 0;
    PMPI_Pack(src, count, type, packed, ARENA, &pos, MPI_COMM_SELF);
    memset(out, 0x5C, ARENA);
    PMPI_Unpack(packed, pos, &upos, out, count, type, MPI_COMM_SELF);
    free(src);
    free(packed);
}

static void exchange(const char *name, MPI_Datatype type, int count) {
    unsigned char *src = malloc(ARENA), *want = malloc(ARENA);
    unsigned char *got = malloc((size_t)ARENA * nranks);
    fill_pattern(src, ARENA, 100u + (unsigned)rank);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * nranks);
    int nreq = 0;
    /* 1. Named sources. */
    memset(got, 0x5C, (size_t)ARENA * nranks);
    for (int q = 0; q < nranks; ++q) {
        if (q == rank)
            continue;
        MPI_Irecv(got + (size_t)q * ARENA, count, type, q, 1, MPI_COMM_WORLD, &reqs[nreq++]);
        MPI_Isend(src, count, type, q, 1, MPI_COMM_WORLD, &reqs[nreq++]);
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    for (int q = 0; q < nranks; ++q) {
        if (q == rank)
            continue;
        expected(q, type, count, want);
        CHECK(memcmp(got + (size_t)q * ARENA, want, ARENA) == 0, "%s: from rank %d differs", name, q);
    }
    /* 2. MPI_ANY_SOURCE: the slot is chosen by the status. */
    memset(got, 0x5C, (size_t)ARENA * nranks);
    unsigned char *slot = malloc(ARENA);
    nreq = 0;
    for (int q = 0; q < nranks; ++q)
        if (q != rank)
            MPI_Isend(src, count, type, q, 2, MPI_COMM_WORLD, &reqs[nreq++]);
    for (int k = 0; k < nranks - 1; ++k) {
        MPI_Status st;
        memset(slot, 0x5C, ARENA);
        MPI_Recv(slot, count, type, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nranks && st.MPI_SOURCE != rank, "%s: source %d", name,
              st.MPI_SOURCE);
        expected(st.MPI_SOURCE, type, count, want);
        CHECK(memcmp(slot, want, ARENA) == 0, "%s: MPI_ANY_SOURCE message from %d differs", name,
              st.MPI_SOURCE);
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    free(slot);
    free(reqs);
    free(src);
    free(want);
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void alltoall(const char *name, MPI_Comm comm, MPI_Datatype type, int count) {
    int n = 0;
    MPI_Comm_size(comm, &n);
    unsigned char *src = malloc(ARENA), *mine = malloc(ARENA), *ompi = malloc(ARENA);
    fill_pattern(src, ARENA, 7u + (unsigned)rank);
    memset(mine, 0x5C, ARENA);
    memset(ompi, 0x5C, ARENA);
    MPI_Alltoall(src, count, type, mine, count, type, comm);
    PMPI_Alltoall(src, count, type, ompi, count, type, comm);
    CHECK(memcmp(mine, ompi, ARENA) == 0, "%s: Alltoall differs from Open MPI's", name);
    free(src);
    free(mine);
    free(ompi);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks == 4, "run with 4 ranks on two nodes");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    CHECK(node_size == 2, "expected 2 ranks per node, got %d", node_size);

    MPI_Datatype blocks, col, t;
    int disp[NB];
    for (int i = 0; i < NB; ++i)
        disp[i] = (i * 131) % (NB + 7) * 3;
    MPI_Type_create_indexed_block(NB, 3, disp, MPI_DOUBLE, &blocks);
    MPI_Type_commit(&blocks);
    exchange("indexed_block", blocks, 1);
    MPI_Type_vector(64, 1, 64, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &t);
    MPI_Type_free(&col);
    MPI_Type_commit(&t);
    exchange("transpose", t, 16);
    alltoall("transpose on MPI_COMM_WORLD", MPI_COMM_WORLD, t, 16);
    alltoall("transpose on the node", node, t, 32);
    MPI_Type_free(&t);
    MPI_Type_free(&blocks);
    MPI_Comm_free(&node);
    if (rank == 0)
        printf("two_nodes: every message byte-identical to Open MPI's\n");
    MPI_Finalize();
    return 0;
}
