#include "topo/placement.h"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace kupl::topo {
namespace {

struct BitmapDeleter {
    void operator()(hwloc_bitmap_t bitmap) const { hwloc_bitmap_free(bitmap); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Bitmap make_bitmap() {
    Bitmap bitmap(hwloc_bitmap_alloc());
    if (bitmap == nullptr)
        throw std::bad_alloc();
    return bitmap;
}

std::string list_of(hwloc_const_bitmap_t set) {
    if (hwloc_bitmap_iszero(set))
        return "";
    char *text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr)
        throw std::bad_alloc();
    std::string out(text);
    std::free(text);
    return out;
}

// Cores, or PUs where the topology has no core objects.
hwloc_obj_type_t core_type(hwloc_topology_t topology) {
    return hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

// Spreads `total` channels over the nodes in proportion to their allowed cores: each channel goes
// to the node with the fewest channels per allowed core so far (the first such node on a tie).
void spread_channels(std::vector<NodePlacement> &nodes, int total) {
    for (NodePlacement &node : nodes)
        node.channels = 0;
    for (int i = 0; i < total; ++i) {
        NodePlacement *best = nullptr;
        for (NodePlacement &node : nodes) {
            if (node.allowed_cores == 0)
                continue;
            // node.channels / node.allowed_cores < best->channels / best->allowed_cores
            if (best == nullptr || static_cast<long>(node.channels) * best->allowed_cores <
                                       static_cast<long>(best->channels) * node.allowed_cores)
                best = &node;
        }
        if (best == nullptr)
            return;
        ++best->channels;
    }
}

// Channels per node by the rules of placement.h.
void channels_by_rule(std::vector<NodePlacement> &nodes, int sharing_ranks) {
    int total = 0;
    for (NodePlacement &node : nodes) {
        const int own =
            std::min(kMaxChannelsPerNode, (node.allowed_cores + kCoresPerChannel - 1) / kCoresPerChannel);
        node.channels = own / sharing_ranks;
        total += node.channels;
    }
    if (total > 0)
        return;
    // Shared so thinly that no node keeps one: one channel, on the node with the most allowed cores.
    NodePlacement *best = nullptr;
    for (NodePlacement &node : nodes)
        if (node.allowed_cores > 0 && (best == nullptr || node.allowed_cores > best->allowed_cores))
            best = &node;
    if (best != nullptr)
        best->channels = 1;
}

} // namespace

int PlacementPlan::channels_on_node(int node) const {
    int count = 0;
    for (const ChannelPlacement &channel : channels)
        count += channel.node == node ? 1 : 0;
    return count;
}

PlacementPlan plan_placement(hwloc_topology_t topology, hwloc_const_bitmap_t allowed_in,
                             const PlacementInputs &inputs) {
    PlacementPlan plan;
    plan.binding = inputs.binding;
    if (topology == nullptr) { // hwloc failed: one core, one unbound channel
        plan.nodes.push_back(NodePlacement{0, 0, 1, 1, "", 1});
        const int channels = inputs.num_channels > 0 ? std::min(inputs.num_channels, kMaxThreadsPerPool) : 1;
        plan.channels.assign(static_cast<std::size_t>(channels), ChannelPlacement{0, ""});
        plan.nodes[0].channels = channels;
        plan.executors = inputs.num_executors > 0 ? std::min(inputs.num_executors, kMaxThreadsPerPool) : 1;
        return plan;
    }
    hwloc_const_bitmap_t machine = hwloc_topology_get_topology_cpuset(topology);
    Bitmap allowed = make_bitmap();
    if (allowed_in != nullptr)
        hwloc_bitmap_and(allowed.get(), allowed_in, machine);
    if (hwloc_bitmap_iszero(allowed.get()))
        hwloc_bitmap_copy(allowed.get(), machine);
    plan.whole_machine = hwloc_bitmap_isincluded(machine, allowed.get()) != 0;
    plan.allowed_cpus = list_of(allowed.get());
    plan.machine_pus = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU));

