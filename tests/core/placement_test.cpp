// The placement plan (core/topo/placement.h) on saved topologies, loaded by real hwloc: a
// 2-socket, 4-node, 128-core Kunpeng 920 and a 2-socket x86 server (2 x 24 cores, SMT), both in
// tests/core/topologies/, and a few synthetic ones. Asserts the channels per node and their cpus,
// the caps, ranks bound to a core or a node, KUPL_* overrides and the routing of copies.
#include "topo/placement.h"

#include <gtest/gtest.h>
#include <hwloc.h>

#include <string>
#include <vector>

#ifndef KUPL_TOPOLOGIES_DIR
#error "KUPL_TOPOLOGIES_DIR must name tests/core/topologies"
#endif

namespace {

using kupl::topo::PlacementInputs;
using kupl::topo::PlacementPlan;
using kupl::topo::ThreadBinding;

const std::string kKunpeng = std::string(KUPL_TOPOLOGIES_DIR) + "/kunpeng920_2s4n128c.xml";
const std::string kX86 = std::string(KUPL_TOPOLOGIES_DIR) + "/x86_2s2n48c96t.xml";

// A topology loaded from an XML file or a synthetic description ("" for none given: fails).
class Machine {
  public:
    static Machine xml(const std::string &path) { return Machine(path, true); }
    static Machine synthetic(const std::string &description) { return Machine(description, false); }
    Machine(Machine &&other) noexcept : topology_(other.topology_) { other.topology_ = nullptr; }
    ~Machine() {
        if (topology_ != nullptr)
            hwloc_topology_destroy(topology_);
    }

    // The plan for a process bound to `cpus` (hwloc list form; "" = not bound).
    PlacementPlan plan(const std::string &cpus = "", PlacementInputs inputs = {}) const {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!cpus.empty()) {
            EXPECT_EQ(hwloc_bitmap_list_sscanf(set, cpus.c_str()), 0) << cpus;
        }
        PlacementPlan plan = kupl::topo::plan_placement(topology_, cpus.empty() ? nullptr : set, inputs);
        hwloc_bitmap_free(set);
        return plan;
    }

  private:
    Machine(const std::string &source, bool is_xml) {
        EXPECT_EQ(hwloc_topology_init(&topology_), 0);
        const int set = is_xml ? hwloc_topology_set_xml(topology_, source.c_str())
                               : hwloc_topology_set_synthetic(topology_, source.c_str());
        EXPECT_EQ(set, 0) << source;
        EXPECT_EQ(hwloc_topology_load(topology_), 0) << source;
    }
    hwloc_topology_t topology_ = nullptr;
};

std::vector<int> channels_per_node(const PlacementPlan &plan) {
    std::vector<int> counts;
    for (const auto &node : plan.nodes) {
        EXPECT_EQ(node.channels, plan.channels_on_node(node.index)) << "node " << node.index;
        counts.push_back(plan.channels_on_node(node.index));
    }
    return counts;
}

std::vector<std::string> channel_cpus(const PlacementPlan &plan) {
    std::vector<std::string> cpus;
    for (const auto &channel : plan.channels)
        cpus.push_back(channel.cpus);
    return cpus;
}

TEST(Placement, KunpengWholeMachineGetsEightChannelsPerNodeBoundToTheNode) {
    const PlacementPlan plan = Machine::xml(kKunpeng).plan();
    EXPECT_EQ(plan.machine_cores, 128);
    EXPECT_EQ(plan.allowed_cores, 128);
    EXPECT_TRUE(plan.whole_machine);
    ASSERT_EQ(plan.nodes.size(), 4u);
    const char *node_cpus[] = {"0-31", "32-63", "64-95", "96-127"};
    for (int n = 0; n < 4; ++n) {
        EXPECT_EQ(plan.nodes[n].os_index, static_cast<unsigned>(n));
        EXPECT_EQ(plan.nodes[n].cores, 32);
        EXPECT_EQ(plan.nodes[n].allowed_cores, 32);
        EXPECT_EQ(plan.nodes[n].allowed_cpus, node_cpus[n]);
    }
    // 32 allowed cores / 4 = 8 = the per-node cap; not the 127 of "one per core but one".
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{8, 8, 8, 8}));
    ASSERT_EQ(plan.channels.size(), 32u);
    for (std::size_t i = 0; i < plan.channels.size(); ++i) { // round-robin over the nodes
        EXPECT_EQ(plan.channels[i].node, static_cast<int>(i % 4)) << i;
        EXPECT_EQ(plan.channels[i].cpus, node_cpus[i % 4]) << i;
    }
    EXPECT_EQ(plan.executors, 128);
    EXPECT_EQ(plan.omp_devices, 4);
}

