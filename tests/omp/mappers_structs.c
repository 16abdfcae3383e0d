// Structs with pointer members and user-defined mappers. After a struct comes back from the
// device, libomptarget restores its host pointer members right after the retrieve call returns:
// a copy that landed later would leave device addresses in host structs.
#include "omp_test.h"

#include <stdint.h>

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

    // Mapper: each struct and its array travel together, both ways; three regions in flight.
    // (Each struct is mapped through the mapper once: libomptarget 14 keeps a stale shadow
    // pointer after unmapping a mapper-mapped struct, so re-mapping the same struct can skip
    // attaching its pointer when the allocator hands back the same block; see README "Limits".)
    enum { VECS = 3 };
    vec_t vs[VECS];
    double *v_host[VECS];
    for (int k = 0; k < VECS; ++k) {
        vs[k] = (vec_t){N, k, malloc(N * sizeof(double))};
        v_host[k] = vs[k].data;
        fill(vs[k].data, N, k);
    }
    for (int k = 0; k < VECS; ++k) {
        vec_t *v = &vs[k];
        // An integer, not a pointer: a pointer would itself be translated to the device copy.
        const uintptr_t host_addr = (uintptr_t)v_host[k];
#pragma omp target map(tofrom : v[0]) nowait
        {
            for (int i = 0; i < v->n; ++i)
                v->data[i] *= 2;
            v->tag +=
                (uintptr_t)v->data != host_addr ? 10 : 1000; // 1000: the region saw host memory, not a copy
        }
    }
#pragma omp taskwait
    for (int k = 0; k < VECS; ++k) {
        CHECK(vs[k].data == v_host[k], "mapper: host pointer of struct %d replaced by %p", k,
              (void *)vs[k].data);
        CHECK(vs[k].tag == k + 10, "mapper: tag of struct %d is %d", k, vs[k].tag);
        for (int i = 0; i < N; ++i)
            CHECK(vs[k].data[i] == 2.0 * (k + i), "mapper: struct %d data[%d]=%f", k, i, vs[k].data[i]);
    }

    // Explicit member maps: the struct and both arrays are mapped per region and come back at
    // its end, the struct last, behind the queued region.
    pair_t p = {malloc(N * sizeof(double)), malloc(N * sizeof(double)), 0};
    double *const x_host = p.x, *const y_host = p.y;
    const uintptr_t x_addr = (uintptr_t)x_host, y_addr = (uintptr_t)y_host;
    fill(p.x, N, 1);
    fill(p.y, N, 0);
    for (int rep = 0; rep < 4; ++rep) {
#pragma omp target map(tofrom : p, p.x [0:N], p.y [0:N]) nowait
        {
            for (int i = 0; i < N; ++i)
                p.y[i] += p.x[i];
            p.steps += (uintptr_t)p.x != x_addr && (uintptr_t)p.y != y_addr
                           ? 1
                           : 1000; // 1000: host memory, not copies
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
    for (int k = 0; k < VECS; ++k)
        free(vs[k].data);
    free(p.x);
    free(p.y);
    return omp_test_end();
}
