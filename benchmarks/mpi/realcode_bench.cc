// Real-code communication patterns (realcode_patterns.h), 2 ranks on one node: for every
// pattern and size, in one process run and interleaved exchange sample by exchange sample,
//   hand    the application's pack loops, contiguous bytes, unpack loops (interposer off)
//   plain   the derived datatypes through plain Open MPI
//   kupl    the derived datatypes through the interposer
//   plain2  plain again: plain2/plain is the run's own noise (an A/A comparison)
// Point-to-point patterns are a ping-pong (time per round trip), the FFT transpose an
// MPI_Alltoall (time per call). Every round runs the four variants in a rotating order; each
// ratio is taken within a round (paired) and summarised by its median and a distribution-free
// 95% interval of that median. Exchanges on this host run 3-4x slower for stretches of a run,
// all variants alike; pairing within a round is what lets a few percent show.
//
// How "interposer off" is reached, in order of preference (--path=auto picks):
//   toggle  the interposer exports int kupl_mpi_set_enabled(int on); every variant calls MPI_*,
//           with the interposer switched off for hand/plain/plain2 and on for kupl
//   pmpi    the interposer is loaded but has no switch: hand/plain/plain2 call PMPI_* directly
//   none    no interposer in the process: kupl is reported unavailable (the others still run)
//
// Every variant's received bytes are checked against the hand loops' result before and after
// the timing (the whole destination region, so a stray write shows too, and the source must be
// untouched); the program exits non-zero if any check fails.
#include "realcode_patterns.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using realcode::Message;
using realcode::Pattern;

enum Variant { Hand, Plain, Kupl, Plain2, kVariants };
const char *const kVariantName[kVariants] = {"hand", "plain", "kupl", "plain2"};

enum class Path { Toggle, Pmpi, None };
const char *path_name(Path p) {
    return p == Path::Toggle ? "toggle" : p == Path::Pmpi ? "pmpi" : "none";
}

using SendFn = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
using RecvFn = int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
using AlltoallFn = int (*)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
using ToggleFn = int (*)(int);

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/** The MPI entry points one variant calls, and whether the interposer is on for it. */
struct Calls {
    SendFn send;
    RecvFn recv;
    AlltoallFn alltoall;
    int enabled; // for the toggle
};

struct Setup {
    Path path = Path::None;
    ToggleFn toggle = nullptr;
    Calls calls[kVariants];
    bool available[kVariants] = {true, true, true, true};
};

/** True if MPI_Send in this process is not Open MPI's own (a PMPI tool is preloaded). */
bool interposed() {
    Dl_info mpi{}, pmpi{};
    if (!dladdr(reinterpret_cast<void *>(&MPI_Send), &mpi) ||
        !dladdr(reinterpret_cast<void *>(&PMPI_Send), &pmpi))
        return false;
    return mpi.dli_fname && pmpi.dli_fname && std::strcmp(mpi.dli_fname, pmpi.dli_fname) != 0;
}

Setup make_setup(const std::string &want) {
    Setup s;
    s.toggle = reinterpret_cast<ToggleFn>(dlsym(RTLD_DEFAULT, "kupl_mpi_set_enabled"));
    const bool loaded = interposed();
    if (want == "toggle" || (want == "auto" && s.toggle))
        s.path = s.toggle ? Path::Toggle : Path::None;
    else if (want == "pmpi" || (want == "auto" && loaded))
        s.path = loaded ? Path::Pmpi : Path::None;
    const Calls mpi{&MPI_Send, &MPI_Recv, &MPI_Alltoall, 0};
    const Calls pmpi{&PMPI_Send, &PMPI_Recv, &PMPI_Alltoall, 0};
    for (int v = 0; v < kVariants; ++v) {
        s.calls[v] = s.path == Path::Pmpi && v != Kupl ? pmpi : mpi;
        s.calls[v].enabled = v == Kupl;
    }
    s.available[Kupl] = s.path != Path::None;
    return s;
}

/** Region memory, 64-byte aligned, a whole number of 8-byte words. */
struct Region {
    explicit Region(size_t bytes) : words((bytes + 7) / 8 + 8) {}
    char *data() { return reinterpret_cast<char *>(words.data()); }
    std::vector<uint64_t> words;
};

uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
void fill(Region &r, uint64_t seed) {
    const uint64_t base = mix(seed) << 20;
    for (size_t i = 0; i < r.words.size(); ++i)
        r.words[i] = mix(base + i);
}
uint64_t src_seed(uint64_t round, int rank) {
    return round * 1000003ULL + 7919ULL * rank + 1;
}
uint64_t dst_seed(uint64_t round, int rank) {
    return ~src_seed(round, rank);
}

