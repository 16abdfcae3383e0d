/*
 * Datatype churn: every iteration creates fresh vector types, exchanges a
 * message with them and frees them, so the interposer's cache of wire types
 * (256 entries) is cycled several times over and freed type handles are reused.
 *
 *  A. MPI_Sendrecv with a different new type on each side (130+k doubles sent
 *     with stride 3, received into a stride-2 type of 2000+k): the send's wire
 *     type must survive the planning of the receive, also when the cache fills
 *     up right there.
 *  B. Isend/Irecv kept in flight four iterations deep while further types are
 *     created, committed and freed and blocking Sendrecvs cycle the wire-type
 *     cache; the user types of a pending request are freed right after posting.
 *  C. A freed vector's handle reused by an irregular indexed type of the same
 *     size and extent, which must not be taken for the vector.
 *  D. Both of A and B from two threads at once (MPI_THREAD_MULTIPLE).
 *
 * Every element of every receive buffer is checked, including the ones the
 * message must not touch.
 */
#include "mpi_check.h"

#include <pthread.h>
#include <stdlib.h>

enum {
    ITERS = 200, /* with part B and the threads: ~1,300 wire types per rank, the cache cycled 5 times */
    DEPTH = 4,
    THREAD_ITERS = 60,
    THREAD_K0 = 1000, /* thread t's types start at k = THREAD_K0 * (t + 1): no two parts share a layout */
    K_MAX = 2 * THREAD_K0 + 3 * THREAD_ITERS,
    SEND_LEN = 3 * (130 + K_MAX),
    RECV_LEN = 2 * (2000 + K_MAX)
};

static const double kUntouched = -1.0;
static int rank, peer;

static double sent_value(int who, int it, int i) {
    return cell_value(who, it % 1000, i) + (it / 1000) * 0.5;
}

static void fill_send(double *buf, int it) {
    for (int i = 0; i < SEND_LEN; ++i)
        buf[i] = sent_value(rank, it, i);
}

static void fill_recv(double *buf) {
    for (int i = 0; i < RECV_LEN; ++i)
        buf[i] = kUntouched;
}

/* n doubles of stride 3 from the peer landed at stride 2; nothing else changed. */
static void check_recv(const double *buf, int n, int it, const char *what) {
    for (int i = 0; i < RECV_LEN; ++i) {
        const double want = (i % 2 == 0 && i / 2 < n) ? sent_value(peer, it, 3 * (i / 2)) : kUntouched;
        CHECK(buf[i] == want, "%s iter %d element %d: %g, want %g", what, it, i, buf[i], want);
    }
}

static void check_status(const MPI_Status *st, int n, int tag, const char *what, int it) {
    int count = -1;
    MPI_Get_count(st, MPI_DOUBLE, &count);
    CHECK(count == n, "%s iter %d: count %d, want %d", what, it, count, n);
    CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == tag, "%s iter %d: source %d tag %d", what, it,
          st->MPI_SOURCE, st->MPI_TAG);
}

static void make_types(int send_n, int recv_n, MPI_Datatype *send_type, MPI_Datatype *recv_type) {
    MPI_Type_vector(send_n, 1, 3, MPI_DOUBLE, send_type);
    MPI_Type_commit(send_type);
    MPI_Type_vector(recv_n, 1, 2, MPI_DOUBLE, recv_type);
    MPI_Type_commit(recv_type);
}

/*
 * One blocking exchange with brand-new types: 130+k doubles out, up to 2000+k in.
 * The first call of each part receives with a type of 130+k, so both sides share
 * one wire type: from an empty cache, part A then fills the cache up exactly when
 * a receive is planned (call 128, and every 128 calls after), which is where the
 * old cache freed the send's wire type under it.
 */
static void sendrecv_once(int it, int k, int tag, double *out, double *in, const char *what) {
    MPI_Datatype s, r;
    make_types(130 + k, it == 0 ? 130 + k : 2000 + k, &s, &r);
    fill_send(out, it);
    fill_recv(in);
    MPI_Status st;
    MPI_Sendrecv(out, 1, s, peer, tag, in, 1, r, peer, tag, MPI_COMM_WORLD, &st);
    check_status(&st, 130 + k, tag, what, it);
    check_recv(in, 130 + k, it, what);
    MPI_Type_free(&s);
    MPI_Type_free(&r);
    CHECK(s == MPI_DATATYPE_NULL && r == MPI_DATATYPE_NULL, "%s: freed handles not reset", what);
}

static void part_a(int tag_base, int iters, int k0) {
    double *out = malloc(sizeof(double) * SEND_LEN), *in = malloc(sizeof(double) * RECV_LEN);
    for (int it = 0; it < iters; ++it)
        sendrecv_once(it, k0 + it, tag_base + it, out, in, "sendrecv");
    free(out);
    free(in);
}

