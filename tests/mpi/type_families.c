/*
 * The datatype families real codes use (issue 14), each checked three ways
 * against Open MPI itself:
 *  1. MPI_Pack/MPI_Unpack (the interposer when preloaded) against
 *     PMPI_Pack/PMPI_Unpack, byte for byte, packed and unpacked, at a nonzero
 *     position, including a buffer one byte short;
 *  2. point to point with the type on both sides (blocking, and Isend/Irecv):
 *     the receiver's whole arena must equal what Open MPI's own pack + unpack
 *     of the sender's data gives, every byte outside the typemap untouched;
 *  3. the same message received as plain bytes (single-leaf types): what went
 *     on the wire must be Open MPI's packed bytes;
 *  4. a short message (fewer bytes than the type holds, cut inside a block).
 * Families: indexed, hindexed, indexed_block, hindexed_block, struct of
 * predefined types with gaps (mixed leaves: packed only), struct of equal
 * vectors (WRF), struct at MPI_BOTTOM, nested in vector/hvector/subarray/
 * contiguous/resized/dup, transposes (a resized column sent with a count: the
 * 2D FFT), NAS LU/MG and MILC-like layouts, negative displacements,
 * non-monotonic and overlapping blocks (unpacking those must fall back).
 */
#include "mpi_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA = 1 << 20, MID = ARENA / 2 };

static unsigned char *src, *dst_mine, *dst_ompi, *packed_mine, *packed_ompi, *scratch;
static int rank;

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

/* What Open MPI itself does with count elements at offset: pack from src, unpack into a sentinel arena. */
static int reference(MPI_Datatype type, int count, size_t offset, unsigned char *out_arena,
                     int *packed_size) {
    int size = 0, pos = 0;
    PMPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
    CHECK(size < ARENA / 2, "type too large");
    CHECK(PMPI_Pack(src + offset, count, type, scratch, ARENA, &pos, MPI_COMM_WORLD) == MPI_SUCCESS,
          "ref pack");
    memset(out_arena, 0x5C, ARENA);
    int upos = 0;
    CHECK(PMPI_Unpack(scratch, pos, &upos, out_arena + offset, count, type, MPI_COMM_WORLD) == MPI_SUCCESS,
          "ref unpack");
    *packed_size = pos;
    return size;
}

/* 1. Pack/Unpack against Open MPI (rank 0). */
static void check_pack(const char *name, MPI_Datatype type, int count, size_t offset, int may_overlap) {
    int size = 0;
    MPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
    memset(packed_mine, 0xAB, (size_t)size + 64);
    memset(packed_ompi, 0xAB, (size_t)size + 64);
    int pm = 7, po = 7;
    CHECK(MPI_Pack(src + offset, count, type, packed_mine, size + 64, &pm, MPI_COMM_WORLD) == MPI_SUCCESS,
          "%s", name);
    CHECK(PMPI_Pack(src + offset, count, type, packed_ompi, size + 64, &po, MPI_COMM_WORLD) == MPI_SUCCESS,
          "%s", name);
    CHECK(pm == po, "%s: position %d vs Open MPI %d", name, pm, po);
    for (int i = 0; i < size + 64; ++i)
        CHECK(packed_mine[i] == packed_ompi[i], "%s: packed byte %d differs (%u vs %u)", name, i,
              packed_mine[i], packed_ompi[i]);
    memset(dst_mine, 0x5C, ARENA);
    memset(dst_ompi, 0x5C, ARENA);
    pm = po = 7;
    CHECK(MPI_Unpack(packed_mine, size + 64, &pm, dst_mine + offset, count, type, MPI_COMM_WORLD) ==
              MPI_SUCCESS,
          "%s", name);
    CHECK(PMPI_Unpack(packed_ompi, size + 64, &po, dst_ompi + offset, count, type, MPI_COMM_WORLD) ==
              MPI_SUCCESS,
          "%s", name);
    CHECK(pm == po, "%s: unpack position %d vs %d", name, pm, po);
    CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "%s: unpacked memory differs from Open MPI's", name);
    (void)may_overlap;
    if (size > 0) {
        pm = po = 3;
        int rm = MPI_Pack(src + offset, count, type, packed_mine, size + 2, &pm, MPI_COMM_WORLD);
        int ro = PMPI_Pack(src + offset, count, type, packed_ompi, size + 2, &po, MPI_COMM_WORLD);
        CHECK(rm == ro && rm != MPI_SUCCESS && pm == po, "%s: short pack rc %d vs %d", name, rm, ro);
    }
}