TEST(Placement, KunpengRankBoundToOneCoreGetsOneChannelOnThatCoreOnly) {
    const PlacementPlan plan = Machine::xml(kKunpeng).plan("77");
    EXPECT_EQ(plan.allowed_cores, 1);
    EXPECT_FALSE(plan.whole_machine);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{0, 0, 1, 0}));
    EXPECT_EQ(channel_cpus(plan), (std::vector<std::string>{"77"}));
    EXPECT_EQ(plan.nodes[2].allowed_cpus, "77");
    EXPECT_EQ(plan.nodes[0].allowed_cpus, "");
    EXPECT_EQ(plan.executors, 1);
    EXPECT_EQ(plan.omp_devices, 4); // the plugin's rule counts the machine's nodes
}

TEST(Placement, KunpengRankBoundToOneNodeGetsChannelsThereOnly) {
    const PlacementPlan plan = Machine::xml(kKunpeng).plan("32-63");
    EXPECT_EQ(plan.allowed_cores, 32);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{0, 8, 0, 0}));
    EXPECT_EQ(channel_cpus(plan), std::vector<std::string>(8, "32-63"));
    EXPECT_EQ(plan.executors, 32);
}

TEST(Placement, KunpengBindingAcrossTwoNodesSplitsByNode) {
    // Two cores on node 0, six on node 1: ceil(2/4) = 1 and ceil(6/4) = 2, each on its own cores.
    const PlacementPlan plan = Machine::xml(kKunpeng).plan("30-37");
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{1, 2, 0, 0}));
    EXPECT_EQ(channel_cpus(plan), (std::vector<std::string>{"30-31", "32-37", "32-37"}));
    EXPECT_EQ(plan.executors, 8);
}

TEST(Placement, KunpengOneCorePerChannelFromTheNodesLastCoreDown) {
    PlacementInputs inputs;
    inputs.binding = ThreadBinding::core; // KUPL_BIND_CHANNELS=2
    const PlacementPlan plan = Machine::xml(kKunpeng).plan("0-5,32-35", inputs);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{2, 1, 0, 0}));
    // Round-robin: node 0's first, node 1's first, node 0's second.
    EXPECT_EQ(channel_cpus(plan), (std::vector<std::string>{"5", "35", "4"}));
}

TEST(Placement, UnboundChannelsHaveNoCpus) {
    PlacementInputs inputs;
    inputs.binding = ThreadBinding::none; // KUPL_BIND_CHANNELS=0
    const PlacementPlan plan = Machine::xml(kKunpeng).plan("", inputs);
    EXPECT_EQ(plan.channels.size(), 32u);
    EXPECT_EQ(channel_cpus(plan), std::vector<std::string>(32, ""));
}

TEST(Placement, X86ServerCountsCoresNotHardwareThreads) {
    const PlacementPlan plan = Machine::xml(kX86).plan();
    EXPECT_EQ(plan.machine_cores, 48);
    EXPECT_EQ(plan.machine_pus, 96);
    ASSERT_EQ(plan.nodes.size(), 2u);
    EXPECT_EQ(plan.nodes[0].allowed_cpus, "0-23,48-71"); // Linux numbers SMT siblings +48
    EXPECT_EQ(plan.nodes[1].allowed_cpus, "24-47,72-95");
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{6, 6})); // ceil(24 / 4)
    EXPECT_EQ(plan.executors, 48);
    EXPECT_EQ(plan.omp_devices, 2);
}

