// Many target update nowait tasks at once: chunks of one mapped array (small ones copied inline,
// large ones by the copy engine) go to the device, are transformed, and come back, every
// chunk its own nowait/depend chain; then a burst of update-only tasks in both directions.
#include "omp_test.h"

enum { CHUNKS = 48, ROUNDS = 3 };

static size_t chunk_len(int k) {
    return (k % 3 == 0) ? (1 << 17) : (k % 3 == 1) ? 1024 : 8;
} // doubles

int main(void) {
    omp_test_begin();
    size_t offset[CHUNKS + 1];
    offset[0] = 0;
    for (int k = 0; k < CHUNKS; ++k)
        offset[k + 1] = offset[k] + chunk_len(k);
    const size_t total = offset[CHUNKS];
    double *a = malloc(total * sizeof(double));
#pragma omp target enter data map(alloc : a [0:total])

    for (int round = 0; round < ROUNDS; ++round) {
        for (size_t i = 0; i < total; ++i)
            a[i] = (double)(i % 1000) + round;
        for (int k = 0; k < CHUNKS; ++k) {
            const size_t first = offset[k], len = chunk_len(k);
#pragma omp target update to(a [first:len]) nowait depend(out : a[first])
#pragma omp target teams distribute parallel for nowait depend(inout : a[first])
            for (size_t i = first; i < first + len; ++i)
                a[i] = a[i] * 2 + 1;
#pragma omp target update from(a [first:len]) nowait depend(in : a[first])
        }
#pragma omp taskwait
        for (size_t i = 0; i < total; ++i)
            CHECK(a[i] == ((double)(i % 1000) + round) * 2 + 1, "round %d element %zu: %f", round, i, a[i]);
    }

    // Updates only: all chunks out at once, host cleared, all chunks back at once.
    for (size_t i = 0; i < total; ++i)
        a[i] = (double)i;
    for (int k = 0; k < CHUNKS; ++k) {
        const size_t first = offset[k], len = chunk_len(k);
#pragma omp target update to(a [first:len]) nowait
    }
#pragma omp taskwait
    memset(a, 0, total * sizeof(double));
    for (int k = 0; k < CHUNKS; ++k) {
        const size_t first = offset[k], len = chunk_len(k);
#pragma omp target update from(a [first:len]) nowait
    }
#pragma omp taskwait
    for (size_t i = 0; i < total; ++i)
        CHECK(a[i] == (double)i, "element %zu came back as %f", i, a[i]);

#pragma omp target exit data map(delete : a [0:total])
    free(a);
    return omp_test_end();
}
