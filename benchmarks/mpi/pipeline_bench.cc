// Would pipelining pay for large staged messages? (issue 14: "pack chunk k+1 while chunk k is in
// flight"). Between two ranks on this node, a ping-pong of one large strided message (rows of
// `width` bytes, `stride` apart) in three forms, interleaved round by round in one process:
//   plain     the derived type, sent and received by Open MPI itself (PMPI_*): its convertor
//             pipelines pack, transfer and unpack on its own;
//   staged    pack the whole message, send it contiguous, receive it contiguous, unpack it: what
//             the interposer does for the messages it takes;
//   pipelined the same in chunks: the sender packs chunk k and posts it (MPI_Isend, one message
//             per chunk) before packing chunk k+1; the receiver has every chunk's receive posted
//             and unpacks each as it lands (MPI_Waitany), so packing, transfer and unpacking
//             overlap.
// Pack and unpack are the same row loop (memcpy per row) in all forms. Staged bytes travel as the
// interposer sends them (mpi_hooks/src/wire_format.h): described as two blocks with a one-byte
// gap, so that Open MPI streams them through its shared-memory pipeline rather than its
// contiguous single-copy path (--contiguous=1 sends plain bytes instead). Prints the median time of
// each form and the paired ratios pipelined/staged and pipelined/plain (medians of per-round
// ratios); the run's noise: staged against a second staged pass (A/A).
//
// usage: mpirun -np 2 mpi_pipeline_bench [--rounds=N] [--width=B] [--chunk-kib=K] [--contiguous=1]
#include "bench_util.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using bench::median;
using bench::now;
using bench::option;

struct Grid {
    size_t width, stride, rows;
    size_t bytes() const { return width * rows; }
};

void pack_rows(const Grid &g, const char *src, size_t first, size_t count, char *out) {
    for (size_t r = first; r < first + count; ++r, out += g.width)
        std::memcpy(out, src + r * g.stride, g.width);
}
void unpack_rows(const Grid &g, const char *in, size_t first, size_t count, char *dst) {
    for (size_t r = first; r < first + count; ++r, in += g.width)
        std::memcpy(dst + r * g.stride, in, g.width);
}

enum Form { Plain, Staged, Pipelined, Staged2, kForms };

/** How staged bytes travel: n packed bytes as two blocks, the last byte one further on
 *  ([n-1 bytes][gap][1 byte]), or (contiguous) as n plain bytes. */
struct Wire {
    bool contiguous = false;
    std::vector<std::pair<size_t, MPI_Datatype>> types; // two-block type by n

