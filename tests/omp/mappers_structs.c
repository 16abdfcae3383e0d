// Structs with pointer members and user-defined mappers. After a struct comes back from the
// device, libomptarget restores its host pointer members right after the retrieve call returns:
// a copy that landed later would leave device addresses in host structs.
#include "omp_test.h"

enum { N = 4096 };

typedef struct {
    int n;
    int tag;
    double *data;
} vec_t;

#pragma omp declare mapper(vec_t v) map(v, v.data [0:v.n])

typedef struct {
    double *x;
    double *y;
    long steps;
} pair_t;

static void fill(double *p, int n, double base) {
    for (int i = 0; i < n; ++i)
        p[i] = base + i;
}

int main(void) {
    omp_test_begin();

    // Mapper: the struct and its array travel together, both ways.
    vec_t v = {N, 0, malloc(N * sizeof(double))};
    double *const v_host = v.data;
    fill(v.data, N, 0);
    for (int rep = 0; rep < 3; ++rep) {
#pragma omp target map(tofrom : v) nowait
        {
            for (int i = 0; i < v.n; ++i)
                v.data[i] *= 2;
            v.tag += 1;
        }
#pragma omp taskwait
        CHECK(v.data == v_host, "mapper: host pointer replaced by %p (rep %d)", (void *)v.data, rep);
        CHECK(v.tag == rep + 1, "mapper: tag %d", v.tag);
    }
    for (int i = 0; i < N; ++i)
        CHECK(v.data[i] == 8.0 * i, "mapper: data[%d]=%f", i, v.data[i]);

    // Explicit member maps: the struct and both arrays are mapped per region and come back at
    // its end, the struct last, behind the queued region.
    pair_t p = {malloc(N * sizeof(double)), malloc(N * sizeof(double)), 0};
    double *const x_host = p.x, *const y_host = p.y;
    fill(p.x, N, 1);
    fill(p.y, N, 0);
    for (int rep = 0; rep < 4; ++rep) {
#pragma omp target map(tofrom : p, p.x [0:N], p.y [0:N]) nowait
        {
            for (int i = 0; i < N; ++i)
                p.y[i] += p.x[i];
            p.steps += 1;
        }
#pragma omp taskwait
        CHECK(p.x == x_host && p.y == y_host, "struct: host pointers replaced (rep %d)", rep);
        CHECK(p.steps == rep + 1, "struct: steps %ld", p.steps);
    }
    for (int i = 0; i < N; ++i)
        CHECK(p.y[i] == i + 4.0 * (1 + i), "struct: y[%d]=%f", i, p.y[i]);

        // A present struct fetched by target update: its pointer members are restored too.
#pragma omp target enter data map(to : p, p.y [0:N])
#pragma omp target nowait
    p.steps = 100;
#pragma omp taskwait
#pragma omp target update from(p) nowait
#pragma omp taskwait
    CHECK(p.steps == 100 && p.y == y_host, "update from: steps %ld, y %p", p.steps, (void *)p.y);
#pragma omp target exit data map(release : p, p.y [0:N])
    free(v.data);
    free(p.x);
    free(p.y);
    return omp_test_end();
}
