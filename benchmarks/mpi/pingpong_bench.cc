// Ping-pong of 2D-strided messages between two ranks on one node, one-way time
// (half the round trip), medians. In one run, interleaved:
//   kupl   MPI_Send/MPI_Recv of the strided type (through the interposer when preloaded)
//   ompi   PMPI_Send/PMPI_Recv of the same type (Open MPI's datatype engine)
//   hand   the application packs with a C loop, sends contiguous bytes, unpacks (PMPI)
//   contig PMPI of the same number of contiguous bytes (the floor)
//   2block the same bytes as the interposer's two-block wire type (leaf 0, then
//          leaves 1..n-1 one leaf on): Open MPI's non-contiguous pipeline, which
//          on some VMs is much faster than its contiguous single-copy path
#include "bench_util.h"

#include <random>

namespace {

/** planes x rows blocks of blocklen doubles: rows stride apart, planes plane_stride apart (3D faces). */
struct Shape {
    const char *name;
    int rows, blocklen, stride; // doubles
    int planes = 1, plane_stride = 0;
    size_t elements() const { return static_cast<size_t>(planes) * rows * blocklen; }
    size_t grid_elements() const {
        return planes > 1 ? static_cast<size_t>(planes) * plane_stride : static_cast<size_t>(rows) * stride;
    }
};

enum Variant { Kupl, Ompi, Hand, Contig, TwoBlock, kVariants };

void hand_pack(const double *grid, const Shape &s, double *out) {
    for (int p = 0; p < s.planes; ++p)
        for (int r = 0; r < s.rows; ++r, out += s.blocklen)
            std::memcpy(out,
                        grid + static_cast<size_t>(p) * s.plane_stride + static_cast<size_t>(r) * s.stride,
                        sizeof(double) * s.blocklen);
}
void hand_unpack(const double *in, const Shape &s, double *grid) {
    for (int p = 0; p < s.planes; ++p)
        for (int r = 0; r < s.rows; ++r, in += s.blocklen)
            std::memcpy(grid + static_cast<size_t>(p) * s.plane_stride + static_cast<size_t>(r) * s.stride,
                        in, sizeof(double) * s.blocklen);
}

/** One round trip of variant v; returns seconds (rank 0). */
double round_trip(Variant v, int rank, const Shape &s, MPI_Datatype t, MPI_Datatype two, double *grid,
                  double *flat, double *tmp) {
    const int peer = 1 - rank, n = static_cast<int>(s.elements());
    double t0 = bench::now();
    for (int leg = 0; leg < 2; ++leg) {
        const bool sending = (leg == 0) == (rank == 0);
        if (sending) {
            switch (v) {
            case Kupl:
                MPI_Send(grid, 1, t, peer, 0, MPI_COMM_WORLD);
                break;
            case Ompi:
                PMPI_Send(grid, 1, t, peer, 0, MPI_COMM_WORLD);
                break;
            case Hand:
                hand_pack(grid, s, tmp);
                PMPI_Send(tmp, n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
                break;
            case Contig:
                PMPI_Send(flat, n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
                break;
            default:
                PMPI_Send(flat, 1, two, peer, 0, MPI_COMM_WORLD);
                break;
            }
        } else {
            switch (v) {
            case Kupl:
                MPI_Recv(grid, 1, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            case Ompi:
                PMPI_Recv(grid, 1, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            case Hand:
                PMPI_Recv(tmp, n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                hand_unpack(tmp, s, grid);
                break;
            case Contig:
                PMPI_Recv(flat, n, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            default:
                PMPI_Recv(flat, 1, two, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            }
        }
    }
    return bench::now() - t0;
}

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        std::fprintf(stderr, "pingpong_bench: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int reps = static_cast<int>(bench::option(argc, argv, "--reps", 31));
    const bool quick = bench::option(argc, argv, "--quick", 0) != 0;
    const Shape shapes[] = {
        {"column 512 rows (4 KiB)", 512, 1, 520},
        {"column 4096 rows of 4096x4096 (32 KiB)", 4096, 1, 4096},
        {"blocklen 8, 4096 rows (256 KiB)", 4096, 8, 4096},
        {"blocklen 64, 2048 rows (1 MiB)", 2048, 64, 2048},
        {"subarray 1024x1024 of 1024x2048 (8 MiB)", 1024, 1024, 2048},
        // NAS MG-style faces of a 66^3 grid: x-face (one double per row), y-face (rows of 66)
        {"MG x-face of 66^3 (34 KiB)", 66, 1, 66, 66, 66 * 66},
        {"MG y-face of 66^3 (34 KiB)", 1, 66, 66, 66, 66 * 66},
    };
    if (rank == 0) {
        std::printf("%s\n",
                    bench::interposer_loaded() ? "interposer loaded" : "interposer NOT loaded: kupl == ompi");
        std::printf("%-42s %8s %8s %8s %8s %8s   %9s %9s\n", "one-way time, median (us)", "kupl", "ompi",
                    "hand", "contig", "2block", "ompi/kupl", "kupl/hand");
    }
    for (const Shape &s : shapes) {
        MPI_Datatype t, plane;
        MPI_Type_vector(s.rows, s.blocklen, s.stride, MPI_DOUBLE, &plane);
        if (s.planes > 1) {
            MPI_Type_create_hvector(s.planes, 1, static_cast<MPI_Aint>(s.plane_stride) * sizeof(double),
                                    plane, &t);
            MPI_Type_free(&plane);
        } else {
            t = plane;
        }
        MPI_Type_commit(&t);
        const size_t elems = s.grid_elements(), n = s.elements();
        std::vector<double> grid(elems, 1.0), flat(n + 1, 2.0), tmp(n, 3.0);
        MPI_Datatype two;
        int blocklens[2] = {1, static_cast<int>(n) - 1}, displacements[2] = {0, 2};
        PMPI_Type_indexed(2, blocklens, displacements, MPI_DOUBLE, &two);
        PMPI_Type_commit(&two);
        std::vector<double> times[kVariants];
        // Several round trips per sample, so a sample lasts ~1 ms and a barrier's jitter does not dominate.
        const int iters =
            static_cast<int>(std::min<size_t>(200, std::max<size_t>(1, (size_t(1) << 20) / (n * 8))));
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
                double dt = 0;
                for (int i = 0; i < iters; ++i)
                    dt += round_trip(v, rank, s, t, two, grid.data(), flat.data(), tmp.data());
                if (r >= 2) // the first rounds warm up buffers and connections
                    times[v].push_back(dt / 2 / iters);
            }
        }
        if (rank == 0) {
            double med[kVariants];
            for (int k = 0; k < kVariants; ++k)
                med[k] = bench::median(times[k]) * 1e6;
            std::printf("%-42s %8.1f %8.1f %8.1f %8.1f %8.1f   %8.2fx %8.2fx\n", s.name, med[Kupl], med[Ompi],
                        med[Hand], med[Contig], med[TwoBlock], med[Ompi] / med[Kupl], med[Kupl] / med[Hand]);
            std::fflush(stdout);
        }
        MPI_Type_free(&t);
        PMPI_Type_free(&two);
        if (quick)
            break;
    }
    MPI_Finalize();
    return 0;
}
