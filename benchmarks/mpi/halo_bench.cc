// Halo exchange with compute between post and wait, two ranks side by side
// along x of an NX x NY grid of doubles (row-major): each iteration posts
// Irecv/Isend of the column halos (a vector type), computes a 5-point stencil
// sweep on the interior, then waits. Time per iteration, medians, interleaved:
//   kupl  MPI_Isend/MPI_Irecv/MPI_Waitall (through the interposer when preloaded)
//   ompi  PMPI_* with the same vector type (Open MPI's datatype engine)
//   hand  C-loop pack, PMPI_* of contiguous doubles, C-loop unpack after the wait
//   ompi' ompi again: its ratio to ompi is the noise of the run
#include "bench_util.h"

#include <chrono>
#include <random>

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// OmpiAgain repeats Ompi: the ratio of the two is the host's noise, shown beside the others.
enum Variant { Kupl, Ompi, Hand, OmpiAgain, kVariants };

struct Grid {
    int nx, ny, ld, width; // rows, interior columns, row pitch (doubles), halo width (columns)
    std::vector<double> a, b;
    double *at(std::vector<double> &v, int i, int j) { return &v[static_cast<size_t>(i) * ld + j]; }
};

void stencil(Grid &g) {
    for (int i = 1; i < g.nx - 1; ++i)
        for (int j = g.width; j < g.ny + g.width; ++j)
            *g.at(g.b, i, j) = 0.25 * (*g.at(g.a, i - 1, j) + *g.at(g.a, i + 1, j) + *g.at(g.a, i, j - 1) +
                                       *g.at(g.a, i, j + 1));
}

double iteration(Variant v, Grid &g, MPI_Datatype halo, int peer, std::vector<double> &sbuf,
                 std::vector<double> &rbuf) {
    // Rank 0 owns the left half: it sends its last interior columns and receives its right halo.
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int send_col = rank == 0 ? g.ny : g.width, recv_col = rank == 0 ? g.ny + g.width : 0;
    const int n = g.nx * g.width;
    MPI_Request req[2];
    double t0 = now();
    switch (v) {
    case Kupl:
        MPI_Irecv(g.at(g.a, 0, recv_col), 1, halo, peer, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(g.at(g.a, 0, send_col), 1, halo, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    case Ompi:
    case OmpiAgain:
        PMPI_Irecv(g.at(g.a, 0, recv_col), 1, halo, peer, 0, MPI_COMM_WORLD, &req[0]);
        PMPI_Isend(g.at(g.a, 0, send_col), 1, halo, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    default:
        PMPI_Irecv(rbuf.data(), n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req[0]);
        for (int i = 0; i < g.nx; ++i)
            std::memcpy(&sbuf[static_cast<size_t>(i) * g.width], g.at(g.a, i, send_col),
                        sizeof(double) * g.width);
        PMPI_Isend(sbuf.data(), n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    }
    stencil(g);
    if (v == Kupl)
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    else
        PMPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (v == Hand)
        for (int i = 0; i < g.nx; ++i)
            std::memcpy(g.at(g.a, i, recv_col), &rbuf[static_cast<size_t>(i) * g.width],
                        sizeof(double) * g.width);
    return now() - t0;
}

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        std::fprintf(stderr, "halo_bench: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int reps = static_cast<int>(bench::option(argc, argv, "--reps", 31));
    const bool quick = bench::option(argc, argv, "--quick", 0) != 0;
    struct Case {
        const char *name;
        int nx, ny, width;
    } cases[] = {
        {"2D stencil 1024x1024, 1-column halo", 1024, 1024, 1},
        {"2D stencil 4096x1024, 1-column halo", 4096, 1024, 1},
        {"WRF-style 2048x512, 4-column halo", 2048, 512, 4},
        {"MG-style face 512x512, 16-column block", 512, 512, 16},
    };
    if (rank == 0) {
        std::printf("%s\n",
                    bench::interposer_loaded() ? "interposer loaded" : "interposer NOT loaded: kupl == ompi");
        std::printf("%-40s %10s %10s %10s   %9s %9s %11s\n", "time per iteration, median (us)", "kupl",
                    "ompi", "hand", "kupl/ompi", "kupl/hand", "noise:o'/o");
    }
    for (const Case &c : cases) {
        Grid g{c.nx, c.ny, c.ny + 2 * c.width, c.width, {}, {}};
        g.a.assign(static_cast<size_t>(g.nx) * g.ld, 1.0);
        g.b.assign(g.a.size(), 0.0);
        std::vector<double> sbuf(static_cast<size_t>(g.nx) * g.width), rbuf(sbuf.size());
        MPI_Datatype halo;
        MPI_Type_vector(g.nx, g.width, g.ld, MPI_DOUBLE, &halo);
        MPI_Type_commit(&halo);
        std::vector<double> times[kVariants];
        std::mt19937 shuffle_rng(12345); // same seed on both ranks: same order everywhere
        int order[kVariants];
        for (int k = 0; k < kVariants; ++k)
            order[k] = k;
        for (int r = 0; r < reps + 2; ++r) {
            // A new order each round: a variant must not always run after the same one
            // (measured: what ran just before can change a large transfer's time 4x).
            std::shuffle(order, order + kVariants, shuffle_rng);
            for (int k = 0; k < kVariants; ++k) {
                Variant v = static_cast<Variant>(order[k]);
                PMPI_Barrier(MPI_COMM_WORLD);
                double dt = iteration(v, g, halo, 1 - rank, sbuf, rbuf);
                if (r >= 2)
                    times[v].push_back(dt);
            }
        }
        if (rank == 0) {
            double med[kVariants];
            for (int k = 0; k < kVariants; ++k)
                med[k] = bench::median(times[k]) * 1e6;
            std::printf("%-40s %10.1f %10.1f %10.1f   %8.3fx %8.3fx %10.3fx\n", c.name, med[Kupl], med[Ompi],
                        med[Hand], med[Kupl] / med[Ompi], med[Kupl] / med[Hand], med[OmpiAgain] / med[Ompi]);
            std::fflush(stdout);
        }
        MPI_Type_free(&halo);
        if (quick)
            break;
    }
    MPI_Finalize();
    return 0;
}
