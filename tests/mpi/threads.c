/*
 * MPI_THREAD_MULTIPLE: two threads per rank exchange columns with the peer at
 * the same time (own tags, own types committed and freed concurrently), with
 * Isend/Irecv/Waitall and blocking Sendrecv. Every element is checked.
 */
#include "mpi_check.h"

#include <pthread.h>
#include <stdlib.h>

enum { ROWS = 180, LD = 41, ITERS = 60 };

static int rank, peer;

static void *worker(void *arg) {
    const int t = (int)(size_t)arg;
    double *mine = malloc(sizeof(double) * ROWS * LD), *got = malloc(sizeof(double) * ROWS * LD);
    for (int it = 0; it < ITERS; ++it) {
        MPI_Datatype column; /* committed and freed per iteration: handles get reused */
        MPI_Type_vector(ROWS, 1 + t, LD, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        const int col = (it * 3 + t) % (LD - 2);
        for (int i = 0; i < ROWS * LD; ++i) {
            mine[i] = cell_value(rank, i / LD, i % LD) + it;
            got[i] = -1.0;
        }
        const int tag = t * 1000 + it;
        if (it % 2) {
            MPI_Request r[2];
            MPI_Irecv(&got[col], 1, column, peer, tag, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(&mine[col], 1, column, peer, tag, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else {
            MPI_Sendrecv(&mine[col], 1, column, peer, tag, &got[col], 1, column, peer, tag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < ROWS; ++i)
            for (int c = 0; c <= t; ++c)
                CHECK(got[i * LD + col + c] == cell_value(peer, i, col + c) + it, "thread %d iter %d row %d",
                      t, it, i);
        MPI_Type_free(&column);
    }
    free(mine);
    free(got);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    peer = 1 - rank;
    pthread_t th[2];
    for (int t = 0; t < 2; ++t)
        pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < 2; ++t)
        pthread_join(th[t], NULL);
    if (rank == 0)
        printf("threads: concurrent exchanges correct\n");
    MPI_Finalize();
    return 0;
}