/** One exchange of the case in the given variant (both ranks call it). */
struct Case {
    const Pattern *pattern;
    Message msg;
    std::vector<char> pack_out, pack_in;
    char *src, *dst;
    int rank, ranks;

    void exchange(const Calls &c, Variant v) {
        if (pattern->collective()) {
            if (v == Hand) {
                const int block = static_cast<int>(pattern->pack_bytes() / ranks);
                pattern->pack(src, pack_out.data());
                c.alltoall(pack_out.data(), block, MPI_BYTE, pack_in.data(), block, MPI_BYTE, MPI_COMM_WORLD);
                pattern->unpack(pack_in.data(), dst);
            } else {
                c.alltoall(msg.send_buf, msg.send_count, msg.send_type, msg.recv_buf, msg.recv_count,
                           msg.recv_type, MPI_COMM_WORLD);
            }
            return;
        }
        const int peer = 1 - rank, bytes = static_cast<int>(pattern->pack_bytes());
        for (int leg = 0; leg < 2; ++leg) {
            if ((leg == 0) == (rank == 0)) {
                if (v == Hand) {
                    pattern->pack(src, pack_out.data());
                    c.send(pack_out.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                } else {
                    c.send(msg.send_buf, msg.send_count, msg.send_type, peer, 0, MPI_COMM_WORLD);
                }
            } else if (v == Hand) {
                c.recv(pack_in.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                pattern->unpack(pack_in.data(), dst);
            } else {
                c.recv(msg.recv_buf, msg.recv_count, msg.recv_type, peer, 0, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
            }
        }
    }
};

void select(const Setup &s, Variant v) {
    if (s.path == Path::Toggle)
        s.toggle(s.calls[v].enabled);
}

/** Checks one exchange of variant v: every byte of the destination region against the hand
 *  loops' result, and the source region untouched. Returns the number of wrong bytes over all
 *  ranks (0 = verified). */
long verify(Case &c, const Setup &s, Variant v, uint64_t round, Region &src, Region &dst, size_t *checked) {
    fill(src, src_seed(round, c.rank));
    fill(dst, dst_seed(round, c.rank));
    select(s, v);
    PMPI_Barrier(MPI_COMM_WORLD);
    c.exchange(s.calls[v], v);
    PMPI_Barrier(MPI_COMM_WORLD);

    std::vector<Region> srcs;
    std::vector<const char *> ptrs;
    srcs.reserve(c.ranks);
    for (int q = 0; q < c.ranks; ++q) {
        srcs.emplace_back(c.pattern->region_bytes());
        fill(srcs.back(), src_seed(round, q));
        ptrs.push_back(srcs.back().data());
    }
    Region want(c.pattern->region_bytes());
    fill(want, dst_seed(round, c.rank));
    c.pattern->expected(want.data(), ptrs, c.rank, c.ranks);
    long wrong = 0;
    const size_t n = c.pattern->region_bytes();
    for (size_t i = 0; i < n; ++i) {
        wrong += dst.data()[i] != want.data()[i];
        wrong += src.data()[i] != srcs[c.rank].data()[i];
    }
    if (wrong)
        std::fprintf(stderr, "realcode_bench: rank %d: %s %s, variant %s: %ld bytes wrong\n", c.rank,
                     c.pattern->name().c_str(), c.pattern->size().c_str(), kVariantName[v], wrong);
    long total = 0;
    PMPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    *checked += 2 * n;
    return total;
}

/** Bytes the hand unpack writes must be the bytes the receive type covers (a check that the
 *  two descriptions of the message agree in size, independent of the data). */
bool sizes_agree(const Case &c) {
    std::vector<char> ones(c.pattern->pack_bytes(), static_cast<char>(0xff));
    Region zero(c.pattern->region_bytes());
    std::fill(zero.words.begin(), zero.words.end(), 0);
    c.pattern->unpack(ones.data(), zero.data());
    size_t written = 0;
    for (size_t i = 0; i < c.pattern->region_bytes(); ++i)
        written += zero.data()[i] != 0;
    int type_size;
    MPI_Type_size(c.msg.recv_type, &type_size);
    const size_t want = size_t(type_size) * c.msg.recv_count * (c.pattern->collective() ? c.ranks : 1);
    if (written != want)
        std::fprintf(stderr, "realcode_bench: %s %s: hand unpack writes %zu bytes, the receive type %zu\n",
                     c.pattern->name().c_str(), c.pattern->size().c_str(), written, want);
    return written == want;
}

struct Estimate {
    double median = NAN, lo = NAN, hi = NAN;
};

/** Median with a distribution-free 95% interval (order statistics n/2 -+ 0.98 sqrt(n)). */
Estimate estimate(std::vector<double> v) {
    Estimate e;
    if (v.empty())
        return e;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    e.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    const double half = 0.98 * std::sqrt(static_cast<double>(n));
    const long lo = static_cast<long>(std::floor(n / 2.0 - half)),
               hi = static_cast<long>(std::ceil(n / 2.0 + half));
    e.lo = v[static_cast<size_t>(std::max(0L, lo))];
    e.hi = v[static_cast<size_t>(std::min(static_cast<long>(n) - 1, hi))];
    return e;
}

enum Ratio { KuplHand, PlainHand, KuplPlain, AA, kRatios };
const char *const kRatioName[kRatios] = {"kupl/hand", "plain/hand", "kupl/plain", "plain2/plain"};
const Variant kRatioOf[kRatios][2] = {{Kupl, Hand}, {Plain, Hand}, {Kupl, Plain}, {Plain2, Plain}};

struct Result {
    std::string name, size;
    long payload = 0, hand_bytes = 0;
    int iters = 0, rounds = 0;
    bool verified[kVariants] = {};
    size_t bytes_checked = 0;
    Estimate time[kVariants];
    double min_time[kVariants] = {};
    Estimate ratio[kRatios];
    const char *verdict = "n/a";
};

std::string option(int argc, char **argv, const char *name, const char *fallback) {
    const size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return fallback;
}
bool flag(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return true;
    return false;
}

void json_estimate(FILE *f, const Estimate &e) {
    if (std::isnan(e.median))
        std::fprintf(f, "null");
    else
        std::fprintf(f, "{\"median\": %.6g, \"lo\": %.6g, \"hi\": %.6g}", e.median, e.lo, e.hi);
}

void write_json(const char *file, const Setup &s, int rounds, double target_us,
                const std::vector<Result> &results) {
    FILE *f = std::fopen(file, "w");
    if (!f) {
        std::fprintf(stderr, "realcode_bench: cannot write %s\n", file);
        return;
    }
    std::fprintf(
        f, "{\n  \"path\": \"%s\",\n  \"kupl_available\": %s,\n  \"rounds\": %d,\n  \"target_us\": %g,\n",
        path_name(s.path), s.available[Kupl] ? "true" : "false", rounds, target_us);
    std::fprintf(f, "  \"cases\": [\n");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        std::fprintf(
            f,
            "    {\"pattern\": \"%s\", \"size\": \"%s\", \"payload_bytes\": %ld, \"hand_bytes\": %ld, "
            "\"iters\": %d, \"rounds\": %d, \"bytes_checked\": %zu, \"verdict\": \"%s\",\n      "
            "\"verified\": {",
            r.name.c_str(), r.size.c_str(), r.payload, r.hand_bytes, r.iters, r.rounds, r.bytes_checked,
            r.verdict);
        for (int v = 0; v < kVariants; ++v)
            std::fprintf(f, "%s\"%s\": %s", v ? ", " : "", kVariantName[v],
                         !s.available[v] ? "null"
                         : r.verified[v] ? "true"
                                         : "false");
        std::fprintf(f, "},\n      \"time_us\": {");
        for (int v = 0; v < kVariants; ++v) {
            std::fprintf(f, "%s\"%s\": ", v ? ", " : "", kVariantName[v]);
            json_estimate(f, r.time[v]);
        }
        std::fprintf(f, "},\n      \"min_us\": {");
        for (int v = 0; v < kVariants; ++v) {
            if (s.available[v])
                std::fprintf(f, "%s\"%s\": %.6g", v ? ", " : "", kVariantName[v], r.min_time[v]);
            else
                std::fprintf(f, "%s\"%s\": null", v ? ", " : "", kVariantName[v]);
        }
        std::fprintf(f, "},\n      \"ratio\": {");
        for (int k = 0; k < kRatios; ++k) {
            std::fprintf(f, "%s\"%s\": ", k ? ", " : "", kRatioName[k]);
            json_estimate(f, r.ratio[k]);
        }
        std::fprintf(f, "}}%s\n", i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != 2) {
        if (rank == 0)
            std::fprintf(stderr, "realcode_bench: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (flag(argc, argv, "--help")) {
        if (rank == 0)
            std::printf(
                "usage: mpirun -np 2 realcode_bench [--rounds=N] [--target-us=T] [--sizes=0,1,2,3]\n"
                "         [--only=SUBSTRING] [--path=auto|toggle|pmpi] [--json=FILE] [--require-kupl]\n");
        MPI_Finalize();
        return 0;
    }
    int rounds = std::atoi(option(argc, argv, "--rounds", "100").c_str());
    const double target_us = std::atof(option(argc, argv, "--target-us", "200").c_str());
    // --sizes=0,1,...: size indices (0 = smallest of each pattern); default all.
    unsigned size_mask = 0;
    for (char ch : option(argc, argv, "--sizes", "0,1,2,3"))
        if (ch >= '0' && ch <= '9')
            size_mask |= 1u << (ch - '0');
    const std::string only = option(argc, argv, "--only", "");
    const std::string json = option(argc, argv, "--json", "");
    const Setup setup = make_setup(option(argc, argv, "--path", "auto"));
    const int warmup_rounds = 2;
    rounds = std::max(rounds, 1);

    if (rank == 0) {
        std::printf(
            "realcode_bench: path %s (%s); %d rounds per case, samples of ~%.0f us\n", path_name(setup.path),
            setup.path == Path::Toggle ? "kupl_mpi_set_enabled switches the interposer per variant"
            : setup.path == Path::Pmpi ? "no kupl_mpi_set_enabled: hand/plain call PMPI_* directly"
                                       : "no interposer in this process: the kupl variant is unavailable",
            rounds, target_us);
        std::printf("%-16s %-12s %8s %5s %9s %9s %9s %9s  %-18s %-18s %-18s %-18s %s\n", "pattern", "size",
                    "payload", "iters", "hand_us", "plain_us", "kupl_us", "plain2", "kupl/hand [95%]",
                    "plain/hand [95%]", "kupl/plain [95%]", "A/A [95%]", "verdict");
    }
    if (setup.path == Path::None && flag(argc, argv, "--require-kupl")) {
        if (rank == 0)
            std::fprintf(stderr,
                         "realcode_bench: --require-kupl but the interposed variant is unavailable\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    // Rotating orders: the four cyclic shifts of H P K A, forwards and backwards, so each variant
    // runs in each position and after each other variant equally often.
    int orders[8][kVariants];
    for (int o = 0; o < 8; ++o)
        for (int k = 0; k < kVariants; ++k)
            orders[o][k] = o < 4 ? (o + k) % kVariants : (o + kVariants - k) % kVariants;

    std::vector<Result> results;
    long failures = 0;
    uint64_t verify_round = 1;
    for (auto &pattern : realcode::make_patterns(size_mask, ranks)) {
        if (!only.empty() && (pattern->name() + " " + pattern->size()).find(only) == std::string::npos)
            continue;
        Region src(pattern->region_bytes()), dst(pattern->region_bytes());
        Case c{pattern.get(), {}, {}, {}, src.data(), dst.data(), rank, ranks};
        c.msg = pattern->make_types(c.src, c.dst);
        c.pack_out.resize(pattern->pack_bytes());
        c.pack_in.resize(pattern->pack_bytes());

        Result r;
        r.name = pattern->name();
        r.size = pattern->size();
        int type_size;
        MPI_Type_size(c.msg.send_type, &type_size);
        r.payload = static_cast<long>(type_size) * c.msg.send_count * (pattern->collective() ? ranks : 1);
        r.hand_bytes = static_cast<long>(pattern->pack_bytes());
        bool ok = sizes_agree(c);
        int agree = ok, all_agree = 0;
        PMPI_Allreduce(&agree, &all_agree, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_agree)
            ++failures;

        // Verify every variant, then again after the timing (with other data).
        bool verified[kVariants] = {true, true, true, true};
        auto verify_all = [&] {
            for (int v = 0; v < kVariants; ++v)
                if (setup.available[v] && verify(c, setup, static_cast<Variant>(v), verify_round++, src, dst,
                                                 &r.bytes_checked) != 0)
                    verified[v] = false;
        };
        verify_all();

        // Iterations per sample: enough exchanges for ~target_us (rank 0 decides, from the hand variant).
        select(setup, Hand);
        c.exchange(setup.calls[Hand], Hand);
        double t0 = now();
        for (int i = 0; i < 3; ++i)
            c.exchange(setup.calls[Hand], Hand);
        int iters = static_cast<int>(std::clamp(target_us * 1e-6 / ((now() - t0) / 3), 1.0, 256.0));
        PMPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
        r.iters = iters;

        std::vector<double> samples[kVariants];
        for (int round = 0; round < rounds + warmup_rounds; ++round) {
            double t[kVariants] = {};
            for (int k = 0; k < kVariants; ++k) {
                const Variant v = static_cast<Variant>(orders[round % 8][k]);
                if (!setup.available[v])
                    continue;
                select(setup, v);
                c.exchange(setup.calls[v], v); // settles the switch and warms this variant's path
                const double start = now();
                for (int i = 0; i < iters; ++i)
                    c.exchange(setup.calls[v], v);
                t[v] = (now() - start) / iters * 1e6;
            }
            if (round >= warmup_rounds)
                for (int v = 0; v < kVariants; ++v)
                    samples[v].push_back(t[v]);
        }
        verify_all();
        select(setup, Kupl); // leave the interposer as a program would find it

        r.rounds = rounds;
        for (int v = 0; v < kVariants; ++v) {
            r.verified[v] = setup.available[v] && verified[v];
            if (setup.available[v] && !verified[v])
                ++failures;
            if (!setup.available[v])
                continue;
            r.time[v] = estimate(samples[v]);
            r.min_time[v] = *std::min_element(samples[v].begin(), samples[v].end());
        }
        for (int k = 0; k < kRatios; ++k) {
            const Variant a = kRatioOf[k][0], b = kRatioOf[k][1];
            if (!setup.available[a] || !setup.available[b])
                continue;
            std::vector<double> q;
            for (size_t i = 0; i < samples[a].size(); ++i)
                q.push_back(samples[a][i] / samples[b][i]);
            r.ratio[k] = estimate(q);
        }
        // Interposer against plain Open MPI, judged by the run's own noise: slower (faster) only if
        // the 95% interval of kupl/plain excludes 1 and its median lies beyond the A/A interval.
        if (setup.available[Kupl]) {
            const Estimate &kp = r.ratio[KuplPlain], &aa = r.ratio[AA];
            r.verdict = kp.lo > 1.0 && kp.median > aa.hi   ? "slower"
                        : kp.hi < 1.0 && kp.median < aa.lo ? "faster"
                                                           : "same";
        }
        if (rank == 0) {
            auto cell = [](const Estimate &e) {
                char b[32];
                if (std::isnan(e.median))
                    std::snprintf(b, sizeof b, "-");
                else
                    std::snprintf(b, sizeof b, "%.2f [%.2f,%.2f]", e.median, e.lo, e.hi);
                return std::string(b);
            };
            std::printf("%-16s %-12s %8ld %5d %9.1f %9.1f %9.1f %9.1f  %-18s %-18s %-18s %-18s %s%s\n",
                        r.name.c_str(), r.size.c_str(), r.payload, r.iters, r.time[Hand].median,
                        r.time[Plain].median, r.time[Kupl].median, r.time[Plain2].median,
                        cell(r.ratio[KuplHand]).c_str(), cell(r.ratio[PlainHand]).c_str(),
                        cell(r.ratio[KuplPlain]).c_str(), cell(r.ratio[AA]).c_str(), r.verdict,
                        (verified[Hand] && verified[Plain] && verified[Kupl] && verified[Plain2] && all_agree)
                            ? ""
                            : "  VERIFY-FAILED");
            std::fflush(stdout);
        }
        results.push_back(r);
        const bool one_type = c.msg.recv_type == c.msg.send_type;
        MPI_Type_free(&c.msg.send_type);
        if (!one_type)
            MPI_Type_free(&c.msg.recv_type);
    }

    if (rank == 0) {
        // Geometric means over the cases of the per-case medians.
        std::printf("geometric means over %zu cases:", results.size());
        for (int k = 0; k < kRatios; ++k) {
            double sum = 0;
            int n = 0;
            for (const Result &r : results)
                if (!std::isnan(r.ratio[k].median))
                    sum += std::log(r.ratio[k].median), ++n;
            if (n)
                std::printf("  %s %.3f", kRatioName[k], std::exp(sum / n));
        }
        std::printf("\n");
        size_t checked = 0;
        for (const Result &r : results)
            checked += r.bytes_checked;
        std::printf("verification: %s (%zu cases, %zu region bytes compared on rank 0)\n",
                    failures ? "FAILED" : "all variants' bytes verified", results.size(), checked);
        if (!json.empty())
            write_json(json.c_str(), setup, rounds, target_us, results);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
