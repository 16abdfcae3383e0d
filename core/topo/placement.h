// Where the runtime puts its threads, decided in one place from an hwloc topology: the cores the
// process may run on (its cpubind) grouped by NUMA node, how many copy channels each node gets
// and which cpus each channel is bound to, how many host executors start, and which node's
// channels take a copy. Pure functions of (topology, allowed cpus, inputs): the runtime feeds
// them this machine and its own cpubind; kupl-info and the tests feed them saved topologies.
//
// The rules (README, "Placement"):
//   - allowed cores: cores with at least one PU in the process's cpubind (the whole machine if
//     the cpubind cannot be read);
//   - channels of a node: one per kCoresPerChannel allowed cores of that node, rounded up, at
//     most kMaxChannelsPerNode; nodes without allowed cores get none. A few threads saturate a
//     node's memory bandwidth: more only take cores from the application (127 channels on a
//     128-core machine, each rank of a node starting its own, was issue 12);
//   - ranks sharing the machine: when the launcher says this process is one of L ranks on the
//     machine (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS) and its cpubind is wider than its
//     share of the cores (unbound or bound to a socket), each node's count is divided by the
//     ranks that share those cores, S = round(L * allowed cores / machine cores);
//   - at least one channel in all;
//   - KUPL_NUM_CHANNELS=N wins: N channels spread over the nodes in proportion to their allowed
//     cores; KUPL_NUM_EXECUTORS wins over the executor count (default: the allowed cores);
//   - each channel is bound to its node's allowed cpus (KUPL_BIND_CHANNELS=1), or to one
//     allowed core of its node, from the node's last core down (=2), or left unbound (=0);
//   - a copy big enough to be split goes to the channels of the node holding its destination,
//     when the machine has several nodes and that node has channels (route_copy).
#pragma once

#include "topo/topology.h"

#include <string>
#include <vector>

struct hwloc_topology;
struct hwloc_bitmap_s;

namespace kupl::topo {

constexpr int kCoresPerChannel = 4;
constexpr int kMaxChannelsPerNode = 8;
// Thread counts above this are taken as this (a typo must not start a hundred thousand threads).
constexpr int kMaxThreadsPerPool = 1024;

struct PlacementInputs {
    int num_channels = 0;  // KUPL_NUM_CHANNELS; 0: by the rules above
    int num_executors = 0; // KUPL_NUM_EXECUTORS; 0: one per allowed core
    ThreadBinding binding = ThreadBinding::numa_node;
    int local_ranks = 1; // processes of this job on this machine (launcher's environment)
};

struct NodePlacement {
    int index = 0;            // logical index of the NUMA node (0, 1, ... in hwloc's order)
    unsigned os_index = 0;    // the kernel's node number
    int cores = 0;            // cores of the node
    int allowed_cores = 0;    // of those, cores with a PU the process may run on
    std::string allowed_cpus; // those PUs, hwloc list form ("64-95"); "" if none
    int channels = 0;
};

struct ChannelPlacement {
    int node = -1;    // logical index of its node; -1: none (the machine has no NUMA objects)
    std::string cpus; // the PUs it is bound to, hwloc list form; "" = unbound
};

struct PlacementPlan {
    int machine_cores = 1;
    int machine_pus = 1;
    int allowed_cores = 1;
    std::string allowed_cpus;
    bool whole_machine = true; // the allowed cpus are the whole machine
    int sharing_ranks = 1;     // S above
    ThreadBinding binding = ThreadBinding::numa_node;
    std::vector<NodePlacement> nodes; // every NUMA node of the machine, in logical order
    std::vector<ChannelPlacement> channels;
    int executors = 1;
    // What the OpenMP plugin makes of this machine: one device per NUMA node
    // (omp_plugin/README.md, "Devices"; KUPL_OMP_NUM_DEVICES overrides there).
    int omp_devices = 1;

    int channels_on_node(int node) const;
};

// The plan for `topology` when the process may run on `allowed` (nullptr: the whole machine).
// `allowed` is intersected with the machine; an empty intersection counts as the whole machine.
PlacementPlan plan_placement(hwloc_topology *topology, const hwloc_bitmap_s *allowed,
                             const PlacementInputs &inputs);

// Which node's channels take a copy whose destination lies on NUMA node `destination_node`
// (logical index; -1 when unknown): that node, when the plan has channels on more than one node
// and some on that one; otherwise -1, meaning any channel.
int route_copy(const PlacementPlan &plan, int destination_node);

// The launcher's count of ranks on this machine (OMPI_COMM_WORLD_LOCAL_SIZE, then
// MPI_LOCALNRANKS); 1 when neither is set to a positive integer.
int local_ranks_from_environment();

// Where a channel of the plan runs, worded as the runtime reports a channel it bound that way
// (kuplx_get_channel_placement): "numa 1 (cpus 32-63)", "core (cpus 63) numa 1", "unbound (...)".
std::string channel_text(const ChannelPlacement &channel, ThreadBinding binding);

// The plan as kupl-info prints it (several lines, each ending in '\n').
std::string describe_plan(const PlacementPlan &plan);

} // namespace kupl::topo
