// OMP_TARGET_OFFLOAD=MANDATORY (set for every test here): regions really run on the device.
// A region launched from the initial thread runs there, as with the stock plugin (libomp is
// right at nesting level 0 and a hand-off would only cost time); a `nowait` region, launched
// from a hidden-helper thread, runs on a plugin thread outside OpenMP (nesting level 0 there,
// where on the helper it would be 1). Device information is printed (ctest checks the
// "kupl-omp device" lines).
#include "omp_test.h"

#include <pthread.h>

extern int __tgt_print_device_info(long long device_id);

int main(void) {
    omp_test_begin();
    const char *policy = getenv("OMP_TARGET_OFFLOAD");
    CHECK(policy && !strcmp(policy, "MANDATORY"), "run me with OMP_TARGET_OFFLOAD=MANDATORY");
    const int ndev = omp_get_num_devices();
    CHECK(ndev == 2, "expected 2 devices (KUPL_OMP_NUM_DEVICES=2), got %d", ndev);
    for (int dev = 0; dev < ndev; ++dev) {
        int initial = -1;
        unsigned long region_thread = 0;
#pragma omp target map(from : initial, region_thread) device(dev)
        {
            initial = omp_is_initial_device();
            region_thread = (unsigned long)pthread_self();
        }
        CHECK(initial == 0, "device %d region ran as the initial device", dev);
        CHECK(region_thread == (unsigned long)pthread_self(),
              "device %d: a region from the initial thread ran on another thread", dev);
        int level = -1;
#pragma omp target nowait map(from : initial, region_thread, level) device(dev)
        {
            initial = omp_is_initial_device();
            region_thread = (unsigned long)pthread_self();
            level = omp_get_level();
        }
#pragma omp taskwait
        CHECK(initial == 0, "device %d nowait region ran as the initial device", dev);
        CHECK(region_thread != (unsigned long)pthread_self() && level == 0,
              "device %d: a nowait region ran on an OpenMP thread (nesting level %d)", dev, level);
        __tgt_print_device_info(dev);
    }
    return omp_test_end();
}
