// MPI_Pack / MPI_Unpack throughput of 2D-strided layouts: the interposer's
// MPI_Pack (kupl_memcpy2d_async) against Open MPI's own PMPI_Pack, in one run,
// cache-resident ("hot") and after evicting the caches ("cold").
// Run with the interposer preloaded (see run_mpi_benchmarks.sh); without it
// both columns are Open MPI and the ratio is ~1.
#include "bench_util.h"

#include <cstdint>

namespace {

struct Shape {
    const char *name;
    int rows, blocklen, stride;       // in doubles: MPI_Type_vector(rows, blocklen, stride, MPI_DOUBLE)
    int planes = 1, plane_stride = 0; // > 1: an hvector of planes of that vector (3D faces)
};

struct Result {
    double ours_pack, ompi_pack, ours_unpack, ompi_unpack; // seconds, medians
};

Result measure(const Shape &s, bool cold, int reps) {
    MPI_Datatype t;
    MPI_Type_vector(s.rows, s.blocklen, s.stride, MPI_DOUBLE, &t);
    if (s.planes > 1) {
        MPI_Datatype plane = t;
        MPI_Type_create_hvector(s.planes, 1, static_cast<MPI_Aint>(s.plane_stride) * sizeof(double), plane,
                                &t);
        MPI_Type_free(&plane);
    }
    MPI_Type_commit(&t);
    const size_t elems = s.planes > 1 ? static_cast<size_t>(s.planes) * s.plane_stride
                                      : static_cast<size_t>(s.rows) * s.stride;
    std::vector<double> grid(elems), copy(elems);
    for (size_t i = 0; i < elems; ++i)
        grid[i] = static_cast<double>(i);
    int bytes = 0;
    MPI_Pack_size(1, t, MPI_COMM_WORLD, &bytes);
    std::vector<char> packed(bytes), ref(bytes);
    std::vector<double> op, pp, ou, pu;
    for (int r = 0; r < reps; ++r) {
        // Alternate which goes first so neither always finds the other's cache state.
        for (int k = 0; k < 2; ++k) {
            const bool ours = (k + r) % 2 == 0;
            if (cold)
                bench::flush_caches();
            int pos = 0;
            double t0 = bench::now();
            if (ours)
                MPI_Pack(grid.data(), 1, t, packed.data(), bytes, &pos, MPI_COMM_WORLD);
            else
                PMPI_Pack(grid.data(), 1, t, ref.data(), bytes, &pos, MPI_COMM_WORLD);
            (ours ? op : pp).push_back(bench::now() - t0);
            if (cold)
                bench::flush_caches();
            pos = 0;
            t0 = bench::now();
            if (ours)
                MPI_Unpack(packed.data(), bytes, &pos, copy.data(), 1, t, MPI_COMM_WORLD);
            else
                PMPI_Unpack(ref.data(), bytes, &pos, copy.data(), 1, t, MPI_COMM_WORLD);
            (ours ? ou : pu).push_back(bench::now() - t0);
        }
    }
    if (std::memcmp(packed.data(), ref.data(), bytes) != 0) {
        std::fprintf(stderr, "pack_bench: %s: packed bytes differ from Open MPI's\n", s.name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Type_free(&t);
    return {bench::median(op), bench::median(pp), bench::median(ou), bench::median(pu)};
}

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int reps = static_cast<int>(bench::option(argc, argv, "--reps", 21));
    const bool quick = bench::option(argc, argv, "--quick", 0) != 0;
    // Hot shapes fit in L2 (<= ~1 MiB touched); cold ones are 4096x4096-double matrices.
    const Shape hot[] = {
        {"column 512 rows, pitch 4160 B", 512, 1, 520},
        {"blocklen 8 (64 B), 1024 rows", 1024, 8, 40},
        {"blocklen 64 (512 B), 256 rows", 256, 64, 80},
        {"subarray 128x128 of 128x256", 128, 128, 256},
        {"NAS MG x-face of a 66^3 grid", 66, 1, 66, 66, 66 * 66},
    };
    const Shape cold[] = {
        {"column of 4096x4096", 4096, 1, 4096},
        {"column, pitch padded +64 B", 4096, 1, 4104},
        {"blocklen 8 of 4096x4096", 4096, 8, 4096},
        {"blocklen 64 of 4096x4096", 4096, 64, 4096},
        {"subarray 2048x2048 of 4096x4096", 2048, 2048, 4096},
    };
    std::printf("%s\n", bench::interposer_loaded()
                            ? "interposer loaded: 'kupl' = MPI_Pack via kupl_memcpy2d_async"
                            : "interposer NOT loaded: both columns are Open MPI");
    std::printf("%-34s %-4s %9s %9s %7s   %9s %9s %7s\n", "layout", "", "pack kupl", "pack ompi", "ratio",
                "unpk kupl", "unpk ompi", "ratio");
    auto row = [&](const Shape &s, bool is_cold) {
        Result r = measure(s, is_cold, is_cold ? std::max(5, reps / 3) : reps);
        int bytes = s.planes * s.rows * s.blocklen * 8;
        auto gbs = [&](double t) { return t > 0 ? bytes / t / 1e9 : 0.0; };
        std::printf("%-34s %-4s %7.2f GB/s %5.2f GB/s %6.2fx   %6.2f GB/s %5.2f GB/s %6.2fx\n", s.name,
                    is_cold ? "cold" : "hot", gbs(r.ours_pack), gbs(r.ompi_pack), r.ompi_pack / r.ours_pack,
                    gbs(r.ours_unpack), gbs(r.ompi_unpack), r.ompi_unpack / r.ours_unpack);
        std::fflush(stdout);
    };
    for (const Shape &s : hot)
        row(s, false);
    for (const Shape &s : cold) {
        row(s, true);
        if (quick)
            break;
    }
    MPI_Finalize();
    return 0;
}
