/*
 * Sender and receiver using different layouts of one type signature: a column
 * (vector) received as contiguous doubles and back into a column described
 * as a resized double with a count; a C-order subarray received as a
 * Fortran-order subarray of another shape; a vector received as a vector with
 * another stride. Every element is checked.
 */
#include "mpi_check.h"

#include <stdlib.h>

enum { ROWS = 300, LD = 257, COL = 5 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    const int peer = 1 - rank;

    double *m = malloc(sizeof(double) * ROWS * LD);
    double *flat = malloc(sizeof(double) * ROWS * LD);
    for (int i = 0; i < ROWS * LD; ++i)
        m[i] = cell_value(rank, i / LD, i % LD);

    MPI_Datatype column, resized, sub_c, sub_f, other_vector;
    MPI_Type_vector(ROWS, 1, LD, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Type_create_resized(MPI_DOUBLE, 0, LD * sizeof(double), &resized);
    MPI_Type_commit(&resized);

    /* 1. column -> contiguous, then contiguous -> column given as ROWS resized doubles. */
    if (rank == 0) {
        MPI_Send(&m[COL], 1, column, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(&m[COL + 1], ROWS, resized, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + COL + 1] == cell_value(1, 0, i) + 0.5, "returned column row %d", i);
        for (int i = 0; i < ROWS; ++i)
            CHECK(m[i * LD + COL + 2] == cell_value(0, i, COL + 2), "neighbour column touched at row %d", i);
    } else {
        MPI_Recv(flat, ROWS, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < ROWS; ++i)
            CHECK(flat[i] == cell_value(0, i, COL), "contiguous copy of column, element %d", i);
        for (int i = 0; i < ROWS; ++i)
            flat[i] = cell_value(1, 0, i) + 0.5;
        MPI_Send(flat, ROWS, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD);
    }

    /* 2. a 20x13 C-order subarray received as a 13x20 Fortran-order subarray of a 40x30 array. */
    int sizes_c[2] = {ROWS, LD}, sub_c_sizes[2] = {20, 13}, starts_c[2] = {7, 11};
    int sizes_f[2] = {40, 30}, sub_f_sizes[2] = {13, 20}, starts_f[2] = {2, 3};
    MPI_Type_create_subarray(2, sizes_c, sub_c_sizes, starts_c, MPI_ORDER_C, MPI_DOUBLE, &sub_c);
    MPI_Type_commit(&sub_c);
    MPI_Type_create_subarray(2, sizes_f, sub_f_sizes, starts_f, MPI_ORDER_FORTRAN, MPI_DOUBLE, &sub_f);
    MPI_Type_commit(&sub_f);
    if (rank == 0) {
        MPI_Send(m, 1, sub_c, peer, 3, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 40 * 30; ++i)
            flat[i] = -1.0;
        MPI_Recv(flat, 1, sub_f, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* k-th packed element = C element (7 + k / 13, 11 + k % 13) lands at Fortran (2 + k % 13, 3 + k /
         * 13). */
        for (int k = 0; k < 260; ++k) {
            int fi = 2 + k % 13, fj = 3 + k / 13;
            CHECK(flat[fj * 40 + fi] == cell_value(0, 7 + k / 13, 11 + k % 13), "subarray element %d", k);
        }
        int untouched = 0;
        for (int i = 0; i < 40 * 30; ++i)
            untouched += flat[i] == -1.0;
        CHECK(untouched == 40 * 30 - 260, "%d cells outside the subarray were written",
              40 * 30 - 260 - untouched);
    }

    /* 3. a column of blocks of 3 received with another stride and count split 2 x 150. */
    MPI_Datatype col3;
    MPI_Type_vector(ROWS, 3, LD, MPI_DOUBLE, &col3);
    MPI_Type_commit(&col3);
    MPI_Type_vector(150, 3, 11, MPI_DOUBLE, &other_vector);
    MPI_Type_commit(&other_vector);
    if (rank == 0) {
        MPI_Send(&m[COL + 20], 1, col3, peer, 4, MPI_COMM_WORLD); /* columns untouched by step 1 */
    } else {
        MPI_Aint lb, extent;
        MPI_Type_get_extent(other_vector, &lb, &extent);
        MPI_Status st;
        MPI_Recv(flat, 2, other_vector, peer, 4, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, other_vector, &count);
        CHECK(count == 2, "Get_count %d", count);
        MPI_Get_elements(&st, MPI_DOUBLE, &count);
        CHECK(count == ROWS * 3, "Get_elements %d", count);
        const size_t second = (size_t)extent / sizeof(double);
        for (int k = 0; k < ROWS * 3; ++k) {
            int e = k / 450, r = (k % 450) / 3, c = k % 3;
            CHECK(flat[e * second + r * 11 + c] == cell_value(0, k / 3, COL + 20 + k % 3), "element %d", k);
        }
    }

    MPI_Type_free(&column);
    MPI_Type_free(&resized);
    MPI_Type_free(&sub_c);
    MPI_Type_free(&sub_f);
    MPI_Type_free(&col3);
    MPI_Type_free(&other_vector);
    free(m);
    free(flat);
    if (rank == 0)
        printf("mixed_layouts: all elements correct\n");
    MPI_Finalize();
    return 0;
}
