// kupl-info: what this libkupl is and how its engine is set up on this machine.
#include "kupl.h"
#include "kupl_ext.h"
#include "support/config.h"
#include "topo/placement.h"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void usage(std::FILE *out) {
    std::fputs("usage: kupl-info [--help] [--version]\n"
               "       kupl-info [--topology FILE | --synthetic DESC] [--cpubind LIST] [--local-ranks N]\n"
               "  prints the version of libkupl, its copy backend, channels and their placement,\n"
               "  host executors, thresholds and the topology, as configured by the KUPL_*\n"
               "  environment variables in effect.\n"
               "  With a placement option it prints, without starting the runtime, the placement\n"
               "  plan the runtime would make: on the machine an hwloc XML FILE or an hwloc\n"
               "  synthetic DESC describes (else this one), for a process bound to the PUs in LIST\n"
               "  (hwloc list form, e.g. 0-31,64; else the whole machine), one of N ranks on the\n"
               "  machine (else 1; the runtime reads OMPI_COMM_WORLD_LOCAL_SIZE)\n",
               out);
}

int bad_argument(const char *format, const char *value) {
    std::fprintf(stderr, "kupl-info: ");
    std::fprintf(stderr, format, value);
    std::fputc('\n', stderr);
    usage(stderr);
    return 2;
}

struct PlanRequest {
    const char *xml_file = nullptr;
    const char *synthetic = nullptr;
    const char *cpubind = nullptr;
    int local_ranks = 1;
};

// kupl-info with a placement option: the plan of topo/placement.h for the machine asked for.
int print_plan(const PlanRequest &request) {
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0) {
        std::fprintf(stderr, "kupl-info: hwloc could not start\n");
        return 1;
    }
    std::string source = "this machine";
    if (request.xml_file != nullptr) {
        source = std::string("topology file ") + request.xml_file;
        if (hwloc_topology_set_xml(topology, request.xml_file) != 0) {
            std::fprintf(stderr, "kupl-info: cannot read the topology file '%s': %s\n", request.xml_file,
                         std::strerror(errno));
            hwloc_topology_destroy(topology);
            return 1;
        }
    } else if (request.synthetic != nullptr) {
        source = std::string("synthetic topology \"") + request.synthetic + "\"";
        if (hwloc_topology_set_synthetic(topology, request.synthetic) != 0) {
            std::fprintf(stderr, "kupl-info: not an hwloc synthetic description: '%s'\n", request.synthetic);
            hwloc_topology_destroy(topology);
            return 1;
        }
    }
    if (hwloc_topology_load(topology) != 0) {
        std::fprintf(stderr, "kupl-info: hwloc could not load %s: %s\n", source.c_str(),
                     std::strerror(errno));
        hwloc_topology_destroy(topology);
        return 1;
    }
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    int status = 0;
    if (request.cpubind != nullptr) {
        if (hwloc_bitmap_list_sscanf(allowed, request.cpubind) != 0 ||
            !hwloc_bitmap_intersects(allowed, hwloc_topology_get_topology_cpuset(topology))) {
            std::fprintf(stderr, "kupl-info: --cpubind '%s' names no PU of %s\n", request.cpubind,
                         source.c_str());
            status = 2;
        }
    } else if (request.xml_file == nullptr && request.synthetic == nullptr &&
               hwloc_get_cpubind(topology, allowed, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_fill(allowed); // this machine, binding unknown: the whole machine
    } else if (request.xml_file != nullptr || request.synthetic != nullptr) {
        hwloc_bitmap_fill(allowed); // another machine: a process bound nowhere
    }
    if (status == 0) {
        // The KUPL_* variables in effect count as they would for the runtime (a bad value gets
        // the same one-line warning, and the default).
        const kupl::support::Config config = kupl::support::read_config_from_environment();
        kupl::topo::PlacementInputs inputs;
        inputs.num_channels = config.num_channels;
        inputs.num_executors = config.num_executors;
        inputs.binding = static_cast<kupl::topo::ThreadBinding>(config.bind_channels);
        inputs.local_ranks = request.local_ranks;
        const kupl::topo::PlacementPlan plan = kupl::topo::plan_placement(topology, allowed, inputs);
        std::printf("placement plan     %s\n", source.c_str());
        std::fputs(kupl::topo::describe_plan(plan).c_str(), stdout);
    }
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(topology);
    return status;
}

} // namespace

int main(int argc, char **argv) {
    PlanRequest request;
    bool plan = false;
    for (int i = 1; i < argc; ++i) {
        const std::string option = argv[i];
        if (option != "--topology" && option != "--synthetic" && option != "--cpubind" &&
            option != "--local-ranks")
            continue;
        if (i + 1 >= argc)
            return bad_argument("%s needs a value", argv[i]);
        const char *value = argv[++i];
        plan = true;
        if (option == "--topology" || option == "--synthetic") {
            if (request.xml_file != nullptr || request.synthetic != nullptr)
                return bad_argument("%s: only one of --topology and --synthetic", argv[i - 1]);
            (option == "--topology" ? request.xml_file : request.synthetic) = value;
        } else if (option == "--cpubind") {
            request.cpubind = value;
        } else {
            char *end = nullptr;
            errno = 0;
            const long ranks = std::strtol(value, &end, 10);
            if (errno != 0 || end == value || *end != '\0' || ranks < 1 || ranks > 1 << 20)
                return bad_argument("--local-ranks needs an integer in 1..1048576, not '%s'", value);
            request.local_ranks = static_cast<int>(ranks);
        }
        argv[i - 1] = nullptr; // taken
        argv[i] = nullptr;
    }
    if (plan) {
        for (int i = 1; i < argc; ++i)
            if (argv[i] != nullptr) {
                std::fprintf(stderr, "kupl-info: unknown argument '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
        return print_plan(request);
    }
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
