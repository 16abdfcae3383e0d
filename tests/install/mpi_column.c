/* Two ranks exchange a column of a row-major matrix (an MPI vector type) and check every
 * element: the shape the MPI interposer accelerates by default (32 KiB: point-to-point grids are
 * staged from 16 KiB). Exit status 1 on a mismatch. */
#include <mpi.h>
#include <stdio.h>

enum { ROWS = 4096, COLS = 64, ITERATIONS = 8 };
static double matrix[ROWS][COLS];

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_column: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    int peer = 1 - rank, errors = 0;
    for (int it = 0; it < ITERATIONS; ++it) {
        for (int r = 0; r < ROWS; ++r)
            for (int c = 0; c < COLS; ++c)
                matrix[r][c] = rank * 1e6 + it * 1e4 + r * COLS + c;
        /* Send column 1, receive the peer's column 1 into column 0. */
        MPI_Sendrecv(&matrix[0][1], 1, column, peer, it, &matrix[0][0], 1, column, peer, it, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int r = 0; r < ROWS; ++r)
            if (matrix[r][0] != peer * 1e6 + it * 1e4 + r * COLS + 1)
                ++errors;
    }
    MPI_Type_free(&column);
    if (errors)
        fprintf(stderr, "mpi_column: rank %d: %d wrong elements\n", rank, errors);
    else
        printf("mpi_column: rank %d: %d columns of %d rows right\n", rank, ITERATIONS, ROWS);
    MPI_Finalize();
    return errors ? 1 : 0;
}
