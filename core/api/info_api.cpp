// Version, wall time, and the kuplx_ engine introspection and fault-injection calls.
#include "api/api_support.h"
#include "kupl_ext.h"

#include <chrono>
#include <cstdio>
#include <cstring>

using kupl::api::fail;
using kupl::api::guarded;
using kupl::api::runtime_for;

#ifndef KUPL_VERSION_STRING
#define KUPL_VERSION_STRING "0.0.0"
#endif

extern "C" {

int kupl_get_version(kupl_version_t *version) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (version == nullptr)
            return fail(function, "version is NULL");
        version->product_name = "kupl-interop";
        version->product_version = KUPL_VERSION_STRING;
        version->component_name = "kupl";
        version->component_abi_version = "1";
        version->component_version = KUPL_VERSION_STRING;
        version->component_appendinfo = "software copy engine; queue/event/copy API of KUPL (HPCKit 26.x)";
        return KUPL_OK;
    });
}

double kupl_get_wtime(void) {
    return guarded(__func__, 0.0, [](const char *) {
        using seconds = std::chrono::duration<double>;
        return std::chrono::duration_cast<seconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    });
}

int kuplx_get_engine_info(kuplx_engine_info_t *info) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (info == nullptr)
            return fail(function, "info is NULL");
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        std::memset(info, 0, sizeof *info);
        kupl::sched::Engine &engine = *runtime->engine;
        std::snprintf(info->backend, sizeof info->backend, "%s", engine.backend().name());
        info->num_channels = engine.backend().num_channels();
        info->num_executors = engine.executor().num_threads();
        info->num_numa_nodes = runtime->topology.num_numa_nodes();
        info->num_cores = runtime->topology.num_cores();
        info->inline_threshold = runtime->config.inline_threshold;
        info->mt_threshold = runtime->config.mt_threshold;
        info->sync_threshold = runtime->config.sync_threshold;
        info->nt_threshold = engine.backend().nt_threshold();
        info->spin_us = runtime->config.spin_us;
        info->executor_spin_us = runtime->config.executor_spin_us;
        return KUPL_OK;
    });
}

int kuplx_get_channel_placement(int channel, char *buf, size_t size) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        if (buf == nullptr || size == 0)
            return fail(function, "buf is NULL or size is 0");
        if (channel < 0 || channel >= runtime->engine->backend().num_channels())
            return fail(function, "channel %d does not exist", channel);
        std::snprintf(buf, size, "%s", runtime->engine->backend().channel_placement(channel).c_str());
        return KUPL_OK;
    });
}

int kuplx_get_copy_routing(char *provider, size_t provider_size, char *rule, size_t rule_size) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        const kupl::copy::CopyBackend &backend = runtime->engine->backend();
        if (provider != nullptr && provider_size > 0)
            std::snprintf(provider, provider_size, "%s", backend.provider_description().c_str());
        if (rule != nullptr && rule_size > 0)
            std::snprintf(rule, rule_size, "%s", backend.routing_rule().c_str());
        return KUPL_OK;
    });
}

int kuplx_get_counters(kuplx_counters_t *counters) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (counters == nullptr)
            return fail(function, "counters is NULL");
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        const kupl::support::Counters &c = runtime->counters;
        auto read = [&c](kupl::support::Counter which) { return c.total(which); };
        counters->copies_submitted = read(kupl::support::Counter::copies_submitted);
        counters->copies_inline = read(kupl::support::Counter::copies_inline);
        counters->copies_failed = read(kupl::support::Counter::copies_failed);
        counters->bytes_copied = read(kupl::support::Counter::bytes_copied);
        counters->pieces_executed = read(kupl::support::Counter::pieces_executed);
        counters->host_items = read(kupl::support::Counter::host_items);
        counters->worker_parks = read(kupl::support::Counter::worker_parks);
        counters->worker_wakes = read(kupl::support::Counter::worker_wakes);
        return KUPL_OK;
    });
}

int kuplx_inject_copy_faults(unsigned count) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        runtime->faults.arm(count);
        return KUPL_OK;
    });
}

} // extern "C"
