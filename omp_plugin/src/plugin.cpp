#include "plugin.h"

#include <cstdlib>

#include "plugin_log.h"

namespace kupl_omp {
namespace {
constexpr int kMaxDevices = 256;
}

int configured_device_count(int default_count) {
    const char *text = getenv("KUPL_OMP_NUM_DEVICES");
    if (!text || !*text)
        return default_count;
    char *end = nullptr;
    long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > kMaxDevices) {
        report_error("KUPL_OMP_NUM_DEVICES='%s' is not a number from 1 to %d; using %d", text, kMaxDevices,
                     default_count);
        return default_count;
    }
    return static_cast<int>(value);
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