    const hwloc_obj_type_t core = core_type(topology);
    const int num_cores = hwloc_get_nbobjs_by_type(topology, core);
    plan.machine_cores = std::max(1, num_cores);
    plan.allowed_cores = 0;
    for (int i = 0; i < num_cores; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topology, core, static_cast<unsigned>(i));
        if (obj != nullptr && obj->cpuset != nullptr && hwloc_bitmap_intersects(obj->cpuset, allowed.get()))
            ++plan.allowed_cores;
    }
    plan.allowed_cores = std::max(1, plan.allowed_cores);

    // Nodes, in logical order. A core belongs to the first node whose cpuset holds it: a
    // memory-only node, or a second node over the same cores (high-bandwidth memory beside DDR),
    // gets no channels of its own.
    const int num_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    Bitmap claimed = make_bitmap();
    Bitmap cpus = make_bitmap();
    // Per node: the allowed cores, the last first (channels bound to one core take those).
    std::vector<std::vector<hwloc_obj_t>> node_cores;
    for (int n = 0; n < std::max(1, num_nodes); ++n) {
        hwloc_obj_t obj = num_nodes > 0
                              ? hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n))
                              : nullptr;
        NodePlacement node;
        node.index = n;
        node.os_index = obj != nullptr ? obj->os_index : 0;
        hwloc_const_bitmap_t node_set = obj != nullptr && obj->cpuset != nullptr ? obj->cpuset : machine;
        std::vector<hwloc_obj_t> allowed_here;
        hwloc_bitmap_zero(cpus.get());
        for (int i = num_cores - 1; i >= 0; --i) {
            hwloc_obj_t c = hwloc_get_obj_by_type(topology, core, static_cast<unsigned>(i));
            if (c == nullptr || c->cpuset == nullptr || !hwloc_bitmap_isincluded(c->cpuset, node_set))
                continue;
            ++node.cores;
            if (hwloc_bitmap_intersects(c->cpuset, claimed.get()) ||
                !hwloc_bitmap_intersects(c->cpuset, allowed.get()))
                continue;
            allowed_here.push_back(c);
            hwloc_bitmap_or(claimed.get(), claimed.get(), c->cpuset);
            Bitmap mine = make_bitmap();
            hwloc_bitmap_and(mine.get(), c->cpuset, allowed.get());
            hwloc_bitmap_or(cpus.get(), cpus.get(), mine.get());
        }
        node.allowed_cores = static_cast<int>(allowed_here.size());
        node.allowed_cpus = list_of(cpus.get());
        plan.nodes.push_back(std::move(node));
        node_cores.push_back(std::move(allowed_here));
    }

    // A rank bound to its share of the machine (or less) shares its cores with no one: S = 1.
    if (inputs.local_ranks > 1)
        plan.sharing_ranks = std::clamp((inputs.local_ranks * plan.allowed_cores + plan.machine_cores / 2) /
                                            plan.machine_cores,
                                        1, inputs.local_ranks);

    if (inputs.num_channels > 0)
        spread_channels(plan.nodes, std::min(inputs.num_channels, kMaxThreadsPerPool));
    else
        channels_by_rule(plan.nodes, plan.sharing_ranks);

    // Channels in round-robin order over the nodes (channel 0 on the first node with channels,
    // channel 1 on the next, ...): if the system starts fewer threads than planned, the first
    // ones still cover every node they can.
    int most = 0;
    for (const NodePlacement &node : plan.nodes)
        most = std::max(most, node.channels);
    for (int round = 0; round < most; ++round) {
        for (const NodePlacement &node : plan.nodes) {
            if (round >= node.channels)
                continue;
            ChannelPlacement channel;
            channel.node = num_nodes > 0 ? node.index : -1;
            if (inputs.binding == ThreadBinding::numa_node) {
                channel.cpus = node.allowed_cpus;
            } else if (inputs.binding == ThreadBinding::core) {
                const auto &cores = node_cores[static_cast<std::size_t>(node.index)];
                hwloc_obj_t c = cores[static_cast<std::size_t>(round) % cores.size()];
                hwloc_bitmap_and(cpus.get(), c->cpuset, allowed.get());
                channel.cpus = list_of(cpus.get());
            }
            plan.channels.push_back(std::move(channel));
        }
    }

    plan.executors = inputs.num_executors > 0 ? std::min(inputs.num_executors, kMaxThreadsPerPool)
                                              : std::min(plan.allowed_cores, kMaxThreadsPerPool);
    plan.omp_devices = std::max(1, num_nodes);
    return plan;
}