/* 2-4. Rank 0 sends, rank 1 receives and compares with Open MPI's own result. */
static void check_p2p(const char *name, MPI_Datatype type, int count, size_t offset, int single_leaf,
                      MPI_Datatype leaf) {
    int packed = 0;
    const int size = reference(type, count, offset, dst_ompi, &packed);
    if (rank == 0) {
        MPI_Send(src + offset, count, type, 1, 1, MPI_COMM_WORLD);
        MPI_Request r;
        MPI_Isend(src + offset, count, type, 1, 2, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (single_leaf) {
            MPI_Send(src + offset, count, type, 1, 3, MPI_COMM_WORLD);
            /* A short message: the leaves of the first 40 % of the packed bytes. */
            int leaf_size = 0;
            MPI_Type_size(leaf, &leaf_size);
            const int n = (size * 2 / 5) / leaf_size;
            MPI_Send(scratch, n, leaf, 1, 4, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        MPI_Status st;
        memset(dst_mine, 0x5C, ARENA);
        MPI_Recv(dst_mine + offset, count, type, 0, 1, MPI_COMM_WORLD, &st);
        CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "%s: blocking receive differs from Open MPI's", name);
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK(got == size, "%s: %d bytes received, %d expected", name, got, size);
        memset(dst_mine, 0x5C, ARENA);
        MPI_Request r;
        MPI_Irecv(dst_mine + offset, count, type, 0, 2, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "%s: Irecv differs from Open MPI's", name);
        if (single_leaf) {
            memset(packed_mine, 0xAB, (size_t)size);
            MPI_Recv(packed_mine, size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(memcmp(packed_mine, scratch, (size_t)size) == 0, "%s: wire bytes differ from PMPI_Pack's",
                  name);
            /* Short message: Open MPI's unpack of the same head, into sentinel. */
            int leaf_size = 0;
            MPI_Type_size(leaf, &leaf_size);
            const int n = (size * 2 / 5) / leaf_size;
            memset(dst_ompi, 0x5C, ARENA);
            /* Open MPI's own receive of the same head, through MPI_COMM_SELF. */
            CHECK(PMPI_Sendrecv(scratch, n, leaf, 0, 9, dst_ompi + offset, count, type, 0, 9, MPI_COMM_SELF,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "%s: reference short message", name);
            memset(dst_mine, 0x5C, ARENA);
            MPI_Recv(dst_mine + offset, count, type, 0, 4, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            CHECK(got == n * leaf_size, "%s: short message %d bytes", name, got);
            CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "%s: short message unpacked differently", name);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Datatype commit(MPI_Datatype t) {
    MPI_Type_commit(&t);
    return t;
}

/* Every check for one type; frees it. overlap: unpacking it is erroneous in MPI, so only packing is compared.
 */
static void family(const char *name, MPI_Datatype t, int count, size_t offset, MPI_Datatype leaf,
                   int overlap) {
    t = commit(t);
    if (rank == 0)
        check_pack(name, t, count, offset, overlap);
    if (!overlap)
        check_p2p(name, t, count, offset, leaf != MPI_DATATYPE_NULL, leaf);
    MPI_Type_free(&t);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* the short pack must return its error */
    src = malloc(ARENA);
    dst_mine = malloc(ARENA);
    dst_ompi = malloc(ARENA);
    packed_mine = malloc(ARENA);
    packed_ompi = malloc(ARENA);
    scratch = malloc(ARENA);
    fill_pattern(src, ARENA, 23);
    MPI_Datatype t, a, b, c;

    { /* indexed: irregular blocks of doubles, one of length 0 (SPECFEM3D-like) */
        int lens[8] = {3, 1, 0, 7, 2, 2, 40, 1}, disp[8] = {0, 5, 9, 11, 30, 34, 60, 200};
        MPI_Type_indexed(8, lens, disp, MPI_DOUBLE, &t);
        family("indexed", t, 3, 64, MPI_DOUBLE, 0);
    }
    { /* MPI_Sendrecv_replace with a block list: each rank's buffer differs; the typemap takes the peer's */
        int lens[6] = {3, 1, 7, 2, 40, 1}, disp[6] = {0, 5, 11, 30, 60, 200};
        MPI_Type_indexed(6, lens, disp, MPI_DOUBLE, &t);
        t = commit(t);
        unsigned char *peer_data = malloc(ARENA);
        for (size_t i = 0; i < ARENA; ++i) {
            dst_mine[i] = (unsigned char)(src[i] ^ (rank + 1));
            peer_data[i] = (unsigned char)(src[i] ^ (2 - rank));
        }
        memcpy(dst_ompi, dst_mine, ARENA);
        int pos = 0, upos = 0;
        PMPI_Pack(peer_data + 64, 3, t, scratch, ARENA, &pos, MPI_COMM_SELF);
        PMPI_Unpack(scratch, pos, &upos, dst_ompi + 64, 3, t, MPI_COMM_SELF);
        MPI_Sendrecv_replace(dst_mine + 64, 3, t, 1 - rank, 7, 1 - rank, 7, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "Sendrecv_replace with an indexed type differs");
        free(peer_data);
        MPI_Type_free(&t);
    }
    { /* indexed with a long regular stretch: run-length offsets */
        int lens[70], disp[70];
        for (int i = 0; i < 70; ++i) {
            lens[i] = 1;
            disp[i] = i < 60 ? 3 * i : 200 + i * i;
        }
        MPI_Type_indexed(70, lens, disp, MPI_FLOAT, &t);
        family("indexed run", t, 2, 8, MPI_FLOAT, 0);
    }
    { /* hindexed in bytes */
        int lens[5] = {2, 4, 1, 3, 16};
        MPI_Aint disp[5] = {0, 40, 100, 160, 1000};
        MPI_Type_create_hindexed(5, lens, disp, MPI_INT, &t);
        family("hindexed", t, 4, 0, MPI_INT, 0);
    }
    { /* indexed_block: LAMMPS-style atoms, 3 doubles each */
        int disp[64];
        for (int i = 0; i < 64; ++i)
            disp[i] = (i * 37) % 97 * 3 + (i % 2) * 300;
        MPI_Type_create_indexed_block(64, 3, disp, MPI_DOUBLE, &t);
        family("indexed_block (LAMMPS)", t, 1, 16, MPI_DOUBLE, 0);
    }
    { /* hindexed_block, width 1 element */
        MPI_Aint disp[100];
        for (int i = 0; i < 100; ++i)
            disp[i] = (MPI_Aint)((i * 53) % 101) * 16 + 8;
        MPI_Type_create_hindexed_block(100, 1, disp, MPI_DOUBLE, &t);
        family("hindexed_block", t, 2, 0, MPI_DOUBLE, 0);
    }
    { /* struct of predefined types with gaps: mixed leaves, packed but never staged */
        int lens[3] = {1, 2, 3};
        MPI_Aint disp[3] = {0, 8, 28};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(3, lens, disp, types, &a);
        MPI_Type_create_resized(a, 0, 40, &t);
        MPI_Type_free(&a);
        family("struct with gaps", t, 30, 4, MPI_DATATYPE_NULL, 0);
    }
    { /* struct of equal vectors in three arrays (WRF): merged into one 3D grid */
        MPI_Type_vector(40, 4, 64, MPI_FLOAT, &a);
        int lens[3] = {1, 1, 1};
        MPI_Aint disp[3] = {0, 20000, 40000};
        MPI_Datatype types[3] = {a, a, a};
        MPI_Type_create_struct(3, lens, disp, types, &t);
        MPI_Type_free(&a);
        family("struct of vectors (WRF)", t, 1, 0, MPI_FLOAT, 0);
    }
    { /* struct of unequal members: a vector, a subarray, an indexed type */
        MPI_Type_vector(30, 2, 10, MPI_DOUBLE, &a);
        int sizes[2] = {20, 30}, sub[2] = {5, 7}, start[2] = {3, 4};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &b);
        int lens[3] = {1, 5, 2}, d[3] = {0, 3, 20};
        MPI_Type_indexed(3, lens, d, MPI_DOUBLE, &c);
        int slens[3] = {1, 1, 2};
        MPI_Aint sdisp[3] = {0, 4000, 10000};
        MPI_Datatype types[3] = {a, b, c};
        MPI_Type_create_struct(3, slens, sdisp, types, &t);
        MPI_Type_free(&a);
        MPI_Type_free(&b);
        MPI_Type_free(&c);
        family("struct of vector+subarray+indexed", t, 2, 0, MPI_DOUBLE, 0);
    }
    { /* nested: vector of an indexed_block type (resized), hvector of that, dup */
        int d[3] = {0, 2, 7};
        MPI_Type_create_indexed_block(3, 2, d, MPI_FLOAT, &a);
        MPI_Type_create_resized(a, 0, 48, &b);
        MPI_Type_free(&a);
        MPI_Type_vector(5, 2, 3, b, &a);
        MPI_Type_free(&b);
        MPI_Type_create_hvector(3, 1, 2000, a, &b);
        MPI_Type_free(&a);
        MPI_Type_dup(b, &t);
        MPI_Type_free(&b);
        family("dup(hvector(vector(indexed_block)))", t, 2, 8, MPI_FLOAT, 0);
    }
    { /* subarray of a struct element (MILC-like: 18 of 24 floats of each site) */
        int lens[2] = {6, 12};
        MPI_Aint disp[2] = {0, 48};
        MPI_Datatype types[2] = {MPI_FLOAT, MPI_FLOAT};
        MPI_Type_create_struct(2, lens, disp, types, &a);
        MPI_Type_create_resized(a, 0, 96, &b);
        MPI_Type_free(&a);
        int sizes[3] = {8, 8, 8}, sub[3] = {8, 1, 8}, start[3] = {0, 3, 0};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, b, &t);
        MPI_Type_free(&b);
        family("subarray of struct (MILC)", t, 1, 0, MPI_FLOAT, 0);
    }
    { /* NAS LU: 5 doubles per point along a face */
        MPI_Type_vector(33, 5, 5 * 35, MPI_DOUBLE, &t);
        family("vector blocklen 5 (NAS LU)", t, 1, 40, MPI_DOUBLE, 0);
    }
    { /* NAS MG z-face: hvector of a vector, 34x34 of a 34^3 grid */
        MPI_Type_vector(34, 1, 34, MPI_DOUBLE, &a);
        MPI_Type_create_hvector(34, 1, 34 * 34 * 8, a, &t);
        MPI_Type_free(&a);
        family("MG face (hvector of vector)", t, 1, 0, MPI_DOUBLE, 0);
    }
    { /* 2D FFT transpose: a resized column sent with a count */
        MPI_Type_vector(64, 1, 256, MPI_DOUBLE, &a);
        MPI_Type_create_resized(a, 0, sizeof(double), &t);
        MPI_Type_free(&a);
        family("transpose (resized column x count)", t, 48, 16, MPI_DOUBLE, 0);
    }
    { /* transpose of complex pairs, 2 doubles per element */
        MPI_Type_vector(32, 2, 2 * 128, MPI_DOUBLE, &a);
        MPI_Type_create_resized(a, 0, 2 * sizeof(double), &t);
        MPI_Type_free(&a);
        family("transpose of pairs", t, 32, 0, MPI_DOUBLE, 0);
    }
    { /* contiguous of a struct with a gap: the struct repeated */
        int lens[2] = {2, 1};
        MPI_Aint disp[2] = {0, 24};
        MPI_Datatype types[2] = {MPI_LONG, MPI_LONG};
        MPI_Type_create_struct(2, lens, disp, types, &a);
        MPI_Type_contiguous(20, a, &t);
        MPI_Type_free(&a);
        family("contiguous of struct", t, 3, 0, MPI_LONG, 0);
    }
    { /* negative displacements, buffer in the middle of the arena */
        int lens[4] = {2, 3, 1, 4};
        MPI_Aint disp[4] = {-4000, -800, 0, 1600};
        MPI_Type_create_hindexed(4, lens, disp, MPI_DOUBLE, &t);
        family("negative displacements", t, 3, MID, MPI_DOUBLE, 0);
    }
    { /* non-monotonic blocks (decreasing displacements) */
        int lens[5] = {2, 2, 3, 1, 4}, disp[5] = {90, 60, 30, 10, 0};
        MPI_Type_indexed(5, lens, disp, MPI_DOUBLE, &t);
        family("non-monotonic indexed", t, 2, 0, MPI_DOUBLE, 0);
    }
    { /* negative vector stride */
        MPI_Type_vector(20, 2, -6, MPI_DOUBLE, &t);
        family("negative vector stride", t, 2, MID, MPI_DOUBLE, 0);
    }
    { /* overlapping blocks: packing is defined, unpacking into them must be left to Open MPI */
        int lens[3] = {4, 4, 2}, disp[3] = {0, 2, 1};
        MPI_Type_indexed(3, lens, disp, MPI_DOUBLE, &t);
        family("overlapping indexed", t, 20, 0, MPI_DOUBLE, 1);
        int lens2[3] = {4, 4, 2}, disp2[3] = {0, 2, 1};
        MPI_Type_indexed(3, lens2, disp2, MPI_DOUBLE, &t);
        t = commit(t);
        if (rank == 0) {
            int pos = 0;
            memset(dst_mine, 0x5C, ARENA);
            memset(dst_ompi, 0x5C, ARENA);
            PMPI_Pack(src, 1, t, scratch, ARENA, &pos, MPI_COMM_WORLD);
            int pm = 0, po = 0;
            MPI_Unpack(scratch, pos, &pm, dst_mine, 1, t, MPI_COMM_WORLD); /* must go to Open MPI */
            PMPI_Unpack(scratch, pos, &po, dst_ompi, 1, t, MPI_COMM_WORLD);
            CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "overlapping unpack differs");
        }
        MPI_Type_free(&t);
    }
    { /* zero stride (a block repeated): packing duplicates it */
        MPI_Type_vector(10, 3, 0, MPI_INT, &t);
        family("zero stride", t, 4, 0, MPI_INT, 1);
    }
    { /* struct at MPI_BOTTOM with absolute addresses of three arrays (each rank its own) */
        MPI_Type_vector(50, 3, 9, MPI_FLOAT, &a);
        unsigned char *mine = rank == 0 ? src : dst_mine;
        MPI_Aint disp[3];
        MPI_Get_address(mine + 1000, &disp[0]);
        MPI_Get_address(mine + 9000, &disp[1]);
        MPI_Get_address(mine + 30000, &disp[2]);
        int lens[3] = {1, 1, 1};
        MPI_Datatype types[3] = {a, a, a};
        MPI_Type_create_struct(3, lens, disp, types, &t);
        t = commit(t);
        /* The same layout relative to the arena, for Open MPI's reference. */
        MPI_Aint rel[3] = {1000, 9000, 30000};
        MPI_Type_create_struct(3, lens, rel, types, &b);
        b = commit(b);
        MPI_Type_free(&a);
        int packed = 0;
        reference(b, 1, 0, dst_ompi, &packed);
        if (rank == 0) {
            MPI_Send(MPI_BOTTOM, 1, t, 1, 5, MPI_COMM_WORLD);
        } else {
            memset(dst_mine, 0x5C, ARENA);
            MPI_Recv(MPI_BOTTOM, 1, t, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(memcmp(dst_mine, dst_ompi, ARENA) == 0, "struct at MPI_BOTTOM differs");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Type_free(&t);
        MPI_Type_free(&b);
    }
    if (rank == 1)
        printf("type_families: every family byte-identical to Open MPI\n");
    MPI_Finalize();
    return 0;
}
