#include "topo/topology.h"

#include "topo/placement.h"

#include "support/log.h"

#include <hwloc.h>

#include <cstdio>
#include <new>

namespace kupl::topo {

using support::log;
using support::LogLevel;

Topology::Topology() {
    if (hwloc_topology_init(&topology_) != 0 || hwloc_topology_load(topology_) != 0) {
        log(LogLevel::warn, "hwloc could not load the topology; assuming one core, one NUMA node");
        if (topology_ != nullptr)
            hwloc_topology_destroy(topology_);
        topology_ = nullptr;
        return;
    }
    int cores = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_CORE);
    if (cores <= 0)
        cores = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_PU);
    num_cores_ = cores > 0 ? cores : 1;
    int nodes = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_NUMANODE);
    num_numa_nodes_ = nodes > 0 ? nodes : 1;
    for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
        hwloc_obj_t cache = hwloc_get_obj_by_type(topology_, type, 0);
        if (cache != nullptr && cache->attr != nullptr) {
            llc_bytes_ = static_cast<std::size_t>(cache->attr->cache.size);
            break;
        }
    }
}

Topology::~Topology() {
    if (topology_ != nullptr)
        hwloc_topology_destroy(topology_);
}

PlacementPlan Topology::plan(const PlacementInputs &inputs) const {
    if (topology_ == nullptr)
        return plan_placement(nullptr, nullptr, inputs);
    // The process's binding (the union over its threads): an `mpirun --bind-to core` rank owns one
    // core, and the runtime sizes itself by that, not by the machine.
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (allowed == nullptr)
        throw std::bad_alloc();
    const bool known = hwloc_get_cpubind(topology_, allowed, HWLOC_CPUBIND_PROCESS) == 0;
    try {
        PlacementPlan plan = plan_placement(topology_, known ? allowed : nullptr, inputs);
        hwloc_bitmap_free(allowed);
        return plan;
    } catch (...) {
        hwloc_bitmap_free(allowed);
        throw;
    }
}

std::string Topology::bind_calling_thread(const ChannelPlacement &channel, ThreadBinding binding) const {
    if (binding == ThreadBinding::none || channel.cpus.empty())
        return channel_text(channel, binding);
    if (topology_ == nullptr)
        return "unbound (no topology)";
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == nullptr || hwloc_bitmap_list_sscanf(set, channel.cpus.c_str()) != 0) {
        hwloc_bitmap_free(set);
        return "unbound (no cpus)";
    }
    const int refused = hwloc_set_cpubind(topology_, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    if (refused != 0)
        return "unbound (binding to cpus " + channel.cpus + " refused)";
    return channel_text(channel, binding); // worded as kupl-info --topology words the plan
}

void Topology::run_bound_to(const std::string &cpus, const std::function<void()> &start) const {
    hwloc_bitmap_t wanted = topology_ != nullptr && !cpus.empty() ? hwloc_bitmap_alloc() : nullptr;
    hwloc_bitmap_t own = wanted != nullptr ? hwloc_bitmap_alloc() : nullptr;
    bool rebound = false;
    if (own != nullptr && hwloc_bitmap_list_sscanf(wanted, cpus.c_str()) == 0 &&
        hwloc_get_cpubind(topology_, own, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_isequal(own, wanted))
        rebound = hwloc_set_cpubind(topology_, wanted, HWLOC_CPUBIND_THREAD) == 0;
    try {
        start();
    } catch (...) {
        if (rebound)
            hwloc_set_cpubind(topology_, own, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(own);
        hwloc_bitmap_free(wanted);
        throw;
    }
    if (rebound)
        hwloc_set_cpubind(topology_, own, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(own);
    hwloc_bitmap_free(wanted);
}

int Topology::numa_node_of(const void *address) const {
    if (topology_ == nullptr || num_numa_nodes_ < 2)
        return -1;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == nullptr)
        return -1;
    int node = -1;
    if (hwloc_get_area_memlocation(topology_, address, 1, nodes, HWLOC_MEMBIND_BYNODESET) == 0 &&
        hwloc_bitmap_weight(nodes) == 1) {
        // One node: a real answer. Several (a topology that is not this machine answers with all
        // of them) or none (the page was never touched) say nothing.
        hwloc_obj_t obj =
            hwloc_get_numanode_obj_by_os_index(topology_, static_cast<unsigned>(hwloc_bitmap_first(nodes)));
        if (obj != nullptr)
            node = static_cast<int>(obj->logical_index);
    }
    hwloc_bitmap_free(nodes);
    return node;
}

bool Topology::bind_memory_to_tier(void *ptr, std::size_t size, MemoryTier tier) const {
    if (topology_ == nullptr || tier == MemoryTier::default_tier || num_numa_nodes_ < 2)
        return false;
    hwloc_memattr_id_t attribute =
        tier == MemoryTier::high_bandwidth ? HWLOC_MEMATTR_ID_BANDWIDTH : HWLOC_MEMATTR_ID_CAPACITY;
    hwloc_bitmap_t here = hwloc_bitmap_alloc();
    hwloc_get_cpubind(topology_, here, HWLOC_CPUBIND_THREAD);
    hwloc_location initiator{};
    initiator.type = HWLOC_LOCATION_TYPE_CPUSET;
    initiator.location.cpuset = here;
    hwloc_obj_t best = nullptr;
    hwloc_uint64_t value = 0;
    int found = hwloc_memattr_get_best_target(topology_, attribute, &initiator, 0, &best, &value);
    bool bound = false;
    if (found == 0 && best != nullptr && best->nodeset != nullptr)
        bound = hwloc_set_area_membind(topology_, ptr, size, best->nodeset, HWLOC_MEMBIND_BIND,
                                       HWLOC_MEMBIND_BYNODESET) == 0;
    hwloc_bitmap_free(here);
    return bound;
}

std::string Topology::summary() const {
    if (topology_ == nullptr)
        return "no topology (hwloc failed to load)";
    int packages = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_PACKAGE);
    int pus = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_PU);
    char text[256];
    std::snprintf(text, sizeof text,
                  "%d package(s), %d NUMA node(s), %d core(s), %d PU(s), last-level cache %zu KiB", packages,
                  num_numa_nodes_, num_cores_, pus, llc_bytes_ / 1024);
    return text;
}

} // namespace kupl::topo
