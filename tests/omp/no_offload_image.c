// Built by clang-14 with -fopenmp but without -fopenmp-targets: the program has no device image,
// so its target region runs on the host, and kupl-omp-run must say so before it starts.
// Exits 0 (silently) only if the region did run on the host.
#include <omp.h>
#include <stdio.h>

int main(void) {
    int on_host = 0;
#pragma omp target map(from : on_host)
    on_host = omp_is_initial_device();
    if (!on_host)
        fprintf(stderr, "FAIL: a program without a device image offloaded its region\n");
    return on_host ? 0 : 1;
}