TEST(Placement, X86RankBoundToOneCoreAndItsSibling) {
    const PlacementPlan plan = Machine::xml(kX86).plan("29,77");
    EXPECT_EQ(plan.allowed_cores, 1);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{0, 1}));
    EXPECT_EQ(channel_cpus(plan), (std::vector<std::string>{"29,77"}));
    EXPECT_EQ(plan.executors, 1);
    // One hardware thread of a core still counts as that core.
    EXPECT_EQ(channel_cpus(Machine::xml(kX86).plan("77")), (std::vector<std::string>{"77"}));
}

TEST(Placement, CapsAndTheSmallMachineOfToday) {
    // One node of 200 cores: at most 8 channels.
    EXPECT_EQ(Machine::synthetic("node:1 core:200 pu:1").plan().channels.size(), 8u);
    // This development machine's shape (1 node, 2 cores): 1 channel, 2 executors, as before.
    const PlacementPlan small = Machine::synthetic("node:1 core:2 pu:1").plan();
    EXPECT_EQ(channels_per_node(small), (std::vector<int>{1}));
    EXPECT_EQ(channel_cpus(small), (std::vector<std::string>{"0-1"}));
    EXPECT_EQ(small.executors, 2);
    // 9 cores: ceil(9 / 4) = 3.
    EXPECT_EQ(Machine::synthetic("node:1 core:9 pu:1").plan().channels.size(), 3u);
}

TEST(Placement, NodesOverTheSameCoresGetChannelsOnce) {
    // Two NUMA nodes per package over the same cores (DDR beside high-bandwidth memory): the
    // second has no cores of its own, so no channels.
    const PlacementPlan plan = Machine::synthetic("pack:2 [numa] [numa] core:8 pu:1").plan();
    ASSERT_EQ(plan.nodes.size(), 4u);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{2, 0, 2, 0}));
    EXPECT_EQ(plan.nodes[1].allowed_cores, 0);
    EXPECT_EQ(plan.nodes[1].cores, 8);
}

TEST(Placement, EnvironmentOverridesWin) {
    const Machine kunpeng = Machine::xml(kKunpeng);
    PlacementInputs inputs;
    inputs.num_channels = 3; // KUPL_NUM_CHANNELS=3: spread, one per node from the first
    EXPECT_EQ(channels_per_node(kunpeng.plan("", inputs)), (std::vector<int>{1, 1, 1, 0}));
    inputs.num_channels = 10;
    EXPECT_EQ(channels_per_node(kunpeng.plan("", inputs)), (std::vector<int>{3, 3, 2, 2}));
    inputs.num_channels = 100; // above the caps: the variable wins
    EXPECT_EQ(channels_per_node(kunpeng.plan("", inputs)), (std::vector<int>{25, 25, 25, 25}));
    // Only where the process may run, in proportion to its cores there.
    inputs.num_channels = 4;
    EXPECT_EQ(channels_per_node(kunpeng.plan("0-7,32-63", inputs)), (std::vector<int>{1, 3, 0, 0}));
    inputs.num_channels = 2;
    EXPECT_EQ(channels_per_node(kunpeng.plan("100", inputs)), (std::vector<int>{0, 0, 0, 2}));
    inputs.num_channels = 0;
    inputs.num_executors = 7; // KUPL_NUM_EXECUTORS=7
    EXPECT_EQ(kunpeng.plan("100", inputs).executors, 7);
    inputs.num_executors = 5000; // taken as the pool limit
    EXPECT_EQ(kunpeng.plan("", inputs).executors, kupl::topo::kMaxThreadsPerPool);
}

