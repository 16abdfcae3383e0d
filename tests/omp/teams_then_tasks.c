// A libomp 14 limitation both plugins share: once a `teams` region with a nested `parallel`
// (`target teams distribute parallel for`, run on the host) has run on a thread, that thread's
// next `parallel` whose threads run explicit tasks never leaves its closing barrier. The same
// program without the `teams` region, or with `KMP_HOT_TEAMS_MAX_LEVEL=0` (no nested hot teams
// in libomp), completes. ctest runs it both ways, with each plugin: the hang is reported after
// LIMIT seconds (argument 1), as a verdict rather than a ctest timeout, so the test notices the
// day a libomp update fixes it and omp_plugin/README.md must say so.
#include "omp_test.h"

#include <signal.h>
#include <unistd.h>

enum { N = 1000, ROUNDS = 5 };

static void on_alarm(int sig) {
    (void)sig;
    static const char line[] = "host tasks after a teams region hung\n";
    ssize_t ignored = write(STDOUT_FILENO, line, sizeof line - 1);
    (void)ignored;
    _exit(2);
}

int main(int argc, char **argv) {
    omp_test_begin();
    signal(SIGALRM, on_alarm);
    alarm(argc > 1 ? (unsigned)atoi(argv[1]) : 20);
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    CHECK(a && b, "arrays");
    for (int i = 0; i < N; ++i)
        a[i] = i;
#pragma omp target teams distribute parallel for map(tofrom : a [0:N])
    for (int i = 0; i < N; ++i)
        a[i] += 1;
    for (int round = 0; round < ROUNDS; ++round) {
#pragma omp parallel num_threads(2)
#pragma omp single
        {
#pragma omp task depend(out : b[0])
            for (int i = 0; i < N; ++i)
                b[i] = a[i] + round;
#pragma omp task depend(inout : b[0])
            for (int i = 0; i < N; ++i)
                b[i] *= 2;
#pragma omp taskwait
        }
        for (int i = 0; i < N; ++i)
            CHECK(b[i] == 2.0 * (i + 1 + round), "round %d: b[%d] = %f", round, i, b[i]);
    }
    free(b);
    free(a);
    return omp_test_end();
}
