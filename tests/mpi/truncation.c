/*
 * A message longer than the receive buffer: MPI_ERR_TRUNCATE returned (errors
 * return), the status counts the whole sent message (as Open MPI does), the head of the
 * message lands in the column and nothing past it — for MPI_Recv, for
 * MPI_Irecv + MPI_Wait and for MPI_Irecv + MPI_Waitall (MPI_ERR_IN_STATUS).
 */
#include "mpi_check.h"

#include <stdlib.h>

enum { ROWS = 120, LD = 17, SENT = 150 };

static void expect_head(const double *m, int col, int got_rows, const char *what) {
    for (int i = 0; i < ROWS; ++i) {
        double want = i < got_rows ? cell_value(1, 0, i) : -1.0;
        CHECK(m[i * LD + col] == want, "%s: row %d = %.1f, want %.1f", what, i, m[i * LD + col], want);
        CHECK(m[i * LD + col + 1] == -1.0, "%s: neighbour written at row %d", what, i);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    if (rank == 1) {
        double *v = malloc(sizeof(double) * SENT);
        for (int i = 0; i < SENT; ++i)
            v[i] = cell_value(1, 0, i);
        for (int k = 0; k < 3; ++k)
            MPI_Send(v, SENT, MPI_DOUBLE, 0, k, MPI_COMM_WORLD);
        free(v);
    } else {
        double *m = malloc(sizeof(double) * ROWS * LD);
        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = -1.0;
        MPI_Status st;
        int rc = MPI_Recv(&m[2], 1, column, 1, 0, MPI_COMM_WORLD, &st);
        int cls = -1, count = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "Recv returned class %d", cls);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == SENT, "Recv status counts %d doubles (Open MPI reports the sent length)", count);
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 0, "Recv status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        expect_head(m, 2, ROWS, "Recv");

        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = -1.0;
        MPI_Request req;
        CHECK(MPI_Irecv(&m[5], 1, column, 1, 1, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "Irecv");
        rc = MPI_Wait(&req, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "Wait returned class %d", cls);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == SENT, "Wait status counts %d doubles", count);
        expect_head(m, 5, ROWS, "Irecv+Wait");
        if (req != MPI_REQUEST_NULL)
            MPI_Request_free(&req); /* Open MPI keeps a failed request alive */

        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = -1.0;
        MPI_Request two[2];
        MPI_Status sts[2];
        MPI_Irecv(&m[9], 1, column, 1, 2, MPI_COMM_WORLD, &two[0]);
        MPI_Irecv(NULL, 0, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[1]);
        rc = MPI_Waitall(2, two, sts);
        CHECK(rc == MPI_ERR_IN_STATUS, "Waitall returned %d", rc);
        MPI_Error_class(sts[0].MPI_ERROR, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "Waitall status 0 class %d", cls);
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "Waitall status 1 error %d", sts[1].MPI_ERROR);
        expect_head(m, 9, ROWS, "Irecv+Waitall");
        for (int i = 0; i < 2; ++i)
            if (two[i] != MPI_REQUEST_NULL)
                MPI_Request_free(&two[i]);
        free(m);
    }
    MPI_Type_free(&column);
    if (rank == 0)
        printf("truncation: errors, counts and delivered data correct\n");
    MPI_Finalize();
    return 0;
}
