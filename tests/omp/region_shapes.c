// Eight target-region shapes (teams / distribute / parallel / simd combined or nested, with and
// without num_teams and thread_limit), each counting every iteration, launched from one of
// three places: the initial thread (the region runs there), `nowait` (a hidden-helper thread
// launches it; ours runs it on a KUPL executor) and a thread of a host `parallel` (the same).
// LLVM's stock plugin runs every region on its launching thread and, under `nowait`, loses 7 of
// every 8 iterations of each `distribute` shape (its `teams` then runs nested in an OpenMP
// team, which libomp does not support; llvm/llvm-project#63298 reports that nesting failing
// with "OMP: Error #132"); with
// OMP_TEST_EXPECT_PLUGIN=stock this program reports that wrong answer (and, from the initial
// thread, checks that the stock plugin is right there too).
#include "omp_test.h"

enum { N = 100000 };
static int hits[N];

#define DO_PRAGMA(text) _Pragma(#text)

// A shape as a function: its construct, with `extra` (empty or `nowait`) among its clauses.
// One construct per line: clang names a region's entry after its source line, so two regions
// expanded on one line would share an entry.
#define SHAPE(function, construct, extra)                                                                    \
    static void function(void) {                                                                             \
        DO_PRAGMA(omp construct map(tofrom : hits) extra)                                                    \
        for (int i = 0; i < N; ++i)                                                                          \
            hits[i] += 1;                                                                                    \
        DO_PRAGMA(omp taskwait)                                                                              \
    }
// The same for a construct with a loop construct nested inside it.
#define NESTED_SHAPE(function, construct, inner, extra)                                                      \
    static void function(void) {                                                                             \
        DO_PRAGMA(omp construct map(tofrom : hits) extra)                                                    \
        DO_PRAGMA(omp inner)                                                                                 \
        for (int i = 0; i < N; ++i)                                                                          \
            hits[i] += 1;                                                                                    \
        DO_PRAGMA(omp taskwait)                                                                              \
    }

SHAPE(tdpf, target teams distribute parallel for, )
SHAPE(tdpf_nowait, target teams distribute parallel for, nowait)
SHAPE(one_team, target teams distribute parallel for num_teams(1), )
SHAPE(one_team_nowait, target teams distribute parallel for num_teams(1), nowait)
NESTED_SHAPE(one_team_nested, target teams num_teams(1), distribute parallel for, )
NESTED_SHAPE(one_team_nested_nowait, target teams num_teams(1), distribute parallel for, nowait)
SHAPE(td, target teams distribute, )
SHAPE(td_nowait, target teams distribute, nowait)
SHAPE(tpf, target parallel for, )
SHAPE(tpf_nowait, target parallel for, nowait)
SHAPE(limited, target teams distribute parallel for num_teams(3) thread_limit(2), )
SHAPE(limited_nowait, target teams distribute parallel for num_teams(3) thread_limit(2), nowait)
NESTED_SHAPE(target_pf, target, parallel for, )
NESTED_SHAPE(target_pf_nowait, target, parallel for, nowait)
SHAPE(tds, target teams distribute simd, )
SHAPE(tds_nowait, target teams distribute simd, nowait)

static const struct {
    const char *name;
    void (*run)(void), (*run_nowait)(void);
} shapes[] = {
    {"target teams distribute parallel for", tdpf, tdpf_nowait},
    {"... num_teams(1)", one_team, one_team_nowait},
    {"target teams num_teams(1) + distribute parallel for", one_team_nested, one_team_nested_nowait},
    {"target teams distribute", td, td_nowait},
    {"target parallel for", tpf, tpf_nowait},
    {"... num_teams(3) thread_limit(2)", limited, limited_nowait},
    {"target + parallel for", target_pf, target_pf_nowait},
    {"target teams distribute simd", tds, tds_nowait},
};

/// argv[1]: "initial", "nowait" or "parallel" (launched by one thread of a 2-thread team).
int main(int argc, char **argv) {
    CHECK(argc == 2 &&
              (!strcmp(argv[1], "initial") || !strcmp(argv[1], "nowait") || !strcmp(argv[1], "parallel")),
          "usage: %s initial|nowait|parallel", argv[0]);
    omp_test_begin();
    const int nowait = !strcmp(argv[1], "nowait"), in_parallel = !strcmp(argv[1], "parallel");
    int wrong = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        memset(hits, 0, sizeof hits);
        if (in_parallel) {
#pragma omp parallel num_threads(2)
#pragma omp single
            shapes[s].run();
        } else {
            (nowait ? shapes[s].run_nowait : shapes[s].run)();
        }
        long once = 0;
        for (int i = 0; i < N; ++i)
            once += hits[i] == 1;
        if (once != N) {
            printf("%s (%s): %ld of %d iterations ran once\n", shapes[s].name, argv[1], once, N);
            ++wrong;
        }
    }
    // From the initial thread both plugins must be right; elsewhere only ours.
    if (!omp_test_expect_kupl() && strcmp(argv[1], "initial") != 0) {
        CHECK(wrong > 0, "the stock plugin was expected to lose iterations here");
        printf("stock plugin lost iterations in %d shapes\n", wrong);
        return omp_test_end();
    }
    CHECK(wrong == 0, "%d shapes lost or repeated iterations", wrong);
    return omp_test_end();
}
