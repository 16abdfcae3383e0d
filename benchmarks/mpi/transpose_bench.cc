// FFT-style transpose of a row-distributed N x N matrix of doubles (slab decomposition): every
// rank sends each peer the block of its rows that lies in the peer's columns, an (N/P) x (N/P)
// block N doubles apart. Time per exchange, medians, variants in a shuffled order:
//   kupl  MPI_Alltoall of a resized vector type (the interposer when preloaded; it leaves
//         collectives to Open MPI, so this is Open MPI's datatype engine behind one more call)
//   ompi  PMPI_Alltoall of the same type
//   hand  C-loop pack of the blocks, PMPI_Alltoall of contiguous doubles
//   ompi' ompi again: its ratio to ompi is the noise of the run
// The blocks arrive contiguous in every variant; the local transpose after it is the same work
// for all of them and is left out.
#include "bench_util.h"

#include <random>

namespace {

enum Variant { Kupl, Ompi, Hand, OmpiAgain, kVariants };

struct Transpose {
    int n, ranks;
    int block() const { return n / ranks; } // rows per rank, and columns per peer
};

/** One peer's block of the local slab: block() rows of block() doubles, n apart; its extent is
 *  one block row, so consecutive elements of an Alltoall walk across the columns. */
MPI_Datatype block_type(const Transpose &t) {
    MPI_Datatype vector, resized;
    MPI_Type_vector(t.block(), t.block(), t.n, MPI_DOUBLE, &vector);
    MPI_Type_create_resized(vector, 0, static_cast<MPI_Aint>(sizeof(double)) * t.block(), &resized);
    MPI_Type_free(&vector);
    MPI_Type_commit(&resized);
    return resized;
}

void hand_pack(const Transpose &t, const double *slab, double *packed) {
    const int b = t.block();
    for (int peer = 0; peer < t.ranks; ++peer)
        for (int row = 0; row < b; ++row, packed += b)
            std::memcpy(packed, slab + static_cast<size_t>(row) * t.n + static_cast<size_t>(peer) * b,
                        sizeof(double) * b);
}

double exchange(Variant v, const Transpose &t, MPI_Datatype block, const std::vector<double> &slab,
                std::vector<double> &packed, std::vector<double> &received) {
    const int elements = t.block() * t.block();
    const double t0 = bench::now();
    switch (v) {
    case Kupl:
        MPI_Alltoall(slab.data(), 1, block, received.data(), elements, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    case Ompi:
    case OmpiAgain:
        PMPI_Alltoall(slab.data(), 1, block, received.data(), elements, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    default:
        hand_pack(t, slab.data(), packed.data());
        PMPI_Alltoall(packed.data(), elements, MPI_DOUBLE, received.data(), elements, MPI_DOUBLE,
                      MPI_COMM_WORLD);
        break;
    }
    return bench::now() - t0;
}

/** Element (row, col) of the global matrix: every received value can be checked. */
double value(size_t row, size_t col) {
    return static_cast<double>(row) * 65536.0 + static_cast<double>(col);
}

bool received_right(const Transpose &t, int rank, const std::vector<double> &received) {
    const size_t b = t.block();
    for (size_t from = 0; from < static_cast<size_t>(t.ranks); ++from)
        for (size_t row = 0; row < b; ++row)
            for (size_t col = 0; col < b; ++col)
                if (received[(from * b + row) * b + col] != value(from * b + row, rank * b + col))
                    return false;
    return true;
}

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int reps = static_cast<int>(bench::option(argc, argv, "--reps", 21));
    const bool quick = bench::option(argc, argv, "--quick", 0) != 0;
    const int sizes[] = {256, 1024, 2048};
    if (rank == 0) {
        std::printf("%s\n", bench::interposer_loaded() ? "interposer loaded (collectives pass through it)"
                                                       : "interposer NOT loaded: kupl and ompi are the same");
        std::printf("%-34s %10s %10s %10s   %9s %9s %11s\n", "time per transpose, median (us)", "kupl",
                    "ompi", "hand", "kupl/ompi", "kupl/hand", "ompi'/ompi");
    }
    std::mt19937 shuffle(12345);
    int failures = 0;
    for (int n : sizes) {
        const Transpose t{n, ranks};
        if (n % ranks != 0)
            continue;
        const size_t b = t.block();
        std::vector<double> slab(b * n), packed(b * n), received(b * n);
        for (size_t row = 0; row < b; ++row)
            for (size_t col = 0; col < static_cast<size_t>(n); ++col)
                slab[row * n + col] = value(rank * b + row, col);
        MPI_Datatype block = block_type(t);
        std::vector<double> times[kVariants];
        Variant order[kVariants] = {Kupl, Ompi, Hand, OmpiAgain};
        const int rounds = quick ? 2 : reps;
        for (int round = 0; round < rounds; ++round) {
            std::shuffle(order, order + kVariants, shuffle); // same seed on every rank: same order
            for (Variant v : order) {
                std::fill(received.begin(), received.end(), -1.0);
                PMPI_Barrier(MPI_COMM_WORLD);
                times[v].push_back(exchange(v, t, block, slab, packed, received));
                if (!received_right(t, rank, received))
                    ++failures;
            }
        }
        MPI_Type_free(&block);
        double med[kVariants];
        for (int v = 0; v < kVariants; ++v) {
            double local = bench::median(times[v]), slowest = 0;
            PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            med[v] = slowest * 1e6;
        }
        if (rank == 0) {
            char name[64];
            std::snprintf(name, sizeof name, "%dx%d, %d KiB rows to each peer", n, n,
                          static_cast<int>(b * sizeof(double) / 1024));
            std::printf("%-34s %10.1f %10.1f %10.1f   %8.3fx %8.3fx %10.3fx\n", name, med[Kupl], med[Ompi],
                        med[Hand], med[Kupl] / med[Ompi], med[Kupl] / med[Hand], med[OmpiAgain] / med[Ompi]);
            std::fflush(stdout);
        }
        if (quick)
            break;
    }
    int total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total != 0)
        std::printf("transpose: %d exchanges delivered wrong data\n", total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
