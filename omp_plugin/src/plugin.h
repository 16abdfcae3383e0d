// The plugin's process-wide state: the devices (one per NUMA node unless KUPL_OMP_NUM_DEVICES
// says otherwise) and the `requires` flags. Built on first use, never torn down: libomptarget and
// hidden-helper threads may still call in while the process exits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device.h"
#include "numa_topology.h"

namespace kupl_omp {

class Plugin {
  public:
    static Plugin &get();

    int num_devices() const { return static_cast<int>(devices_.size()); }
    /// The device, or null (and a message naming the entry point) for a bad id.
    Device *device(int32_t id, const char *entry_point);

    void set_requires(int64_t flags) { requires_ = flags; }
    int64_t requires_flags() const { return requires_; }

  private:
    Plugin();
    NumaTopology topology_;
    std::vector<std::unique_ptr<Device>> devices_;
    int64_t requires_ = 0;
};

/// Devices asked for by KUPL_OMP_NUM_DEVICES, or default_count if unset or invalid.
int configured_device_count(int default_count);

} // namespace kupl_omp
