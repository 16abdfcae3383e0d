/*
 * Every send mode with a column type, and the corner cases whose semantics must
 * not change: progress of an MPI_Isend while its rank blocks in MPI_Barrier,
 * synchronous/ready/buffered sends, Sendrecv_replace, MPI_PROC_NULL, zero
 * counts, MPI_BOTTOM with absolute addresses, cancelled receives,
 * intercommunicators (left to Open MPI), and errors returned for a bad rank.
 */
#include "mpi_check.h"

#include <stdlib.h>
#include <string.h>

enum { ROWS = 70000, LD = 3, SMALL = 100 }; /* 560 KB column: a rendezvous message */

static double *m;

static void reset(int owner) {
    for (size_t i = 0; i < (size_t)ROWS * LD; ++i)
        m[i] = owner < 0 ? -1.0 : cell_value(owner, (int)(i / LD), (int)(i % LD));
}

static void check_col(int col, int owner, int from_col, int rows, const char *what) {
    for (int i = 0; i < rows; ++i)
        CHECK(m[(size_t)i * LD + col] == cell_value(owner, i, from_col), "%s: row %d = %.1f", what, i,
              m[(size_t)i * LD + col]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    const int peer = 1 - rank;
    m = malloc(sizeof(double) * ROWS * LD);
    MPI_Datatype column, small;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Type_vector(SMALL, 1, LD, MPI_DOUBLE, &small);
    MPI_Type_commit(&small);

    /* 1. Progress: rank 0's Isend must complete while rank 0 sits in MPI_Barrier. */
    if (rank == 0) {
        reset(0);
        MPI_Request r;
        MPI_Isend(&m[1], 1, column, 1, 1, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1 enters only after its Recv completed */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        reset(-1);
        MPI_Recv(&m[2], 1, column, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        check_col(2, 0, 1, ROWS, "progress");
    }

    /* 2. Ssend, Rsend (receive pre-posted), Bsend and Ibsend, Issend. */
    if (rank == 0) {
        reset(0);
        MPI_Ssend(&m[0], 1, column, 1, 2, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Rsend(&m[1], 1, small, 1, 3, MPI_COMM_WORLD);
        int bytes;
        MPI_Pack_size(1, small, MPI_COMM_WORLD, &bytes);
        bytes = 2 * (bytes + MPI_BSEND_OVERHEAD);
        void *buffer = malloc(bytes);
        MPI_Buffer_attach(buffer, bytes);
        MPI_Bsend(&m[2], 1, small, 1, 4, MPI_COMM_WORLD);
        MPI_Request r;
        MPI_Ibsend(&m[0], 1, small, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Buffer_detach(&buffer, &bytes);
        free(buffer);
        MPI_Issend(&m[2], 1, column, 1, 6, MPI_COMM_WORLD, &r);
        for (int flag = 0; !flag;)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    } else {
        reset(-1);
        MPI_Recv(&m[0], 1, column, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_col(0, 0, 0, ROWS, "Ssend");
        MPI_Request r;
        MPI_Irecv(&m[1], 1, small, 0, 3, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check_col(1, 0, 1, SMALL, "Rsend");
        reset(-1);
        MPI_Recv(&m[2], 1, small, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_col(2, 0, 2, SMALL, "Bsend");
        MPI_Recv(&m[1], 1, small, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_col(1, 0, 0, SMALL, "Ibsend");
        MPI_Recv(&m[0], 1, column, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_col(0, 0, 2, ROWS, "Issend");
    }

    /* 3. Sendrecv_replace of a column: each rank ends up with the other's column. */
    reset(rank);
    MPI_Status st;
    MPI_Sendrecv_replace(&m[1], 1, small, peer, 7, peer, 7, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 7, "replace status");
    check_col(1, peer, 1, SMALL, "Sendrecv_replace");
    check_col(0, rank, 0, SMALL, "Sendrecv_replace neighbour");

    /* 4. MPI_PROC_NULL and zero counts. */
    reset(-1);
    int count = -1;
    MPI_Send(&m[0], 1, column, MPI_PROC_NULL, 8, MPI_COMM_WORLD);
    MPI_Recv(&m[0], 1, column, MPI_PROC_NULL, 8, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, column, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
          "PROC_NULL status %d/%d/%d", st.MPI_SOURCE, st.MPI_TAG, count);
    CHECK(m[0] == -1.0, "PROC_NULL receive wrote data");
    MPI_Sendrecv(&m[0], 0, column, peer, 9, &m[1], 0, column, peer, 9, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, column, &count);
    CHECK(count == 0 && st.MPI_SOURCE == peer, "zero-count status %d", count);
    CHECK(m[1] == -1.0, "zero-count receive wrote data");

    /* 5. MPI_BOTTOM: a struct holding the absolute address of a small column. */
    {
        MPI_Aint addr;
        MPI_Datatype at_bottom;
        int one = 1;
        MPI_Get_address(&m[rank == 0 ? 0 : 2], &addr);
        MPI_Type_create_struct(1, &one, &addr, &small, &at_bottom);
        MPI_Type_commit(&at_bottom);
        reset(rank == 0 ? 0 : -1);
        if (rank == 0)
            MPI_Send(MPI_BOTTOM, 1, at_bottom, 1, 10, MPI_COMM_WORLD);
        else {
            MPI_Recv(MPI_BOTTOM, 1, at_bottom, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check_col(2, 0, 0, SMALL, "MPI_BOTTOM");
        }
        MPI_Type_free(&at_bottom);
    }

    /* 6. A cancelled receive completes as cancelled and writes nothing. */
    {
        reset(-1);
        MPI_Request r;
        MPI_Irecv(&m[0], 1, small, peer, 12345, MPI_COMM_WORLD, &r); /* never sent */
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled && r == MPI_REQUEST_NULL, "receive not cancelled");
        CHECK(m[0] == -1.0 && m[LD] == -1.0, "cancelled receive wrote data");
    }

    /* 7. Intercommunicators go to Open MPI (the statistics count them) and still work. */
    {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 13, &inter);
        reset(rank == 0 ? 0 : -1);
        if (rank == 0)
            MPI_Send(&m[1], 1, small, 0, 14, inter);
        else {
            MPI_Recv(&m[0], 1, small, 0, 14, inter, MPI_STATUS_IGNORE);
            check_col(0, 0, 1, SMALL, "intercommunicator");
        }
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* 8. Errors are returned the same way: a rank outside the communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(&m[0], 1, small, 5, 11, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad rank gives class %d", cls);
    MPI_Request r;
    rc = MPI_Irecv(&m[0], 1, small, 0, -5, MPI_COMM_WORLD, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "bad tag gives class %d", cls);

    MPI_Type_free(&column);
    MPI_Type_free(&small);
    free(m);
    if (rank == 0)
        printf("send_modes: all modes and corner cases correct\n");
    MPI_Finalize();
    return 0;
}
