/* Shared helpers for the MPI tests: a failed check prints where and aborts the job. */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            int check_rank_ = -1;                                                                            \
            MPI_Comm_rank(MPI_COMM_WORLD, &check_rank_);                                                     \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", check_rank_, __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

/* A value no two (rank, i, j) share, exactly representable as a double. */
static inline double cell_value(int rank, int i, int j) {
    return rank * 1.0e7 + i * 4096.0 + j;
}

#endif
