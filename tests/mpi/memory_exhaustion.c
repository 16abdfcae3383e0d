/*
 * Out of memory: each rank caps its address space (RLIMIT_AS, what `ulimit -v`
 * sets) and fills it up to a little headroom, then keeps many strided requests
 * in flight, blocking Sendrecvs, Recvs and datatype create/free churn going.
 * Open MPI's own free lists were grown beforehand by running the same pattern
 * through PMPI_*, so Open MPI needs little new memory; the interposer's staging
 * buffers (2 MiB each) never fit, so it must hand every
 * message to Open MPI untouched (counted as no-memory) instead of crashing --
 * and leave Open MPI the same headroom as without the interposer, or Open MPI
 * itself would run short. Every element is checked, and
 * once the memory is given back the same exchanges are staged again.
 * (Taking the last byte too is no test: Open MPI itself then fails now and
 * then, with or without the interposer.)
 */
#include "mpi_check.h"

#include "../common/address_space_cap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    N_REQ = 24,        /* exchanges in flight at once */
    ROWS = 128 * 1024, /* doubles per message: 1 MiB packed, a 2 MiB staging buffer */
    LEN = 2 * ROWS,    /* a column of stride 2 */
    /*
     * Left free under the cap, for Open MPI. The ballast stops when no CHUNK fits anywhere, so the
     * largest free block is below HEADROOM + 2 * CHUNK: a staging buffer can never fit and take
     * Open MPI's share.
     */
    HEADROOM = 1 << 20,
    CHUNK = 256 << 10,   /* ballast granularity */
    MAX_CHUNKS = 1 << 16 /* 16 GiB of ballast at most */
};

static int rank, peer;
static double *out[N_REQ], *in[N_REQ];
static void *ballast_chunks[MAX_CHUNKS];
static ballast_t ballast = {CHUNK, MAX_CHUNKS, ballast_chunks, 0};

static double value(int who, int round, int r, int i) {
    return cell_value(who, round * N_REQ + r, i);
}

static void prepare(int round) {
    for (int r = 0; r < N_REQ; ++r)
        for (int i = 0; i < LEN; ++i) {
            out[r][i] = value(rank, round, r, i);
            in[r][i] = -1.0;
        }
}

static void check(int round, int r, const char *what) {
    for (int i = 0; i < LEN; ++i) {
        const double want = i % 2 == 0 ? value(peer, round, r, i) : -1.0;
        CHECK(in[r][i] == want, "%s round %d request %d element %d: %g, want %g", what, round, r, i, in[r][i],
              want);
    }
}

typedef int (*IrecvFn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*IsendFn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*WaitallFn)(int, MPI_Request *, MPI_Status *);

/* N_REQ exchanges in flight, each with its own freshly committed column type. */
static void exchange_all(int round, IrecvFn irecv, IsendFn isend, WaitallFn waitall) {
    MPI_Request req[2 * N_REQ];
    MPI_Status st[2 * N_REQ];
    prepare(round);
    for (int r = 0; r < N_REQ; ++r) {
        MPI_Datatype column;
        MPI_Type_vector(ROWS, 1, 2, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        irecv(in[r], 1, column, peer, r, MPI_COMM_WORLD, &req[2 * r]);
        isend(out[r], 1, column, peer, r, MPI_COMM_WORLD, &req[2 * r + 1]);
        MPI_Type_free(&column); /* legal with the requests pending */
    }
    waitall(2 * N_REQ, req, st);
    for (int r = 0; r < N_REQ; ++r) {
        int count = -1;
        MPI_Get_count(&st[2 * r], MPI_DOUBLE, &count);
        CHECK(count == ROWS && st[2 * r].MPI_SOURCE == peer && st[2 * r].MPI_TAG == r,
              "round %d request %d: count %d source %d tag %d", round, r, count, st[2 * r].MPI_SOURCE,
              st[2 * r].MPI_TAG);
        check(round, r, "in flight");
    }
}

/* Blocking calls: Sendrecv, and Send/Recv in an order that cannot deadlock. */
static void blocking(int round) {
    prepare(round);
    for (int r = 0; r < 4; ++r) {
        MPI_Datatype column;
        MPI_Type_vector(ROWS, 1, 2, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        if (r % 2 == 0) {
            MPI_Sendrecv(out[r], 1, column, peer, 100 + r, in[r], 1, column, peer, 100 + r, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Send(out[r], 1, column, peer, 100 + r, MPI_COMM_WORLD);
            MPI_Recv(in[r], 1, column, peer, 100 + r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in[r], 1, column, peer, 100 + r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out[r], 1, column, peer, 100 + r, MPI_COMM_WORLD);
        }
        MPI_Type_free(&column);
        check(round, r, "blocking");
    }
}

/* Caps the address space 64 MiB above its use and fills it with ballast, leaving about HEADROOM free. */
static void exhaust(void) {
    const char *why = cap_address_space(&ballast, 64u << 20, HEADROOM);
    CHECK(why == NULL, "%s (ballast of %d chunks)", why, ballast.count);
}

static void give_back(void) {
    const char *why = lift_address_space_cap(&ballast);
    CHECK(why == NULL, "%s", why);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    peer = 1 - rank;
    for (int r = 0; r < N_REQ; ++r) {
        out[r] = malloc(sizeof(double) * LEN);
        in[r] = malloc(sizeof(double) * LEN);
        CHECK(out[r] && in[r], "buffers");
    }
    /* Open MPI alone (PMPI_*) grows its free lists for this pattern while memory is plentiful. */
    for (int round = 0; round < 2; ++round)
        exchange_all(round, PMPI_Irecv, PMPI_Isend, PMPI_Waitall);
    MPI_Barrier(MPI_COMM_WORLD);

    exhaust();
    for (int round = 3; round < 7; ++round) {
        exchange_all(round, MPI_Irecv, MPI_Isend, MPI_Waitall);
        blocking(round);
    }
    give_back();
    MPI_Barrier(MPI_COMM_WORLD);

    /* Plenty of memory again: these are staged (the stats line shows send/recv > 0). */
    exchange_all(7, MPI_Irecv, MPI_Isend, MPI_Waitall);
    blocking(7);
    for (int r = 0; r < N_REQ; ++r) {
        free(out[r]);
        free(in[r]);
    }
    if (rank == 0)
        printf("memory_exhaustion: every exchange correct under the cap\n");
    MPI_Finalize();
    return 0;
}
