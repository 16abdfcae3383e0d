/*
 * Thousands of outstanding column receives and sends, completed with every
 * completion call (Waitany, Testsome, Waitsome, Testany, Testall, Waitall,
 * Test, Wait); persistent requests restarted with new data; MPI_Request_get_status
 * delivering data before the final Wait; MPI_Request_free on an active send and
 * on an active receive whose completion a later message proves.
 */
#include "mpi_check.h"

#include <stdlib.h>

enum { N = 2400, ROWS = 16, LD = N + 3 };

static double *m;

static void check_col(int j, int owner, int gen) {
    for (int i = 0; i < ROWS; ++i)
        CHECK(m[i * LD + j] == cell_value(owner, i, j) + gen, "column %d row %d gen %d: %.1f", j, i, gen,
              m[i * LD + j]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    m = malloc(sizeof(double) * ROWS * LD);
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Request *req = malloc(sizeof(MPI_Request) * N);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * N);
    int *idx = malloc(sizeof(int) * N);

    /* 1. N outstanding messages, one column each, tag = column. */
    if (rank == 0) {
        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = cell_value(0, i / LD, i % LD);
        for (int j = 0; j < N; ++j)
            MPI_Isend(&m[j], 1, column, 1, j, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(N, req, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < ROWS * LD; ++i)
            m[i] = -1.0;
        for (int j = N - 1; j >= 0; --j) /* posted in reverse: matching is by tag */
            MPI_Irecv(&m[j], 1, column, 0, j, MPI_COMM_WORLD, &req[j]);
        const int q = N / 6;
        int done = 0;
        while (done < q) { /* Waitany over the first sixth */
            int k;
            MPI_Status st;
            MPI_Waitany(q, req, &k, &st);
            CHECK(k != MPI_UNDEFINED && st.MPI_TAG == k && req[k] == MPI_REQUEST_NULL, "waitany %d tag %d", k,
                  st.MPI_TAG);
            check_col(k, 0, 0);
            ++done;
        }
        for (done = 0; done < q;) { /* Testsome over the second */
            int out;
            MPI_Testsome(q, req + q, &out, idx, sts);
            for (int s = 0; s < out; ++s) {
                CHECK(sts[s].MPI_TAG == q + idx[s], "testsome tag %d", sts[s].MPI_TAG);
                check_col(q + idx[s], 0, 0);
            }
            done += out;
        }
        for (done = 0; done < q;) { /* Waitsome over the third, statuses ignored */
            int out;
            MPI_Waitsome(q, req + 2 * q, &out, idx, MPI_STATUSES_IGNORE);
            for (int s = 0; s < out; ++s)
                check_col(2 * q + idx[s], 0, 0);
            done += out;
        }
        for (done = 0; done < q;) { /* Testany over the fourth */
            int k, flag;
            MPI_Testany(q, req + 3 * q, &k, &flag, MPI_STATUS_IGNORE);
            if (flag && k != MPI_UNDEFINED) {
                check_col(3 * q + k, 0, 0);
                ++done;
            }
        }
        for (int flag = 0; !flag;) /* Testall over the fifth */
            MPI_Testall(q, req + 4 * q, &flag, sts);
        for (int j = 4 * q; j < 5 * q; ++j)
            check_col(j, 0, 0);
        for (int j = 5 * q; j < N - 2; ++j) /* Test and Wait one by one, then Waitall for the rest */
            for (int flag = 0; !flag;)
                MPI_Test(&req[j], &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&req[N - 2], MPI_STATUS_IGNORE);
        MPI_Waitall(N, req, MPI_STATUSES_IGNORE); /* all null but the last */
        for (int j = 0; j < N; ++j) {
            CHECK(req[j] == MPI_REQUEST_NULL, "request %d not freed", j);
            check_col(j, 0, 0);
        }
    }

    /* 2. Persistent requests: 8 columns restarted 5 times with new values each time. */
    enum { P = 8, GENS = 5 };
    for (int j = 0; j < P; ++j) {
        if (rank == 0)
            MPI_Send_init(&m[j], 1, column, 1, j, MPI_COMM_WORLD, &req[j]);
        else
            MPI_Recv_init(&m[j], 1, column, 0, j, MPI_COMM_WORLD, &req[j]);
    }
    for (int gen = 1; gen <= GENS; ++gen) {
        if (rank == 0)
            for (int i = 0; i < ROWS; ++i)
                for (int j = 0; j < P; ++j)
                    m[i * LD + j] = cell_value(0, i, j) + gen;
        if (gen % 2)
            MPI_Startall(P, req);
        else
            for (int j = 0; j < P; ++j)
                MPI_Start(&req[j]);
        MPI_Waitall(P, req, sts);
        if (rank == 1)
            for (int j = 0; j < P; ++j)
                check_col(j, 0, gen);
        for (int j = 0; j < P; ++j)
            CHECK(req[j] != MPI_REQUEST_NULL, "persistent request %d lost", j);
    }
    for (int j = 0; j < P; ++j)
        MPI_Request_free(&req[j]);

    /* 3. Request_get_status delivers the data; Request_free lets an active send finish. */
    if (rank == 0) {
        for (int i = 0; i < ROWS; ++i)
            m[i * LD + 40] = cell_value(0, i, 40) + 9;
        MPI_Isend(&m[40], 1, column, 1, 99, MPI_COMM_WORLD, &req[0]);
        MPI_Request_free(&req[0]);
        CHECK(req[0] == MPI_REQUEST_NULL, "freed request not null");
        MPI_Recv(NULL, 0, MPI_INT, 1, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* peer has the data */
    } else {
        MPI_Irecv(&m[41], 1, column, 0, 99, MPI_COMM_WORLD, &req[0]);
        int flag = 0;
        MPI_Status st;
        while (!flag)
            MPI_Request_get_status(req[0], &flag, &st);
        CHECK(st.MPI_TAG == 99, "get_status tag %d", st.MPI_TAG);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + 41] == cell_value(0, i, 40) + 9, "get_status data row %d", i);
        MPI_Wait(&req[0], &st);
        CHECK(st.MPI_TAG == 99 && req[0] == MPI_REQUEST_NULL, "wait after get_status");
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + 41] == cell_value(0, i, 40) + 9, "data after wait row %d", i);
        MPI_Send(NULL, 0, MPI_INT, 0, 100, MPI_COMM_WORLD);
    }

    /* 4. A receive freed while active, then a later message on the same envelope: non-overtaking
     * says the first has arrived once the second is received, so its buffer must be filled. */
    if (rank == 0) {
        double tail[ROWS];
        for (int i = 0; i < ROWS; ++i) {
            m[i * LD + 50] = cell_value(0, i, 50) + 7;
            tail[i] = -2.0;
        }
        MPI_Send(&m[50], 1, column, 1, 200, MPI_COMM_WORLD);
        MPI_Send(tail, ROWS, MPI_DOUBLE, 1, 200, MPI_COMM_WORLD);
    } else {
        double tail[ROWS];
        for (int i = 0; i < ROWS; ++i)
            m[i * LD + 51] = -1.0;
        MPI_Irecv(&m[51], 1, column, 0, 200, MPI_COMM_WORLD, &req[0]);
        MPI_Request_free(&req[0]);
        MPI_Recv(tail, ROWS, MPI_DOUBLE, 0, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + 51] == cell_value(0, i, 50) + 7, "freed receive: row %d = %.1f", i,
                  m[i * LD + 51]);
    }

    MPI_Type_free(&column);
    free(m);
    free(req);
    free(sts);
    free(idx);
    if (rank == 1)
        printf("many_requests: %d outstanding columns and persistent rounds correct\n", N);
    MPI_Finalize();
    return 0;
}
