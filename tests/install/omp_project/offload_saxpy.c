/* Offloads y = a*x + y with `target update ... nowait depend` and a `target nowait` region, and
 * checks every element. Exit status 1 on a wrong result or when no offload device is present. */
#include <omp.h>
#include <stdio.h>

enum { N = 1 << 16 };
static float x[N], y[N];

int main(void) {
    if (omp_get_num_devices() < 1) {
        fprintf(stderr, "offload_saxpy: no offload device\n");
        return 1;
    }
    for (int i = 0; i < N; ++i) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
#pragma omp target enter data map(alloc : x[0:N], y[0:N])
#pragma omp target update to(x[0:N], y[0:N]) nowait depend(out : x, y)
#pragma omp target teams distribute parallel for nowait depend(inout : x, y)
    for (int i = 0; i < N; ++i)
        y[i] = 2.0f * x[i] + y[i];
#pragma omp target update from(y[0:N]) nowait depend(in : y)
#pragma omp taskwait
#pragma omp target exit data map(delete : x[0:N], y[0:N])
    for (int i = 0; i < N; ++i)
        if (y[i] != 2.0f * (float)i + 1.0f) {
            fprintf(stderr, "offload_saxpy: y[%d] = %g, expected %g\n", i, y[i], 2.0f * i + 1.0f);
            return 1;
        }
    printf("offload_saxpy: %d elements right\n", N);
    return 0;
}
