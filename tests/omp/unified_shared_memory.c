// `#pragma omp requires unified_shared_memory`: regions use host memory directly (no map, no
// copy, not "present"), also under nowait; a `close` map still makes a device copy.
#include "omp_test.h"

#pragma omp requires unified_shared_memory

enum { N = 1 << 16 };

int main(void) {
    omp_test_begin();
    double *a = malloc(N * sizeof(double));
    for (int i = 0; i < N; ++i)
        a[i] = i;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < N; ++i)
        a[i] *= 2;
    for (int i = 0; i < N; ++i)
        CHECK(a[i] == 2.0 * i, "a[%d]=%f", i, a[i]);
    CHECK(!omp_target_is_present(a, 0), "host memory reported present under USM");

#pragma omp target teams distribute parallel for nowait depend(inout : a[0])
    for (int i = 0; i < N; ++i)
        a[i] += 1;
#pragma omp target nowait depend(inout : a[0])
    a[0] = -5;
#pragma omp taskwait
    CHECK(a[0] == -5 && a[1] == 3 && a[N - 1] == 2.0 * (N - 1) + 1, "nowait regions on host memory");

    // close: a real device copy, so a write that is not mapped back stays on the device.
    double *b = malloc(N * sizeof(double));
    for (int i = 0; i < N; ++i)
        b[i] = 1;
#pragma omp target map(close, to : b [0:N])
    b[7] = 99;
    CHECK(b[7] == 1, "close map wrote through to the host");
    free(a);
    free(b);
    return omp_test_end();
}
