#include "support/config.h"

#include "support/env_config.h"

namespace kupl::support {

Config read_config_from_environment() {
    using env::read_bool;
    using env::read_integer;
    using env::read_size;
    // Ranges: thread counts from 1 to kMaxThreads (a default of 0 means "derive from the
    // machine"); spins up to 1 s (a longer spin only burns a core); sizes up to env::kMaxBytes.
    constexpr int kMaxThreads = 1024;
    constexpr unsigned kMaxSpinUs = 1000000;
    Config config;
    config.inline_threshold = read_size("KUPL_ASYNC_INLINE_THRESHOLD", config.inline_threshold);
    config.mt_threshold = read_size("KUPL_MEMCPY_MT_THRESHOLD", config.mt_threshold);
    const char *sync_name = env::first_set({"KUPL_MEMCPY_SDMA_THRESHOLD", "KUPL_SDMA_MEMCPY_THRESHOLD"});
    config.sync_threshold = read_size(sync_name, config.sync_threshold);
    config.nt_threshold = read_size("KUPL_NT_THRESHOLD", config.nt_threshold, 0, env::kMaxBytes,
                                    "the last-level cache size, >= 8M");
    config.num_channels =
        static_cast<int>(read_integer("KUPL_NUM_CHANNELS", config.num_channels, 1, kMaxThreads, "threads",
                                      "one per 4 allowed cores of a NUMA node, at most 8 a node"));
    config.num_executors = static_cast<int>(read_integer("KUPL_NUM_EXECUTORS", config.num_executors, 1,
                                                         kMaxThreads, "threads", "one per allowed core"));
    config.spin_us =
        static_cast<unsigned>(read_integer("KUPL_SPIN_US", config.spin_us, 0, kMaxSpinUs, "microseconds"));
    config.executor_spin_us = static_cast<unsigned>(
        read_integer("KUPL_EXECUTOR_SPIN_US", config.executor_spin_us, 0, kMaxSpinUs, "microseconds"));
    config.fault_inject = static_cast<unsigned>(
        read_integer("KUPL_FAULT_INJECT", config.fault_inject, 0, 1000000000, "copies to fail"));
    config.bind_channels = static_cast<unsigned>(
        read_integer("KUPL_BIND_CHANNELS", config.bind_channels, 0, 2, "0 unbound, 1 NUMA node, 2 one core"));
    config.wait_helps = read_bool("KUPL_WAIT_HELPS", config.wait_helps);
    config.stats = read_bool("KUPL_STATS", config.stats);
    if (const char *provider = env::value_of("KUPL_BACKEND"))
        config.backend_provider = provider;
    // 0 would mean "split every copy": the smallest split size does that.
    if (config.mt_threshold == 0)
        config.mt_threshold = 1;
    return config;
}

} // namespace kupl::support