    ~Wire() {
        for (auto &known : types)
            MPI_Type_free(&known.second);
    }
    MPI_Datatype type_of(size_t n) {
        for (const auto &known : types)
            if (known.first == n)
                return known.second;
        MPI_Datatype t;
        int lengths[2] = {static_cast<int>(n - 1), 1};
        int at[2] = {0, static_cast<int>(n)};
        MPI_Type_indexed(2, lengths, at, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        types.emplace_back(n, t);
        return t;
    }
    /** Staging bytes that n packed bytes take. */
    size_t room(size_t n) const { return contiguous ? n : n + 1; }
    void post_send(char *staged, size_t n, int peer, int tag, MPI_Request *r) {
        if (contiguous) {
            PMPI_Isend(staged, static_cast<int>(n), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
            return;
        }
        staged[n] = staged[n - 1];
        PMPI_Isend(staged, 1, type_of(n), peer, tag, MPI_COMM_WORLD, r);
    }
    void post_recv(char *staged, size_t n, int peer, int tag, MPI_Request *r) {
        if (contiguous)
            PMPI_Irecv(staged, static_cast<int>(n), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
        else
            PMPI_Irecv(staged, 1, type_of(n), peer, tag, MPI_COMM_WORLD, r);
    }
    /** After a receive of n bytes: the packed bytes contiguous again. */
    void landed(char *staged, size_t n) const {
        if (!contiguous)
            staged[n - 1] = staged[n];
    }
};

struct Peer {
    int rank, other;
    Grid g;
    MPI_Datatype type;
    size_t chunk_rows;
    std::vector<char> src, dst, staging;
    std::vector<MPI_Request> requests;
    Wire wire;

    size_t chunks() const { return (g.rows + chunk_rows - 1) / chunk_rows; }
    size_t rows_of(size_t k) const { return std::min(chunk_rows, g.rows - k * chunk_rows); }
    /** Where chunk k is staged: each chunk has room for its own gap byte. */
    char *chunk_at(size_t k) { return staging.data() + k * wire.room(chunk_rows * g.width); }

    void send(Form f) {
        if (f == Plain) {
            PMPI_Send(src.data(), 1, type, other, 0, MPI_COMM_WORLD);
        } else if (f == Staged || f == Staged2) {
            pack_rows(g, src.data(), 0, g.rows, staging.data());
            wire.post_send(staging.data(), g.bytes(), other, 0, &requests[0]);
            PMPI_Wait(&requests[0], MPI_STATUS_IGNORE);
        } else {
            for (size_t k = 0; k < chunks(); ++k) {
                pack_rows(g, src.data(), k * chunk_rows, rows_of(k), chunk_at(k));
                wire.post_send(chunk_at(k), rows_of(k) * g.width, other, 1, &requests[k]);
            }
            PMPI_Waitall(static_cast<int>(chunks()), requests.data(), MPI_STATUSES_IGNORE);
        }
    }
    void recv(Form f) {
        if (f == Plain) {
            PMPI_Recv(dst.data(), 1, type, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (f == Staged || f == Staged2) {
            wire.post_recv(staging.data(), g.bytes(), other, 0, &requests[0]);
            PMPI_Wait(&requests[0], MPI_STATUS_IGNORE);
            wire.landed(staging.data(), g.bytes());
            unpack_rows(g, staging.data(), 0, g.rows, dst.data());
        } else {
            // Chunks of one sender on one tag match in order (MPI's non-overtaking rule).
            for (size_t k = 0; k < chunks(); ++k)
                wire.post_recv(chunk_at(k), rows_of(k) * g.width, other, 1, &requests[k]);
            for (size_t done = 0; done < chunks(); ++done) {
                int i = 0;
                PMPI_Waitany(static_cast<int>(chunks()), requests.data(), &i, MPI_STATUS_IGNORE);
                const size_t k = static_cast<size_t>(i);
                wire.landed(chunk_at(k), rows_of(k) * g.width);
                unpack_rows(g, chunk_at(k), k * chunk_rows, rows_of(k), dst.data());
            }
        }
    }
    /** One round trip: rank 0 sends and receives back, rank 1 the mirror. */
    void round_trip(Form f) {
        if (rank == 0) {
            send(f);
            recv(f);
        } else {
            recv(f);
            send(f);
        }
    }
};

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != 2) {
        if (rank == 0)
            std::fprintf(stderr, "usage: mpirun -np 2 mpi_pipeline_bench [--rounds=N] [--width=B] "
                                 "[--chunk-kib=K] [--contiguous=1]\n");
        MPI_Finalize();
        return 2;
    }
    const int rounds = static_cast<int>(option(argc, argv, "--rounds", 31));
    const size_t width = static_cast<size_t>(option(argc, argv, "--width", 64));
    const size_t chunk_bytes = static_cast<size_t>(option(argc, argv, "--chunk-kib", 64)) << 10;
    const bool contiguous = option(argc, argv, "--contiguous", 0) != 0;
    if (rank == 0) {
        std::printf(
            "pipeline_bench: ping-pong of a strided message, rows of %zu B every %zu B; chunks of %zu KiB; "
            "staged bytes sent %s; medians of %d rounds\n",
            width, 2 * width, chunk_bytes >> 10, contiguous ? "contiguous" : "as two blocks", rounds);
        std::printf("%10s %10s %10s %10s %10s  %-9s %-9s %-9s\n", "bytes", "plain_us", "staged_us", "pipe_us",
                    "staged2_us", "pipe/stg", "pipe/pln", "A/A");
    }
    int failures = 0;
    for (size_t bytes :
         {size_t(64) << 10, size_t(256) << 10, size_t(1) << 20, size_t(4) << 20, size_t(16) << 20}) {
        Peer p;
        p.rank = rank;
        p.other = 1 - rank;
        p.g = Grid{width, 2 * width, bytes / width};
        p.chunk_rows = std::max<size_t>(1, chunk_bytes / width);
        p.src.assign(p.g.rows * p.g.stride, 0);
        p.dst.assign(p.g.rows * p.g.stride, 0);
        p.wire.contiguous = contiguous;
        p.staging.assign(std::max(p.wire.room(p.g.bytes()), p.chunks() * p.wire.room(p.chunk_rows * width)),
                         0);
        p.requests.resize(p.chunks());
        MPI_Type_vector(static_cast<int>(p.g.rows), static_cast<int>(width), static_cast<int>(p.g.stride),
                        MPI_BYTE, &p.type);
        MPI_Type_commit(&p.type);
        for (size_t i = 0; i < p.src.size(); ++i)
            p.src[i] = static_cast<char>((i * 131 + static_cast<size_t>(rank) * 7) >> 3);

        std::vector<double> t[kForms];
        for (int round = -2; round < rounds; ++round) {
            double sample[kForms];
            for (int k = 0; k < kForms; ++k) {
                const Form f = static_cast<Form>((k + (round + 4)) % kForms); // rotate the order
                std::fill(p.dst.begin(), p.dst.end(), 0);
                PMPI_Barrier(MPI_COMM_WORLD);
                const double start = now();
                p.round_trip(f);
                sample[f] = (now() - start) / 2 * 1e6;
                // Every form must deliver the peer's rows: check them (peer's pattern) every round.
                for (size_t r = 0; r < p.g.rows; ++r)
                    for (size_t b = 0; b < width; ++b) {
                        const size_t i = r * p.g.stride + b;
                        if (p.dst[i] !=
                            static_cast<char>((i * 131 + static_cast<size_t>(p.other) * 7) >> 3)) {
                            ++failures;
                            r = p.g.rows;
                            break;
                        }
                    }
            }
            if (round >= 0)
                for (int f = 0; f < kForms; ++f)
                    t[f].push_back(sample[f]);
        }
        std::vector<double> pipe_staged, pipe_plain, aa;
        for (int i = 0; i < rounds; ++i) {
            pipe_staged.push_back(t[Pipelined][i] / t[Staged][i]);
            pipe_plain.push_back(t[Pipelined][i] / t[Plain][i]);
            aa.push_back(t[Staged2][i] / t[Staged][i]);
        }
        if (rank == 0)
            std::printf("%10zu %10.1f %10.1f %10.1f %10.1f  %-9.2f %-9.2f %-9.2f\n", bytes, median(t[Plain]),
                        median(t[Staged]), median(t[Pipelined]), median(t[Staged2]), median(pipe_staged),
                        median(pipe_plain), median(aa));
        MPI_Type_free(&p.type);
    }
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("verification: %s\n", all == 0 ? "every form delivered every row" : "WRONG BYTES");
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
