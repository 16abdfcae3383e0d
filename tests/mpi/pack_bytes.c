/*
 * MPI_Pack/MPI_Unpack must produce Open MPI's own bytes: every layout is packed
 * through MPI_Pack (the interposer, when preloaded) and through PMPI_Pack (Open
 * MPI itself) and the outputs compared byte for byte; unpacking into buffers
 * full of a sentinel must also leave every byte outside the typemap alone.
 * Includes types the interposer refuses (holes, empty), block lists (negative strides, indexed)
 * and buffers that are too small.
 */
#include "mpi_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA = 1 << 20 };

static unsigned char *src_arena, *dst_mine, *dst_ompi, *packed_mine, *packed_ompi;

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

/* Packs count elements at base (offset bytes into the arena) both ways, twice at a nonzero position. */
static void compare(const char *name, MPI_Datatype type, int count, size_t offset, int use_bottom) {
    const void *base = use_bottom ? MPI_BOTTOM : (const void *)(src_arena + offset);
    int size = 0;
    MPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
    CHECK(size + 64 < ARENA, "%s: too large", name);
    memset(packed_mine, 0xAB, (size_t)size + 64);
    memset(packed_ompi, 0xAB, (size_t)size + 64);
    int pos_mine = 7, pos_ompi = 7;
    CHECK(MPI_Pack(base, count, type, packed_mine, size + 64, &pos_mine, MPI_COMM_WORLD) == MPI_SUCCESS, "%s",
          name);
    CHECK(PMPI_Pack(base, count, type, packed_ompi, size + 64, &pos_ompi, MPI_COMM_WORLD) == MPI_SUCCESS,
          "%s", name);
    CHECK(pos_mine == pos_ompi, "%s: position %d vs Open MPI %d", name, pos_mine, pos_ompi);
    for (int i = 0; i < size + 64; ++i)
        CHECK(packed_mine[i] == packed_ompi[i], "%s: packed byte %d differs (%u vs %u)", name, i,
              packed_mine[i], packed_ompi[i]);

    /* Unpack the same bytes into two sentinel-filled copies of the arena. */
    memset(dst_mine, 0x5C, ARENA);
    memset(dst_ompi, 0x5C, ARENA);
    void *out_mine = dst_mine + offset, *out_ompi = dst_ompi + offset;
    pos_mine = pos_ompi = 7;
    if (use_bottom) {
        /* Absolute addresses point into the source arena: unpack there each way, snapshotting in between. */
        unsigned char *saved = malloc(ARENA);
        memcpy(saved, src_arena, ARENA);
        memset(src_arena, 0x5C, ARENA);
        CHECK(MPI_Unpack(packed_mine, size + 64, &pos_mine, MPI_BOTTOM, count, type, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "%s", name);
        memcpy(dst_mine, src_arena, ARENA);
        memset(src_arena, 0x5C, ARENA);
        CHECK(PMPI_Unpack(packed_ompi, size + 64, &pos_ompi, MPI_BOTTOM, count, type, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "%s", name);
        memcpy(dst_ompi, src_arena, ARENA);
        memcpy(src_arena, saved, ARENA);
        free(saved);
        CHECK(memcmp(dst_mine + 4096, packed_mine + 7, 16) == 0,
              "%s: first block not unpacked at its address", name);
    } else {
        CHECK(MPI_Unpack(packed_mine, size + 64, &pos_mine, out_mine, count, type, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "%s", name);
        CHECK(PMPI_Unpack(packed_ompi, size + 64, &pos_ompi, out_ompi, count, type, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "%s", name);
    }
    CHECK(pos_mine == pos_ompi, "%s: unpack position %d vs %d", name, pos_mine, pos_ompi);
    CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "%s: unpacked memory differs from Open MPI's", name);

    /* A buffer one byte short: both must fail the same way and leave position alone. */
    if (size > 0) {
        pos_mine = pos_ompi = 3;
        int rc_mine = MPI_Pack(base, count, type, packed_mine, size + 2, &pos_mine, MPI_COMM_WORLD);
        int rc_ompi = PMPI_Pack(base, count, type, packed_ompi, size + 2, &pos_ompi, MPI_COMM_WORLD);
        CHECK(rc_mine == rc_ompi && rc_mine != MPI_SUCCESS, "%s: short pack rc %d vs %d", name, rc_mine,
              rc_ompi);
        CHECK(pos_mine == pos_ompi, "%s: short pack position %d vs %d", name, pos_mine, pos_ompi);
    }
}

static MPI_Datatype commit(MPI_Datatype t) {
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    src_arena = malloc(ARENA);
    dst_mine = malloc(ARENA);
    dst_ompi = malloc(ARENA);
    packed_mine = malloc(ARENA);
    packed_ompi = malloc(ARENA);
    fill_pattern(src_arena, ARENA, 17);

    MPI_Datatype t, inner;
    int sizes2[2] = {50, 70}, sub2[2] = {20, 13}, start2[2] = {5, 9};
    int sizes3[3] = {10, 12, 14}, sub3[3] = {4, 5, 6}, start3[3] = {1, 2, 3};

    MPI_Type_vector(64, 1, 100, MPI_DOUBLE, &t); /* a matrix column */
    t = commit(t);
    compare("vector column", t, 1, 0, 0);
    compare("vector column x3", t, 3, 8, 0);
    MPI_Type_free(&t);

    MPI_Type_vector(33, 3, 7, MPI_INT, &t);
    t = commit(t);
    compare("vector blocklen 3", t, 2, 4, 0);
    MPI_Type_free(&t);

    MPI_Type_create_hvector(20, 5, 1000, MPI_FLOAT, &t);
    t = commit(t);
    compare("hvector", t, 1, 12, 0);
    MPI_Type_free(&t);

    MPI_Type_create_subarray(2, sizes2, sub2, start2, MPI_ORDER_C, MPI_DOUBLE, &t);
    t = commit(t);
    compare("subarray C", t, 2, 0, 0);
    MPI_Type_free(&t);

    MPI_Type_create_subarray(2, sizes2, sub2, start2, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    t = commit(t);
    compare("subarray Fortran", t, 1, 16, 0);
    MPI_Type_free(&t);

    MPI_Type_create_subarray(3, sizes3, sub3, start3, MPI_ORDER_C, MPI_SHORT, &t);
    t = commit(t);
    compare("subarray 3D", t, 2, 2, 0);
    MPI_Type_free(&t);

    MPI_Type_create_resized(MPI_DOUBLE, 0, 80, &t);
    t = commit(t);
    compare("resized double, count 40", t, 40, 8, 0);
    MPI_Type_free(&t);

    MPI_Type_vector(10, 2, 5, MPI_INT, &inner);
    MPI_Type_contiguous(3, inner, &t);
    t = commit(t);
    compare("contiguous of vector", t, 2, 0, 0);
    MPI_Type_free(&t);
    MPI_Type_free(&inner);

    MPI_Type_vector(10, 1, 20, MPI_DOUBLE, &inner);
    MPI_Type_create_hvector(4, 1, 8000, inner, &t);
    t = commit(t);
    compare("hvector of vector (3D)", t, 1, 24, 0);
    MPI_Type_free(&t);
    MPI_Type_free(&inner);

    MPI_Type_vector(16, 8, 16, MPI_CHAR, &t);
    t = commit(t);
    compare("vector of chars", t, 5, 3, 0);
    MPI_Type_dup(t, &inner); /* a duplicate is committed without MPI_Type_commit */
    compare("dup of vector", inner, 5, 3, 0);
    MPI_Type_free(&inner);
    MPI_Type_free(&t);

    MPI_Type_vector(10, 2, 5, MPI_DOUBLE, &inner);
    {
        MPI_Aint addr;
        int one = 1;
        MPI_Get_address(src_arena + 4096, &addr);
        /* MPI_BOTTOM idiom: absolute address of the first block in a one-block struct */
        MPI_Type_create_struct(1, &one, &addr, &inner, &t);
        t = commit(t);
        compare("struct at MPI_BOTTOM", t, 1, 0, 1);
        MPI_Type_free(&t);
    }
    MPI_Type_free(&inner);

    /* Types the interposer must leave to Open MPI, with the same bytes. */
    {
        int bl[2] = {2, 3}, disp[2] = {0, 11};
        MPI_Type_indexed(2, bl, disp, MPI_DOUBLE, &t);
        t = commit(t);
        compare("indexed", t, 3, 0, 0);
        MPI_Type_free(&t);
    }
    MPI_Type_vector(12, 1, 3, MPI_DOUBLE_INT, &t);
    t = commit(t);
    compare("vector of DOUBLE_INT (holes)", t, 1, 0, 0);
    MPI_Type_free(&t);
    MPI_Type_vector(10, 1, -3, MPI_DOUBLE, &t);
    t = commit(t);
    compare("negative stride", t, 1, 8192, 0);
    MPI_Type_free(&t);
    MPI_Type_vector(10, 0, 3, MPI_DOUBLE, &t);
    t = commit(t);
    compare("zero blocklen", t, 1, 0, 0);
    MPI_Type_free(&t);

    free(src_arena);
    free(dst_mine);
    free(dst_ompi);
    free(packed_mine);
    free(packed_ompi);
    printf("pack_bytes: all layouts byte-identical to Open MPI\n");
    MPI_Finalize();
    return 0;
}
