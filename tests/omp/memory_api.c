// omp_target_alloc (all kinds) / free / memcpy / memcpy_rect / is_present / associate_ptr on
// two devices (KUPL_OMP_NUM_DEVICES=2): every byte checked after every copy.
#include "omp_test.h"

#include <unistd.h>

void *llvm_omp_target_alloc_host(size_t size, int device_num);
void *llvm_omp_target_alloc_shared(size_t size, int device_num);
void *llvm_omp_target_alloc_device(size_t size, int device_num);

enum { N = 1 << 18, R = 16, C = 32 };

/// Locked memory of this process in KiB (VmLck of /proc/self/status), -1 if unknown.
static long locked_kib(void) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
            break;
    if (status)
        fclose(status);
    return kib;
}

static void copies(int host) {
    unsigned char *src = malloc(N), *back = malloc(N);
    for (int i = 0; i < N; ++i)
        src[i] = (unsigned char)(i * 7 + 3);
    unsigned char *d0 = omp_target_alloc(N, 0), *d1 = omp_target_alloc(N, 1);
    CHECK(d0 && d1, "omp_target_alloc failed");
    CHECK(omp_target_memcpy(d0, src, N, 0, 0, 0, host) == 0, "host to device 0");
    CHECK(omp_target_memcpy(d1, d0, N, 0, 0, 1, 0) == 0, "device 0 to device 1");
    memset(back, 0, N);
    CHECK(omp_target_memcpy(back, d1, N, 0, 0, host, 1) == 0, "device 1 to host");
    CHECK(memcmp(back, src, N) == 0, "bytes differ after host -> dev0 -> dev1 -> host");
    // An offset copy: 1000 bytes from offset 5 to offset 77.
    memset(back, 0, N);
    CHECK(omp_target_memcpy(back, d0, 1000, 77, 5, host, 0) == 0, "offset copy");
    CHECK(memcmp(back + 77, src + 5, 1000) == 0 && back[76] == 0 && back[1077] == 0, "offset copy bytes");
    omp_target_free(d0, 0);
    omp_target_free(d1, 1);
    free(src);
    free(back);
}

static void rect(int host) {
    static double h[R][C], out[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            h[r][c] = r * 1000 + c;
    double *d = omp_target_alloc(sizeof h, 0);
    CHECK(d, "alloc");
    CHECK(omp_target_memcpy(d, h, sizeof h, 0, 0, 0, host) == 0, "whole matrix to device");
    // Device block rows 3..8, columns 5..14 -> host out at rows 1.., columns 2...
    const size_t volume[2] = {6, 10}, dims[2] = {R, C};
    const size_t dst_off[2] = {1, 2}, src_off[2] = {3, 5};
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            out[r][c] = -1;
    CHECK(omp_target_memcpy_rect(out, d, sizeof(double), 2, volume, dst_off, src_off, dims, dims, host, 0) ==
              0,
          "memcpy_rect");
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            const int inside = r >= 1 && r < 7 && c >= 2 && c < 12;
            const double want = inside ? (r + 2) * 1000 + (c + 3) : -1;
            CHECK(out[r][c] == want, "rect out[%d][%d]=%f want %f", r, c, out[r][c], want);
        }
    omp_target_free(d, 0);
}

static void present_and_associate(int host) {
    double *a = malloc(N * sizeof(double));
    for (int i = 0; i < N; ++i)
        a[i] = i;
    CHECK(!omp_target_is_present(a, 0), "present before mapping");
    double *d = omp_target_alloc(N * sizeof(double), 0);
    CHECK(omp_target_memcpy(d, a, N * sizeof(double), 0, 0, 0, host) == 0, "copy");
    CHECK(omp_target_associate_ptr(a, d, N * sizeof(double), 0, 0) == 0, "associate");
    CHECK(omp_target_is_present(a, 0) && !omp_target_is_present(a, 1), "present on 0 only");
    // The region uses the associated block: no copy in or out.
#pragma omp target teams distribute parallel for map(tofrom : a [0:N]) device(0)
    for (int i = 0; i < N; ++i)
        a[i] = -a[i];
    CHECK(a[5] == 5, "associated data was copied back");
    double *back = malloc(N * sizeof(double));
    CHECK(omp_target_memcpy(back, d, N * sizeof(double), 0, 0, host, 0) == 0, "copy back");
    for (int i = 0; i < N; ++i)
        CHECK(back[i] == -i, "device block[%d]=%f", i, back[i]);
    CHECK(omp_target_disassociate_ptr(a, 0) == 0, "disassociate");
    CHECK(!omp_target_is_present(a, 0), "present after disassociate");
    omp_target_free(d, 0);
    free(a);
    free(back);
}

static void kinds(void) {
    const size_t bytes = 1 << 20;
    const long locked_before = locked_kib();
    double *h = llvm_omp_target_alloc_host(bytes, 0);
    double *s = llvm_omp_target_alloc_shared(bytes, 0);
    double *d = llvm_omp_target_alloc_device(bytes, 1);
    CHECK(h && s && d, "alloc by kind");
    if (geteuid() == 0 && locked_before >= 0)
        CHECK(locked_kib() - locked_before >= (long)(bytes >> 10),
              "host kind not pinned: VmLck %ld -> %ld kB", locked_before, locked_kib());
    const int n = bytes / sizeof(double);
    for (int i = 0; i < n; ++i)
        h[i] = s[i] = i;
#pragma omp target teams distribute parallel for is_device_ptr(h, s) device(0)
    for (int i = 0; i < n; ++i)
        s[i] += h[i];
#pragma omp target teams distribute parallel for is_device_ptr(d) device(1)
    for (int i = 0; i < n; ++i)
        d[i] = 2 * i;
    for (int i = 0; i < n; ++i)
        CHECK(s[i] == 2 * i && d[i] == 2 * i, "kind data at %d: %f %f", i, s[i], d[i]);
    omp_target_free(h, 0);
    omp_target_free(s, 0);
    omp_target_free(d, 1);
    CHECK(locked_kib() <= locked_before + 4, "host kind still pinned after free");
}

int main(void) {
    omp_test_begin();
    CHECK(omp_get_num_devices() == 2, "expected 2 devices (KUPL_OMP_NUM_DEVICES=2), got %d",
          omp_get_num_devices());
    const int host = omp_get_initial_device();
    copies(host);
    rect(host);
    present_and_associate(host);
    kinds();
    return omp_test_end();
}
