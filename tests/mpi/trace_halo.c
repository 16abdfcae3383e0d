/* A 2-rank halo exchange traced (KUPL_TRACE=halo-%r.json) for tests/trace/check_trace.py mpi_halo:
 * each rank owns a ROWS x COLS block of doubles and swaps its edge columns (an MPI_Type_vector,
 * which the interposer packs with KUPL) with its neighbour ITER times, by MPI_Sendrecv and by
 * MPI_Isend/MPI_Irecv/MPI_Waitall, plus an MPI_Allreduce of a checksum and an MPI_Barrier.
 * Every halo value is checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS = 256, COLS = 66, ITER = 3 };

static double value(int rank, int it, int row) {
    return rank * 1e6 + it * 1e3 + row;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "trace_halo: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int peer = 1 - rank;
    double *grid = calloc(ROWS * COLS, sizeof(double));
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    int ok = 1;
    for (int it = 0; it < ITER; ++it) {
        for (int r = 0; r < ROWS; ++r)
            grid[r * COLS + COLS - 2] = grid[r * COLS + 1] = value(rank, it, r);
        /* the edge column 1 goes out, the peer's arrives in the halo column 0 */
        MPI_Sendrecv(&grid[1], 1, column, peer, 10, &grid[0], 1, column, peer, 10, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Request requests[2];
        MPI_Irecv(&grid[COLS - 1], 1, column, peer, 20, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(&grid[COLS - 2], 1, column, peer, 20, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        for (int r = 0; r < ROWS; ++r)
            ok &= grid[r * COLS] == value(peer, it, r) && grid[r * COLS + COLS - 1] == value(peer, it, r);
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&column);
    free(grid);
    if (rank == 0)
        printf("trace_halo: %s\n", all_ok ? "ok" : "HALO MISMATCH");
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
