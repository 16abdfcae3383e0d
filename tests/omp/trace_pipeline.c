// An OpenMP pipeline traced (kupl-omp-run --trace): chunks sent with `target update to nowait
// depend(out)`, computed by `target teams ... nowait depend(inout)`, fetched by `target update from
// nowait depend(in)`; tests/trace/check_trace.py omp_pipeline checks the trace. Results checked.
#include "omp_test.h"

enum { CHUNKS = 4, N = 1 << 16 };

int main(void) {
    omp_test_begin();
    double *a = malloc(CHUNKS * N * sizeof(double));
    CHECK(a != NULL, "malloc");
    for (int i = 0; i < CHUNKS * N; ++i)
        a[i] = i;
#pragma omp target enter data map(alloc : a [0:CHUNKS * N])
    for (int c = 0; c < CHUNKS; ++c) {
        double *chunk = a + c * N;
#pragma omp target update to(chunk [0:N]) nowait depend(out : chunk[0])
#pragma omp target teams distribute parallel for nowait depend(inout : chunk[0])
        for (int i = 0; i < N; ++i)
            chunk[i] = chunk[i] * 2 + 1;
#pragma omp target update from(chunk [0:N]) nowait depend(in : chunk[0])
    }
#pragma omp taskwait
    for (int i = 0; i < CHUNKS * N; ++i)
        CHECK(a[i] == (double)i * 2 + 1, "element %d: %f", i, a[i]);
#pragma omp target exit data map(delete : a [0:CHUNKS * N])
    free(a);
    return omp_test_end();
}
