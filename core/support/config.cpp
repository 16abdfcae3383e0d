#include "support/config.h"

#include "support/log.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

namespace kupl::support {
namespace {

bool parse_size(const char *text, std::size_t &out) {
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text)
        return false;
    switch (*end) {
    case 'k':
    case 'K':
        value <<= 10;
        ++end;
        break;
    case 'm':
    case 'M':
        value <<= 20;
        ++end;
        break;
    case 'g':
    case 'G':
        value <<= 30;
        ++end;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        ++end;
    if (*end != '\0')
        return false;
    out = static_cast<std::size_t>(value);
    return true;
}

// Reads the first of `names` that is set; leaves `value` alone (and warns) if it does not parse.
template <typename T> void read_number(T &value, std::initializer_list<const char *> names) {
    for (const char *name : names) {
        const char *text = std::getenv(name);
        if (text == nullptr || *text == '\0')
            continue;
        std::size_t parsed = 0;
        if (parse_size(text, parsed))
            value = static_cast<T>(parsed);
        else
            log(LogLevel::warn, "ignoring %s=%s: not a size", name, text);
        return;
    }
}

} // namespace

Config read_config_from_environment() {
    Config config;
    read_number(config.inline_threshold, {"KUPL_ASYNC_INLINE_THRESHOLD"});
    read_number(config.mt_threshold, {"KUPL_MEMCPY_MT_THRESHOLD"});
    read_number(config.sync_threshold, {"KUPL_MEMCPY_SDMA_THRESHOLD", "KUPL_SDMA_MEMCPY_THRESHOLD"});
    read_number(config.nt_threshold, {"KUPL_NT_THRESHOLD"});
    read_number(config.num_channels, {"KUPL_NUM_CHANNELS"});
    read_number(config.num_executors, {"KUPL_NUM_EXECUTORS"});
    read_number(config.spin_us, {"KUPL_SPIN_US"});
    read_number(config.executor_spin_us, {"KUPL_EXECUTOR_SPIN_US"});
    read_number(config.fault_inject, {"KUPL_FAULT_INJECT"});
    read_number(config.bind_channels, {"KUPL_BIND_CHANNELS"});
    if (config.bind_channels > 2)
        config.bind_channels = 2;
    unsigned helps = config.wait_helps ? 1 : 0;
    read_number(helps, {"KUPL_WAIT_HELPS"});
    config.wait_helps = helps != 0;
    if (config.mt_threshold == 0)
        config.mt_threshold = 1;
    return config;
}

} // namespace kupl::support
