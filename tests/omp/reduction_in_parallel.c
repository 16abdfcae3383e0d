// The shape of llvm/llvm-project#70744: each thread of a host `parallel for` meets a
// `target teams distribute parallel for reduction(+ : a[i])`, offloaded to the host. The issue
// reports that this hangs with the host offload plugin. With LLVM 14's stock plugin we see no
// hang but wrong sums: every a[i] comes out 500 instead of 1000, in every round (the issue's own
// program, N = 8, prints 4 instead of 8). Ours runs these regions on KUPL executor threads and
// must give every a[i] == N, round after round.
// With OMP_TEST_EXPECT_PLUGIN=stock it reports the stock plugin's outcome (a hang after
// LIMIT_S seconds is reported too, rather than left to ctest's timeout).
#include "omp_test.h"

#include <signal.h>
#include <unistd.h>

enum { OUTER = 8, N = 1000, ROUNDS = 20, LIMIT_S = 20 };

static void on_alarm(int sig) {
    (void)sig;
    static const char line[] = "reductions inside parallel hung\n";
    ssize_t ignored = write(STDOUT_FILENO, line, sizeof line - 1);
    (void)ignored;
    _exit(2);
}

int main(void) {
    omp_test_begin();
    signal(SIGALRM, on_alarm);
    alarm(LIMIT_S); // a hang is a verdict, not a ctest timeout
    int a[OUTER];
    int wrong = 0;
    for (int round = 0; round < ROUNDS; ++round) {
#pragma omp parallel for num_threads(2)
        for (int i = 0; i < OUTER; i++) {
            a[i] = 0;
#pragma omp target teams distribute parallel for reduction(+ : a[i])
            for (int j = 0; j < N; j++)
                a[i] += 1;
        }
        for (int i = 0; i < OUTER; i++)
            wrong += a[i] != N;
        if (round == 0 || wrong)
            printf("round %d: a[0] = %d, a[%d] = %d\n", round, a[0], OUTER - 1, a[OUTER - 1]);
    }
    alarm(0);
    if (!omp_test_plugin_is_kupl()) {
        printf(wrong ? "stock plugin got wrong reductions\n" : "PASS (stock plugin)\n");
        return 0;
    }
    CHECK(wrong == 0, "%d of %d reductions wrong", wrong, OUTER * ROUNDS);
    return omp_test_end();
}
