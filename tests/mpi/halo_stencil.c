/*
 * 2D stencil halo exchange on a 2x2 process grid (4 ranks): row halos are
 * contiguous, column halos a vector (then a C-order subarray, then a resized
 * column sent with a count); every halo cell is checked against the owner's value.
 */
#include "mpi_check.h"

#include <stdlib.h>
#include <string.h>

enum { NX = 96, NY = 130, LD = NY + 2 }; /* interior NX x NY, one halo layer */

static int dims[2], coords[2];
static MPI_Comm grid;

static double *at(double *a, int i, int j) {
    return &a[(size_t)i * LD + j];
}

static int global_row(int i) {
    return coords[0] * NX + (i - 1);
}
static int global_col(int j) {
    return coords[1] * NY + (j - 1);
}

static void fill(double *a) {
    for (int i = 0; i < NX + 2; ++i)
        for (int j = 0; j < LD; ++j)
            *at(a, i, j) =
                (i >= 1 && i <= NX && j >= 1 && j <= NY) ? cell_value(0, global_row(i), global_col(j)) : -1.0;
}

/* Halo cell (i, j) must hold the global value of the cell it mirrors, or -1 at the domain edge. */
static void check_halos(double *a, const char *what) {
    int gx = dims[0] * NX, gy = dims[1] * NY;
    for (int i = 0; i < NX + 2; ++i)
        for (int j = 0; j < LD; ++j) {
            int interior = i >= 1 && i <= NX && j >= 1 && j <= NY;
            int corner = (i == 0 || i == NX + 1) && (j == 0 || j == NY + 1);
            if (interior || corner)
                continue;
            int r = global_row(i), c = global_col(j);
            double want = (r >= 0 && r < gx && c >= 0 && c < gy) ? cell_value(0, r, c) : -1.0;
            CHECK(*at(a, i, j) == want, "%s: halo (%d,%d) = %.1f, want %.1f", what, i, j, *at(a, i, j), want);
        }
}

/* One exchange: up/down rows contiguous, left/right columns with coltype (count colcount). */
static void exchange(double *a, MPI_Datatype coltype, int colcount, int use_sendrecv) {
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);
    if (use_sendrecv) {
        MPI_Sendrecv(at(a, 1, 1), NY, MPI_DOUBLE, up, 0, at(a, NX + 1, 1), NY, MPI_DOUBLE, down, 0, grid,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(at(a, NX, 1), NY, MPI_DOUBLE, down, 1, at(a, 0, 1), NY, MPI_DOUBLE, up, 1, grid,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(at(a, 1, 1), colcount, coltype, left, 2, at(a, 1, NY + 1), colcount, coltype, right, 2,
                     grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(at(a, 1, NY), colcount, coltype, right, 3, at(a, 1, 0), colcount, coltype, left, 3, grid,
                     MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request req[8];
    MPI_Irecv(at(a, 0, 1), NY, MPI_DOUBLE, up, 1, grid, &req[0]);
    MPI_Irecv(at(a, NX + 1, 1), NY, MPI_DOUBLE, down, 0, grid, &req[1]);
    MPI_Irecv(at(a, 1, 0), colcount, coltype, left, 3, grid, &req[2]);
    MPI_Irecv(at(a, 1, NY + 1), colcount, coltype, right, 2, grid, &req[3]);
    MPI_Isend(at(a, 1, 1), NY, MPI_DOUBLE, up, 0, grid, &req[4]);
    MPI_Isend(at(a, NX, 1), NY, MPI_DOUBLE, down, 1, grid, &req[5]);
    MPI_Isend(at(a, 1, 1), colcount, coltype, left, 2, grid, &req[6]);
    MPI_Isend(at(a, 1, NY), colcount, coltype, right, 3, grid, &req[7]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "run with 4 ranks, not %d", size);
    int periods[2] = {0, 0};
    dims[0] = dims[1] = 2;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    int rank;
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);

    double *a = malloc(sizeof(double) * (NX + 2) * LD);

    MPI_Datatype vector_col, subarray_col, one, resized_col;
    MPI_Type_vector(NX, 1, LD, MPI_DOUBLE, &vector_col);
    MPI_Type_commit(&vector_col);
    int sizes[2] = {NX, LD}, subsizes[2] = {NX, 1}, starts[2] = {0, 0};
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &subarray_col);
    MPI_Type_commit(&subarray_col);
    MPI_Type_create_resized(MPI_DOUBLE, 0, LD * sizeof(double), &one);
    MPI_Type_commit(&one);
    resized_col = one; /* a column as NX elements of one double, each LD doubles apart */

    const char *names[4] = {"vector/isend", "vector/sendrecv", "subarray/isend", "resized-count/isend"};
    MPI_Datatype types[4] = {vector_col, vector_col, subarray_col, resized_col};
    int counts[4] = {1, 1, 1, NX};
    for (int round = 0; round < 4; ++round) {
        for (int rep = 0; rep < 3; ++rep) {
            fill(a);
            exchange(a, types[round], counts[round], round == 1);
            check_halos(a, names[round]);
        }
    }
    MPI_Type_free(&vector_col);
    MPI_Type_free(&subarray_col);
    MPI_Type_free(&resized_col);
    free(a);
    MPI_Comm_free(&grid);
    if (rank == 0)
        printf("halo_stencil: all halos correct\n");
    MPI_Finalize();
    return 0;
}
