/*
 * kupl_mpi_set_enabled(): the switch a benchmark flips between operations to
 * compare Open MPI and the interposer in one process. Requests started with the
 * interposer on must complete right when they are waited for with it off (and
 * the other way round), persistent requests created while on must keep
 * working when started while off, and the switch must report its previous
 * state. Without the interposer the symbol is absent and the same exchanges run
 * on Open MPI alone.
 */
#include "mpi_check.h"

#include <dlfcn.h>
#include <stdlib.h>

enum { ROWS = 600, LD = 5, ROUNDS = 40 }; /* 4.8 KB columns */

typedef int (*set_enabled_fn)(int);
static set_enabled_fn set_enabled;

static int flip(int on) {
    return set_enabled ? set_enabled(on) : -1;
}

static void fill(double *m, int owner) {
    for (int i = 0; i < ROWS * LD; ++i)
        m[i] = owner < 0 ? -1.0 : cell_value(owner, i / LD, i % LD);
}

static void check_col(const double *m, int col, int owner, int from_col, int round) {
    for (int i = 0; i < ROWS; ++i) {
        CHECK(m[i * LD + col] == cell_value(owner, i, from_col), "round %d row %d = %.1f", round, i,
              m[i * LD + col]);
        for (int j = 0; j < LD; ++j)
            if (j != col)
                CHECK(m[i * LD + j] == -1.0, "round %d: byte outside the column written (%d,%d)", round, i,
                      j);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    set_enabled = (set_enabled_fn)dlsym(RTLD_DEFAULT, "kupl_mpi_set_enabled");
    const char *preload = getenv("LD_PRELOAD");
    CHECK((set_enabled != NULL) == (preload != NULL && *preload),
          "kupl_mpi_set_enabled %s with LD_PRELOAD=%s", set_enabled ? "found" : "missing",
          preload ? preload : "");
    if (set_enabled) {
        CHECK(set_enabled(1) == 1, "on at start");
        CHECK(set_enabled(0) == 1, "previous state on");
        CHECK(set_enabled(0) == 0, "previous state off");
        CHECK(set_enabled(7) == 0, "previous state off");
        CHECK(set_enabled(1) == 1, "any nonzero switches on");
    }
    double *m = malloc(sizeof(double) * ROWS * LD);
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    for (int round = 0; round < ROUNDS; ++round) {
        /* Post in one state, complete in the other; the roles swap every round. */
        const int post_on = round % 2, sender = (round / 2) % 2;
        flip(post_on);
        MPI_Request r;
        if (rank == sender) {
            fill(m, rank);
            MPI_Isend(&m[round % LD], 1, column, 1 - rank, round, MPI_COMM_WORLD, &r);
        } else {
            fill(m, -1);
            MPI_Irecv(&m[(round + 1) % LD], 1, column, 1 - rank, round, MPI_COMM_WORLD, &r);
        }
        flip(!post_on);
        if (round % 4 < 2) {
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            int done = 0;
            while (!done)
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        }
        if (rank != sender)
            check_col(m, (round + 1) % LD, 1 - rank, round % LD, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Persistent requests made while on, started while off and while on. */
    flip(1);
    MPI_Request pr;
    if (rank == 0)
        MPI_Send_init(&m[1], 1, column, 1, 99, MPI_COMM_WORLD, &pr);
    else
        MPI_Recv_init(&m[3], 1, column, 0, 99, MPI_COMM_WORLD, &pr);
    for (int round = 0; round < 6; ++round) {
        flip(round % 2);
        fill(m, rank == 0 ? 0 : -1);
        MPI_Start(&pr);
        flip(!(round % 2));
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        if (rank == 1)
            check_col(m, 3, 0, 1, 100 + round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&pr);
    flip(1);
    MPI_Type_free(&column);
    free(m);
    MPI_Finalize();
    return 0;
}