int route_copy(const PlacementPlan &plan, int destination_node) {
    if (destination_node < 0)
        return -1;
    int nodes_with_channels = 0;
    for (const NodePlacement &node : plan.nodes)
        nodes_with_channels += plan.channels_on_node(node.index) > 0 ? 1 : 0;
    if (nodes_with_channels < 2 || plan.channels_on_node(destination_node) == 0)
        return -1;
    return destination_node;
}

int local_ranks_from_environment() {
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
        const char *text = std::getenv(name);
        if (text == nullptr || *text == '\0')
            continue;
        char *end = nullptr;
        const long value = std::strtol(text, &end, 10);
        if (*end == '\0' && value > 0 && value <= 1 << 20)
            return static_cast<int>(value);
    }
    return 1;
}

std::string channel_text(const ChannelPlacement &channel, ThreadBinding binding) {
    if (binding == ThreadBinding::none)
        return "unbound (KUPL_BIND_CHANNELS=0)";
    if (channel.cpus.empty())
        return "unbound (no cpus)";
    if (binding == ThreadBinding::core)
        return "core (cpus " + channel.cpus + ") numa " + std::to_string(channel.node);
    return "numa " + std::to_string(channel.node) + " (cpus " + channel.cpus + ")";
}

std::string describe_plan(const PlacementPlan &plan) {
    std::string out;
    char line[512];
    auto add = [&out, &line](const char *format, auto... args) {
        std::snprintf(line, sizeof line, format, args...);
        out += line;
    };
    int nodes_with_channels = 0;
    for (const NodePlacement &node : plan.nodes)
        nodes_with_channels += node.channels > 0 ? 1 : 0;
    add("machine            %d core(s), %d PU(s), %zu NUMA node(s)\n", plan.machine_cores, plan.machine_pus,
        plan.nodes.size());
    add("allowed cpus       %s (%d core(s)%s)\n", plan.allowed_cpus.c_str(), plan.allowed_cores,
        plan.whole_machine ? ", the whole machine" : "");
    if (plan.sharing_ranks > 1)
        add("sharing ranks      %d (each node's channels divided by them)\n", plan.sharing_ranks);
    for (const NodePlacement &node : plan.nodes) {
        char label[48];
        std::snprintf(label, sizeof label, "numa %d (os %u)", node.index, node.os_index);
        add("%-18s %d of %d core(s) allowed%s%s, %d channel(s)\n", label, node.allowed_cores, node.cores,
            node.allowed_cpus.empty() ? "" : ", cpus ", node.allowed_cpus.c_str(), node.channels);
    }
    add("copy channels      %zu\n", plan.channels.size());
    for (std::size_t i = 0; i < plan.channels.size(); ++i) {
        add("  channel %-3zu      %s\n", i, channel_text(plan.channels[i], plan.binding).c_str());
    }
    add("host executors     %d\n", plan.executors);
    add("omp devices        %d (one per NUMA node; KUPL_OMP_NUM_DEVICES overrides)\n", plan.omp_devices);
    if (nodes_with_channels > 1)
        add("copy routing       split copies go to the channels of their destination's node\n");
    else
        add("copy routing       any channel (channels on one node)\n");
    return out;
}

} // namespace kupl::topo