static void part_b(int tag_base, int iters, int k0) {
    double *out[DEPTH], *in[DEPTH];
    for (int d = 0; d < DEPTH; ++d) {
        out[d] = malloc(sizeof(double) * SEND_LEN);
        in[d] = malloc(sizeof(double) * RECV_LEN);
    }
    double *scratch_out = malloc(sizeof(double) * SEND_LEN), *scratch_in = malloc(sizeof(double) * RECV_LEN);
    MPI_Request req[DEPTH][2];
    for (int it = 0; it < iters + DEPTH; ++it) {
        const int slot = it % DEPTH;
        if (it >= DEPTH) { /* finish the exchange posted DEPTH iterations ago */
            const int old = it - DEPTH, n = 130 + k0 + old;
            MPI_Status st[2];
            if (old % 3 == 0) {
                MPI_Waitall(2, req[slot], st);
            } else if (old % 3 == 1) {
                MPI_Wait(&req[slot][1], MPI_STATUS_IGNORE);
                MPI_Wait(&req[slot][0], &st[0]);
            } else {
                int done = 0;
                while (!done)
                    MPI_Testall(2, req[slot], &done, st);
            }
            check_status(&st[0], n, tag_base + old, "irecv", old);
            check_recv(in[slot], n, old, "irecv");
        }
        if (it >= iters)
            continue;
        MPI_Datatype s, r;
        make_types(130 + k0 + it, 2000 + k0 + it, &s, &r);
        fill_send(out[slot], it);
        fill_recv(in[slot]);
        MPI_Irecv(in[slot], 1, r, peer, tag_base + it, MPI_COMM_WORLD, &req[slot][0]);
        MPI_Isend(out[slot], 1, s, peer, tag_base + it, MPI_COMM_WORLD, &req[slot][1]);
        /* Freeing the types of pending requests is legal; their handles get reused below. */
        MPI_Type_free(&s);
        MPI_Type_free(&r);
        for (int c = 0; c < 3; ++c) {
            MPI_Datatype churn;
            MPI_Type_vector(64 + c, 2, 5 + c, MPI_INT, &churn);
            MPI_Type_commit(&churn);
            MPI_Type_free(&churn);
        }
        /* Two more wire types each: the cache turns over while requests are in flight. */
        sendrecv_once(it, k0 + iters + it, tag_base + 50000 + it, scratch_out, scratch_in,
                      "sendrecv-inflight");
    }
    for (int d = 0; d < DEPTH; ++d) {
        free(out[d]);
        free(in[d]);
    }
    free(scratch_out);
    free(scratch_in);
}

/*
 * A vector of n doubles at stride 3 and an indexed type with the same size,
 * lb and extent whose middle block sits elsewhere: whichever gets a reused
 * handle must be sent by its own typemap.
 */
static void part_c(int tag_base) {
    double *out = malloc(sizeof(double) * SEND_LEN), *in = malloc(sizeof(double) * SEND_LEN);
    enum { N = 300 };
    int displs[N], lens[N];
    for (int j = 0; j < N; ++j) {
        displs[j] = 3 * j;
        lens[j] = 1;
    }
    displs[N / 2] += 1; /* same size, lb and extent as the vector, not a grid */
    char *irregular_hit = calloc(SEND_LEN, 1), *vector_hit = calloc(SEND_LEN, 1);
    for (int j = 0; j < N; ++j) {
        irregular_hit[displs[j]] = 1;
        vector_hit[3 * j] = 1;
    }
    for (int it = 0; it < 100; ++it) {
        const int irregular = it % 2;
        MPI_Datatype t;
        if (irregular)
            MPI_Type_indexed(N, lens, displs, MPI_DOUBLE, &t);
        else
            MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        fill_send(out, it);
        for (int i = 0; i < SEND_LEN; ++i)
            in[i] = kUntouched;
        MPI_Status st;
        MPI_Sendrecv(out, 1, t, peer, tag_base + it, in, 1, t, peer, tag_base + it, MPI_COMM_WORLD, &st);
        check_status(&st, N, tag_base + it, "reused-handle", it);
        for (int i = 0; i < SEND_LEN; ++i) {
            const double want =
                (irregular ? irregular_hit : vector_hit)[i] ? sent_value(peer, it, i) : kUntouched;
            CHECK(in[i] == want, "reused-handle iter %d (%s) element %d: %g, want %g", it,
                  irregular ? "indexed" : "vector", i, in[i], want);
        }
        MPI_Type_free(&t);
    }
    free(irregular_hit);
    free(vector_hit);
    free(out);
    free(in);
}

static void *worker(void *arg) {
    const int t = (int)(size_t)arg;
    /* Distinct tags and type sizes per thread, so each thread's messages match its peer thread's. */
    part_a(1000000 * (t + 1), THREAD_ITERS, THREAD_K0 * (t + 1));
    part_b(1000000 * (t + 1) + 200000, THREAD_ITERS / 2, THREAD_K0 * (t + 1) + THREAD_ITERS);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    peer = 1 - rank;
    part_a(0, ITERS, 0);
    part_b(100000, ITERS / 2, ITERS);
    part_c(200000);
    pthread_t th[2];
    for (int t = 0; t < 2; ++t)
        pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < 2; ++t)
        pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("type_churn: every exchange correct\n");
    MPI_Finalize();
    return 0;
}
