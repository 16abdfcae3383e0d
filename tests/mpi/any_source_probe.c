/*
 * Receives of a column type from MPI_ANY_SOURCE/MPI_ANY_TAG, and message
 * counts seen through MPI_Probe, MPI_Iprobe and MPI_Mprobe/MPI_Mrecv/MPI_Imrecv:
 * statuses, MPI_Get_count and MPI_Get_elements must be what Open MPI reports,
 * and each message's data must be the sender's.
 */
#include "mpi_check.h"

#include <stdlib.h>

enum { ROWS = 200, LD = 33 };

static void check_column(const double *m, int col, int source, int tag) {
    for (int i = 0; i < ROWS; ++i)
        CHECK(m[i * LD + col] == cell_value(source, i, tag), "column %d row %d from %d tag %d: %.1f", col, i,
              source, tag, m[i * LD + col]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3, "run with 3 ranks");

    double *m = calloc(ROWS * LD, sizeof(double));
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Datatype columns; /* a column whose extent is one double: count k = k adjacent columns */
    MPI_Type_create_resized(column, 0, sizeof(double), &columns);
    MPI_Type_commit(&columns);
    const int rounds = 4;

    if (rank != 0) {
        /* Each sender sends rounds columns; tag = column index, values name the sender. */
        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = cell_value(rank, i / LD, i % LD);
        for (int r = 0; r < rounds; ++r) {
            int col = rank * 4 + r;
            MPI_Send(&m[col], 1, column, 0, col, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* keeps ANY_TAG receives away from the probe round */
        /* Probe round: 2 columns in one message. */
        MPI_Send(&m[rank], 2, columns, 0, 100 + rank, MPI_COMM_WORLD);
    } else {
        /* 1. ANY_SOURCE / ANY_TAG receives into the column named by the tag. */
        int seen[3] = {0, 0, 0};
        for (int k = 0; k < 2 * rounds; ++k) {
            MPI_Status st;
            double *tmp = calloc(ROWS * LD, sizeof(double));
            MPI_Recv(&tmp[0], 1, column, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK(st.MPI_SOURCE == 1 || st.MPI_SOURCE == 2, "source %d", st.MPI_SOURCE);
            CHECK(st.MPI_TAG == st.MPI_SOURCE * 4 + seen[st.MPI_SOURCE],
                  "tag %d from %d breaks non-overtaking", st.MPI_TAG, st.MPI_SOURCE);
            ++seen[st.MPI_SOURCE];
            int count = -1, elements = -1;
            MPI_Get_count(&st, column, &count);
            MPI_Get_elements(&st, column, &elements);
            CHECK(count == 1 && elements == ROWS, "count %d elements %d", count, elements);
            for (int i = 0; i < ROWS; ++i)
                CHECK(tmp[i * LD] == cell_value(st.MPI_SOURCE, i, st.MPI_TAG), "row %d", i);
            free(tmp);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* 2. Probe, then receive what the probe announced. */
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, columns, &count);
        CHECK(count == 2, "probed count %d in columns", count);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == 2 * ROWS, "probed count %d in doubles", count);
        MPI_Datatype two;
        MPI_Type_vector(ROWS, 2, LD, MPI_DOUBLE, &two); /* same signature, another layout */
        MPI_Type_commit(&two);
        int src = st.MPI_SOURCE;
        MPI_Recv(&m[10], 1, two, src, st.MPI_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, two, &count);
        CHECK(count == 1, "received count %d", count);
        /* Column src then column src+1 of the sender, packed as its first column then its second. */
        for (int i = 0; i < ROWS; ++i) {
            /* packed order: all of sender column src, then all of column src+1; receiver takes pairs per row
             */
            int k0 = 2 * i, k1 = 2 * i + 1;
            double want0 = k0 < ROWS ? cell_value(src, k0, src) : cell_value(src, k0 - ROWS, src + 1);
            double want1 = k1 < ROWS ? cell_value(src, k1, src) : cell_value(src, k1 - ROWS, src + 1);
            CHECK(m[i * LD + 10] == want0 && m[i * LD + 11] == want1, "probe receive row %d", i);
        }
        /* 3. Iprobe until the other one arrives, then Mprobe/Imrecv it. */
        int other = 3 - src, flag = 0;
        while (!flag)
            MPI_Iprobe(other, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_elements(&st, column, &count);
        CHECK(count == 2 * ROWS, "iprobe elements %d", count);
        MPI_Message msg;
        MPI_Mprobe(other, 100 + other, MPI_COMM_WORLD, &msg, &st);
        MPI_Get_count(&st, columns, &count);
        CHECK(count == 2, "mprobe count %d", count);
        MPI_Request req;
        MPI_Imrecv(&m[20], 2, columns, &msg, &req);
        MPI_Wait(&req, &st);
        CHECK(st.MPI_SOURCE == other && st.MPI_TAG == 100 + other, "imrecv status %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
        MPI_Get_count(&st, columns, &count);
        CHECK(count == 2, "imrecv count %d", count);
        check_column(m, 20, other, other);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + 21] == cell_value(other, i, other + 1), "second column row %d", i);
        MPI_Type_free(&two);
    }
    /* 4. Mprobe + Mrecv between ranks 1 and 2 with a column type both ways. */
    if (rank == 1 || rank == 2) {
        int peer = 3 - rank;
        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = cell_value(rank, i / LD, i % LD);
        MPI_Request req;
        MPI_Isend(&m[3], 1, column, peer, 7, MPI_COMM_WORLD, &req);
        MPI_Message msg;
        MPI_Status st;
        MPI_Mprobe(peer, 7, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv(&m[30], 1, column, &msg, &st);
        int count = -1;
        MPI_Get_count(&st, column, &count);
        CHECK(count == 1 && st.MPI_SOURCE == peer, "mrecv count %d source %d", count, st.MPI_SOURCE);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + 30] == cell_value(peer, i, 3), "mrecv row %d", i);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&column);
    MPI_Type_free(&columns);
    free(m);
    if (rank == 0)
        printf("any_source_probe: statuses, counts and data correct\n");
    MPI_Finalize();
    return 0;
}
