// Runtime configuration, read from the environment once when the runtime starts.
#pragma once

#include <cstddef>
#include <string>

namespace kupl::support {

struct Config {
    // Async copies smaller than this (in cost bytes, CopyDescriptor::cost_bytes), with nothing
    // ahead of them on their queue, run on the caller and complete at once. A hand-off to a
    // channel costs ~0.5-1 us here: a 16 KiB copy handed off lost both waited for at once (0.45x
    // of the caller's memcpy hot, 0.47x cold) and beside compute (0.43x / 0.69x of doing it
    // without KUPL), against 0.64x / 0.77x and 0.85x / 0.90x inline (core_sweep_bench). 64K
    // would also keep 2D copies of 256 narrow rows off the channels, whose overlap cold (1.50x
    // of 1.86x) is worth the hand-off. KUPL_ASYNC_INLINE_THRESHOLD.
    std::size_t inline_threshold = 32 * 1024;
    // Copies at least this large are split across channels. KUPL_MEMCPY_MT_THRESHOLD (vendor name).
    std::size_t mt_threshold = 512 * 1024;
    // kupl_memcpy() uses the engine from this size on. KUPL_MEMCPY_SDMA_THRESHOLD, or the older
    // spelling KUPL_SDMA_MEMCPY_THRESHOLD (vendor names).
    std::size_t sync_threshold = 512 * 1024;
    // Copies at least this large use non-temporal stores; 0 = derive from the last-level cache.
    // KUPL_NT_THRESHOLD.
    std::size_t nt_threshold = 0;
    // Copy channels; 0 = by the placement rules (topo/placement.h). KUPL_NUM_CHANNELS.
    int num_channels = 0;
    // Host-function executor threads; 0 = one per core the process may run on. KUPL_NUM_EXECUTORS.
    int num_executors = 0;
    // How long an idle copy channel (or a waiting caller) spins before it parks. KUPL_SPIN_US.
    unsigned spin_us = 50;
    // How long an idle executor spins before it parks. KUPL_EXECUTOR_SPIN_US. None by default:
    // whoever launched a host item usually waits for it and runs on as soon as it is done; an
    // executor spinning on afterwards takes the core that thread needs then (a `target nowait`
    // region from libomp on 2 cores took 24 us with a 50 us spin, 9 us without).
    unsigned executor_spin_us = 0;
    // Channel placement (hwloc): 0 none, 1 the NUMA node of its core where there are several
    // nodes, 2 its own core. KUPL_BIND_CHANNELS.
    unsigned bind_channels = 1;
    // Whether callers blocked in a wait execute copy pieces themselves. KUPL_WAIT_HELPS (1/0).
    bool wait_helps = true;
    // Copies to fail on purpose, for tests. KUPL_FAULT_INJECT.
    unsigned fault_inject = 0;
    // Print the counters on stderr at exit. KUPL_STATS (boolean).
    bool stats = false;
    // A copy-engine provider library to load (include/kupl_backend.h); empty: software only.
    // KUPL_BACKEND. Checked when loaded (copy/provider/provider_backend.cpp).
    std::string backend_provider;
};

// Reads the environment (support/env_config.h: sizes accept K, M and G suffixes, powers of 1024;
// a bad or out-of-range value is ignored with one warning line).
Config read_config_from_environment();

} // namespace kupl::support