TEST(Placement, RanksSharingTheMachineShareItsChannels) {
    const Machine kunpeng = Machine::xml(kKunpeng);
    PlacementInputs inputs;
    inputs.local_ranks = 4; // four unbound ranks: each gets a quarter
    PlacementPlan plan = kunpeng.plan("", inputs);
    EXPECT_EQ(plan.sharing_ranks, 4);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{2, 2, 2, 2}));
    // Four ranks, each bound to its node: nobody shares, each has its node's eight.
    plan = kunpeng.plan("64-95", inputs);
    EXPECT_EQ(plan.sharing_ranks, 1);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{0, 0, 8, 0}));
    // 128 ranks bound to a core each: one channel each, on its core.
    inputs.local_ranks = 128;
    plan = kunpeng.plan("9", inputs);
    EXPECT_EQ(channel_cpus(plan), (std::vector<std::string>{"9"}));
    // 64 ranks bound to a socket (32 per socket): one channel each in all, not two nodes' 16.
    inputs.local_ranks = 64;
    plan = kunpeng.plan("0-63", inputs);
    EXPECT_EQ(plan.sharing_ranks, 32);
    EXPECT_EQ(channels_per_node(plan), (std::vector<int>{1, 0, 0, 0}));
    // Two unbound ranks on a 2-core machine: still one channel each (as before).
    inputs.local_ranks = 2;
    EXPECT_EQ(Machine::synthetic("node:1 core:2 pu:1").plan("", inputs).channels.size(), 1u);
}

TEST(Placement, CpubindOutsideTheMachineCountsAsTheWholeMachine) {
    const PlacementPlan plan = Machine::xml(kX86).plan("500-501");
    EXPECT_TRUE(plan.whole_machine);
    EXPECT_EQ(plan.channels.size(), 12u);
}

TEST(Routing, SplitCopiesGoToTheDestinationsNodeWhenItHasChannels) {
    const Machine kunpeng = Machine::xml(kKunpeng);
    const PlacementPlan whole = kunpeng.plan();
    for (int node = 0; node < 4; ++node)
        EXPECT_EQ(kupl::topo::route_copy(whole, node), node);
    EXPECT_EQ(kupl::topo::route_copy(whole, -1), -1); // unknown: any channel
    EXPECT_EQ(kupl::topo::route_copy(whole, 4), -1);  // no such node
    // Channels on nodes 0 and 1 only: memory on node 2 goes to any channel.
    const PlacementPlan two = kunpeng.plan("30-37");
    EXPECT_EQ(kupl::topo::route_copy(two, 0), 0);
    EXPECT_EQ(kupl::topo::route_copy(two, 1), 1);
    EXPECT_EQ(kupl::topo::route_copy(two, 2), -1);
    // Channels on one node only: nothing to choose.
    EXPECT_EQ(kupl::topo::route_copy(kunpeng.plan("32-63"), 1), -1);
    EXPECT_EQ(kupl::topo::route_copy(kunpeng.plan("32-63"), 0), -1);
    EXPECT_EQ(kupl::topo::route_copy(Machine::synthetic("node:1 core:2 pu:1").plan(), 0), -1);
    const PlacementPlan x86 = Machine::xml(kX86).plan();
    EXPECT_EQ(kupl::topo::route_copy(x86, 1), 1);
}

TEST(Placement, DescriptionNamesNodesChannelsExecutorsAndDevices) {
    const std::string text = kupl::topo::describe_plan(Machine::xml(kKunpeng).plan("77"));
    EXPECT_NE(text.find("machine            128 core(s), 128 PU(s), 4 NUMA node(s)\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("allowed cpus       77 (1 core(s))\n"), std::string::npos) << text;
    EXPECT_NE(text.find("numa 2 (os 2)      1 of 32 core(s) allowed, cpus 77, 1 channel(s)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("numa 0 (os 0)      0 of 32 core(s) allowed, 0 channel(s)\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("copy channels      1\n  channel 0        numa 2 (cpus 77)\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("host executors     1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("omp devices        4 "), std::string::npos) << text;
}

} // namespace
