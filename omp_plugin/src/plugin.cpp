#include "plugin.h"

#include <string>

#include "plugin_log.h"
#include "support/env_config.h"

namespace kupl_omp {
namespace {
constexpr int kMaxDevices = 256;
}

int configured_device_count(int default_count) {
    return static_cast<int>(
        kupl::env::read_integer("KUPL_OMP_NUM_DEVICES", default_count, 1, kMaxDevices, "devices",
                                (std::to_string(default_count) + " (one per NUMA node)").c_str()));
}

Plugin &Plugin::get() {
    // Leaked on purpose: see the header.
    static Plugin *instance = new Plugin();
    return *instance;
}

Plugin::Plugin() {
    init_info_level_from_env();
    const int count = configured_device_count(topology_.num_nodes());
    for (int id = 0; id < count; ++id)
        devices_.push_back(std::make_unique<Device>(id, id % topology_.num_nodes(), topology_));
}

Device *Plugin::device(int32_t id, const char *entry_point) {
    if (id < 0 || id >= num_devices()) {
        report_error("%s: no device %d (this plugin has %d)", entry_point, id, num_devices());
        return nullptr;
    }
    return devices_[static_cast<size_t>(id)].get();
}

} // namespace kupl_omp
