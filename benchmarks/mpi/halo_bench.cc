// Halo exchange with compute between post and wait, two ranks side by side:
// each iteration posts Irecv/Isend of one halo, runs a stencil sweep over the
// grid, then waits. Time per iteration, medians, variants in a shuffled order:
//   kupl  MPI_Isend/MPI_Irecv/MPI_Waitall of the halo datatype (the interposer when preloaded)
//   ompi  PMPI_* of the same datatype (Open MPI's datatype engine)
//   hand  C-loop pack, PMPI_* of contiguous doubles, C-loop unpack after the wait
//   ompi' ompi again: its ratio to ompi is the noise of the run
// Cases: 2D stencil column halos (vector), a WRF-style 4-column halo (subarray),
// and a NAS MG-style x-face of a 3D grid (hvector of a vector).
#include "bench_util.h"

#include <random>

namespace {

enum Variant { Kupl, Ompi, Hand, OmpiAgain, kVariants };

/** planes x rows blocks of blocklen doubles from origin: rows stride apart, planes plane_stride apart. */
struct Region {
    size_t origin;
    int planes, rows, blocklen;
    size_t stride, plane_stride;
    size_t elements() const { return static_cast<size_t>(planes) * rows * blocklen; }
};

struct Case {
    const char *name;
    bool three_d;   // 3D grid n^3 (7-point sweep) or 2D nx x ld (5-point sweep)
    int nx, ny, ld; // 2D: rows, row pitch; 3D: n = nx = ny = ld
    Region send, recv;
    bool subarray; // describe the 2D halo as a subarray instead of a vector
};

void sweep(const Case &c, const std::vector<double> &a, std::vector<double> &b) {
    if (!c.three_d) {
        for (int i = 1; i < c.nx - 1; ++i)
            for (int j = 1; j < c.ld - 1; ++j) {
                const size_t k = static_cast<size_t>(i) * c.ld + j;
                b[k] = 0.25 * (a[k - c.ld] + a[k + c.ld] + a[k - 1] + a[k + 1]);
            }
        return;
    }
    const size_t n = c.nx, nn = n * n;
    for (size_t z = 1; z + 1 < n; ++z)
        for (size_t y = 1; y + 1 < n; ++y)
            for (size_t x = 1; x + 1 < n; ++x) {
                const size_t k = z * nn + y * n + x;
                b[k] = (a[k - 1] + a[k + 1] + a[k - n] + a[k + n] + a[k - nn] + a[k + nn]) / 6.0;
            }
}

MPI_Datatype halo_type(const Case &c) {
    MPI_Datatype t;
    const Region &r = c.send;
    if (c.subarray) {
        int sizes[2] = {c.nx, c.ld}, subsizes[2] = {r.rows, r.blocklen}, starts[2] = {0, 0};
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    } else {
        MPI_Type_vector(r.rows, r.blocklen, static_cast<int>(r.stride), MPI_DOUBLE, &t);
        if (r.planes > 1) {
            MPI_Datatype plane = t;
            MPI_Type_create_hvector(r.planes, 1, static_cast<MPI_Aint>(r.plane_stride * sizeof(double)),
                                    plane, &t);
            MPI_Type_free(&plane);
        }
    }
    MPI_Type_commit(&t);
    return t;
}

template <bool Pack> void hand_copy(const Region &r, double *grid, double *flat) {
    for (int p = 0; p < r.planes; ++p)
        for (int i = 0; i < r.rows; ++i, flat += r.blocklen) {
            double *g = grid + r.origin + p * r.plane_stride + i * r.stride;
            if (Pack)
                std::memcpy(flat, g, sizeof(double) * r.blocklen);
            else
                std::memcpy(g, flat, sizeof(double) * r.blocklen);
        }
}

double iteration(Variant v, const Case &c, MPI_Datatype halo, int peer, std::vector<double> &a,
                 std::vector<double> &b, std::vector<double> &sbuf, std::vector<double> &rbuf) {
    // With a subarray type the offset is in the type (starts are 0 here): the buffer moves instead.
    const int n = static_cast<int>(c.send.elements());
    MPI_Request req[2];
    double t0 = bench::now();
    switch (v) {
    case Kupl:
        MPI_Irecv(&a[c.recv.origin], 1, halo, peer, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(&a[c.send.origin], 1, halo, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    case Ompi:
    case OmpiAgain:
        PMPI_Irecv(&a[c.recv.origin], 1, halo, peer, 0, MPI_COMM_WORLD, &req[0]);
        PMPI_Isend(&a[c.send.origin], 1, halo, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    default:
        PMPI_Irecv(rbuf.data(), n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req[0]);
        hand_copy<true>(c.send, a.data(), sbuf.data());
        PMPI_Isend(sbuf.data(), n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req[1]);
        break;
    }
    sweep(c, a, b);
    if (v == Kupl)
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    else
        PMPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (v == Hand)
        hand_copy<false>(c.recv, a.data(), rbuf.data());
    return bench::now() - t0;
}

/** A 2D grid of nx rows, interior ny columns and a halo of w columns each side; rank 0 on the left. */
Case grid_2d(const char *name, int rank, int nx, int ny, int w, bool subarray) {
    const int ld = ny + 2 * w;
    const size_t send_col = rank == 0 ? ny : w, recv_col = rank == 0 ? ny + w : 0;
    return {
        name,    false, nx, ny, ld, {send_col, 1, nx, w, size_t(ld), 0}, {recv_col, 1, nx, w, size_t(ld), 0},
        subarray};
}

/** A 3D grid n^3 split along x: rank 0 sends its last interior x-plane, receives its x-halo. */
Case grid_3d(const char *name, int rank, int n) {
    const size_t send_x = rank == 0 ? n - 2 : 1, recv_x = rank == 0 ? n - 1 : 0;
    const size_t nn = static_cast<size_t>(n) * n;
    return {name, true, n, n, n, {send_x, n, n, 1, size_t(n), nn}, {recv_x, n, n, 1, size_t(n), nn}, false};
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
    const Case cases[] = {
        grid_2d("2D stencil 1024x1024, 1-column halo", rank, 1024, 1024, 1, false),
        grid_2d("2D stencil 4096x1024, 1-column halo", rank, 4096, 1024, 1, false),
        grid_2d("WRF-style 2048x512, 4-column subarray", rank, 2048, 512, 4, true),
        grid_3d("NAS MG-style x-face of a 66^3 grid", rank, 66),
        grid_3d("NAS MG-style x-face of a 130^3 grid", rank, 130),
    };
    if (rank == 0) {
        std::printf("%s\n",
                    bench::interposer_loaded() ? "interposer loaded" : "interposer NOT loaded: kupl == ompi");
        std::printf("%-40s %10s %10s %10s   %9s %9s %11s\n", "time per iteration, median (us)", "kupl",
                    "ompi", "hand", "kupl/ompi", "kupl/hand", "noise:o'/o");
    }
    for (const Case &c : cases) {
        const size_t total =
            c.three_d ? static_cast<size_t>(c.nx) * c.nx * c.nx : static_cast<size_t>(c.nx) * c.ld;
        std::vector<double> a(total, 1.0), b(total, 0.0), sbuf(c.send.elements()), rbuf(c.recv.elements());
        MPI_Datatype halo = halo_type(c);
        std::vector<double> times[kVariants];
        std::mt19937 shuffle_rng(12345); // same seed on both ranks: same order everywhere
        int order[kVariants];
        for (int k = 0; k < kVariants; ++k)
            order[k] = k;
        for (int r = 0; r < reps + 2; ++r) {
            // A new order each round: a variant must not always run after the same one.
            std::shuffle(order, order + kVariants, shuffle_rng);
            for (int k = 0; k < kVariants; ++k) {
                Variant v = static_cast<Variant>(order[k]);
                PMPI_Barrier(MPI_COMM_WORLD);
                double dt = iteration(v, c, halo, 1 - rank, a, b, sbuf, rbuf);
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
