// nowait + depend chains that hop across several devices (run with KUPL_OMP_NUM_DEVICES=3):
// each chain sends its buffer to device 0 (+1), back, to device 1 (*2), back, to device 2 (+3),
// back, for several rounds, with all chains in flight at once.
#include "omp_test.h"

enum { CHAINS = 4, ROUNDS = 3, N = 1 << 15 };

int main(void) {
    omp_test_begin();
    const int ndev = omp_get_num_devices();
    CHECK(ndev == 3, "expected 3 devices (KUPL_OMP_NUM_DEVICES=3), got %d", ndev);

    double *bufs[CHAINS];
    for (int c = 0; c < CHAINS; ++c) {
        bufs[c] = malloc(N * sizeof(double));
        for (int i = 0; i < N; ++i)
            bufs[c][i] = i + c;
        for (int d = 0; d < ndev; ++d) {
            double *buf = bufs[c];
#pragma omp target enter data map(alloc : buf [0:N]) device(d)
        }
    }

    for (int round = 0; round < ROUNDS; ++round) {
        for (int c = 0; c < CHAINS; ++c) {
            double *buf = bufs[c];
            for (int d = 0; d < ndev; ++d) {
#pragma omp target update to(buf [0:N]) device(d) nowait depend(inout : buf[0])
#pragma omp target teams distribute parallel for device(d) nowait depend(inout : buf[0])
                for (int i = 0; i < N; ++i)
                    buf[i] = d == 0 ? buf[i] + 1 : d == 1 ? buf[i] * 2 : buf[i] + 3;
#pragma omp target update from(buf [0:N]) device(d) nowait depend(inout : buf[0])
            }
        }
    }
#pragma omp taskwait

    for (int c = 0; c < CHAINS; ++c) {
        for (int i = 0; i < N; ++i) {
            double want = i + c;
            for (int round = 0; round < ROUNDS; ++round)
                want = (want + 1) * 2 + 3;
            CHECK(bufs[c][i] == want, "chain %d element %d: %f want %f", c, i, bufs[c][i], want);
        }
        for (int d = 0; d < ndev; ++d) {
            double *buf = bufs[c];
#pragma omp target exit data map(delete : buf [0:N]) device(d)
            CHECK(!omp_target_is_present(buf, d), "chain %d still on device %d", c, d);
        }
        free(bufs[c]);
    }
    return omp_test_end();
}
