// OMP_TARGET_OFFLOAD=MANDATORY (set for every test here): regions really run on the device,
// on a thread that is neither the caller nor an OpenMP thread of the caller's team; device
// information is printed (ctest checks the "kupl-omp device" lines).
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
        CHECK(region_thread != (unsigned long)pthread_self(), "device %d region ran on the calling thread",
              dev);
        __tgt_print_device_info(dev);
    }
    return omp_test_end();
}
