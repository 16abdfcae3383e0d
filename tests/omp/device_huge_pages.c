// Large device blocks are backed by transparent huge pages (KUPL_OMP_HUGE_PAGES, default on):
// mapping 64 MiB must grow the process's AnonHugePages when the kernel's THP mode allows it
// (Debian's default is `madvise`, where only advised memory gets them), and must not when run
// with the argument "off" (KUPL_OMP_HUGE_PAGES=0). The data must come back intact either way.
#include "omp_test.h"

static long anon_huge_pages_kib(void) {
    FILE *file = fopen("/proc/self/smaps_rollup", "r");
    CHECK(file != NULL, "cannot read /proc/self/smaps_rollup");
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, file))
        if (!strncmp(line, "AnonHugePages:", 14))
            kib = atol(line + 14);
    fclose(file);
    CHECK(kib >= 0, "no AnonHugePages line");
    return kib;
}

static int thp_mode_is_never(void) {
    FILE *file = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (!file)
        return 1;
    if (!fgets(line, sizeof line, file))
        line[0] = '\0';
    fclose(file);
    return strstr(line, "[never]") != NULL || line[0] == '\0';
}

int main(int argc, char **argv) {
    omp_test_begin();
    const int off = argc > 1 && !strcmp(argv[1], "off");
    const size_t n = (size_t)8 << 20; // 64 MiB of doubles
    double *a = malloc(n * sizeof(double));
    CHECK(a != NULL, "malloc");
    for (size_t i = 0; i < n; ++i)
        a[i] = (double)(i % 1000);
    const long before = anon_huge_pages_kib();
#pragma omp target enter data map(to : a [0:n])
    const long grown = anon_huge_pages_kib() - before;
#pragma omp target teams distribute parallel for
    for (size_t i = 0; i < n; ++i)
        a[i] = 2 * a[i] + 1;
#pragma omp target exit data map(from : a [0:n])
    for (size_t i = 0; i < n; ++i)
        CHECK(a[i] == 2 * (double)(i % 1000) + 1, "a[%zu] = %g", i, a[i]);
    if (off)
        CHECK(grown == 0, "KUPL_OMP_HUGE_PAGES=0, yet huge pages grew by %ld KiB", grown);
    else if (thp_mode_is_never())
        printf("transparent huge pages are off on this machine: nothing to check\n");
    else
        CHECK(grown >= 2048, "a 64 MiB device block got no huge page (AnonHugePages +%ld KiB)", grown);
    printf("device block: AnonHugePages +%ld KiB\n", grown);
    free(a);
    return omp_test_end();
}
