// kupl-info: what this libkupl is and how its engine is set up on this machine.
#include "kupl.h"
#include "kupl_ext.h"

#include <cstdio>
#include <cstring>

namespace {

void usage(std::FILE *out) {
    std::fputs("usage: kupl-info [--help] [--version]\n"
               "  prints the version of libkupl, its copy backend, channels and their placement,\n"
               "  host executors, thresholds and the topology, as configured by the KUPL_*\n"
               "  environment variables in effect\n",
               out);
}

} // namespace

int main(int argc, char **argv) {
    if (argc > 1) {
        if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
            usage(stdout);
            return 0;
        }
        if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
            kupl_version_t version;
            if (kupl_get_version(&version) != KUPL_OK)
                return 1;
            std::printf("kupl-info (%s) %s\n", version.product_name, version.product_version);
            return 0;
        }
        std::fprintf(stderr, "kupl-info: unknown argument '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    kupl_version_t version;
    if (kupl_get_version(&version) != KUPL_OK)
        return 1;
    kuplx_engine_info_t info;
    if (kuplx_get_engine_info(&info) != KUPL_OK)
        return 1;
    std::printf("%s %s (%s, ABI %s)\n", version.product_name, version.product_version, version.component_name,
                version.component_abi_version);
    std::printf("backend            %s\n", info.backend);
    char provider[512] = "", rule[512] = "";
    if (kuplx_get_copy_routing(provider, sizeof provider, rule, sizeof rule) == KUPL_OK) {
        std::printf("provider           %s  (KUPL_BACKEND)\n", provider[0] != '\0' ? provider : "none");
        std::printf("routing            %s\n", rule);
    }
    std::printf("topology           %d core(s), %d NUMA node(s)\n", info.num_cores, info.num_numa_nodes);
    std::printf("copy channels      %d\n", info.num_channels);
    for (int channel = 0; channel < info.num_channels; ++channel) {
        char where[128];
        if (kuplx_get_channel_placement(channel, where, sizeof where) == KUPL_OK)
            std::printf("  channel %-3d      %s\n", channel, where);
    }
    std::printf("host executors     %d\n", info.num_executors);
    std::printf("inline threshold   %zu B  (KUPL_ASYNC_INLINE_THRESHOLD)\n", info.inline_threshold);
    std::printf("split threshold    %zu B  (KUPL_MEMCPY_MT_THRESHOLD)\n", info.mt_threshold);
    std::printf("sync threshold     %zu B  (KUPL_MEMCPY_SDMA_THRESHOLD)\n", info.sync_threshold);
    std::printf("streaming stores   from %zu B  (KUPL_NT_THRESHOLD)\n", info.nt_threshold);
    std::printf("idle spin          %u us  (KUPL_SPIN_US)\n", info.spin_us);
    std::printf("executor spin      %u us  (KUPL_EXECUTOR_SPIN_US)\n", info.executor_spin_us);
    return 0;
}
