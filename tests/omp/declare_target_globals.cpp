// declare target globals and global constructors: each device loads its own copy of the image,
// runs the constructors of its globals, and keeps its globals apart from the host's and from
// the other device's (run with KUPL_OMP_NUM_DEVICES=2).
#include "omp_test.h"

enum { N = 256 };

#pragma omp declare target
struct Counter {
    int value;
    Counter() : value(42) {}
};
Counter counter;
int table[N];
int scale = 3;
#pragma omp end declare target

static int device_counter(int dev) {
    int value = -1;
#pragma omp target map(from : value) device(dev)
    value = counter.value++;
    return value;
}

int main() {
    omp_test_begin();
    CHECK(omp_get_num_devices() == 2, "expected 2 devices (KUPL_OMP_NUM_DEVICES=2), got %d",
          omp_get_num_devices());

    // The constructor ran once per device image; the increments stay on their device.
    CHECK(device_counter(0) == 42, "device 0 counter not constructed");
    CHECK(device_counter(0) == 43, "device 0 counter not kept");
    CHECK(device_counter(1) == 42, "device 1 shares device 0's counter");
    CHECK(counter.value == 42, "host counter changed: %d", counter.value);

    for (int dev = 0; dev < 2; ++dev) {
        for (int i = 0; i < N; ++i)
            table[i] = i + 1000 * dev;
#pragma omp target update to(table) device(dev)
    }
    scale = 5; // host only: devices keep 3
    for (int dev = 0; dev < 2; ++dev) {
#pragma omp target teams distribute parallel for device(dev)
        for (int i = 0; i < N; ++i)
            table[i] *= scale;
    }
    for (int dev = 0; dev < 2; ++dev) {
        memset(table, 0, sizeof table);
#pragma omp target update from(table) device(dev)
        for (int i = 0; i < N; ++i)
            CHECK(table[i] == 3 * (i + 1000 * dev), "device %d table[%d]=%d", dev, i, table[i]);
    }
    return omp_test_end();
}
