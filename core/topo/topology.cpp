#include "topo/topology.h"

#include "support/log.h"

#include <hwloc.h>

#include <cstdio>

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

std::string Topology::place_calling_thread(int core, ThreadBinding binding) const {
    if (binding == ThreadBinding::none)
        return "unbound (KUPL_BIND_CHANNELS=0)";
    if (topology_ == nullptr)
        return "unbound (no topology)";
    hwloc_obj_t obj =
        hwloc_get_obj_by_type(topology_, HWLOC_OBJ_CORE, static_cast<unsigned>(core % num_cores_));
    if (obj == nullptr)
        obj = hwloc_get_obj_by_type(topology_, HWLOC_OBJ_PU, static_cast<unsigned>(core % num_cores_));
    if (obj == nullptr || obj->cpuset == nullptr)
        return "unbound (no such core)";
    hwloc_obj_t node = hwloc_get_obj_inside_cpuset_by_type(topology_, obj->cpuset, HWLOC_OBJ_NUMANODE, 0);
    if (node == nullptr) // NUMA nodes hang off a parent of the core; find the one covering it
        for (hwloc_obj_t up = obj; up != nullptr && node == nullptr; up = up->parent)
            if (up->memory_arity > 0)
                node = up->memory_first_child;
    const int node_index = node != nullptr ? static_cast<int>(node->logical_index) : 0;
    if (binding == ThreadBinding::numa_node &&
        (num_numa_nodes_ < 2 || node == nullptr || node->cpuset == nullptr)) {
        char text[96];
        std::snprintf(text, sizeof text, "unbound (one NUMA node: the scheduler places it), numa %d",
                      node_index);
        return text;
    }
    hwloc_const_cpuset_t target = binding == ThreadBinding::core ? obj->cpuset : node->cpuset;
    char cpus[64];
    hwloc_bitmap_list_snprintf(cpus, sizeof cpus, target);
    char text[128];
    if (hwloc_set_cpubind(topology_, target, HWLOC_CPUBIND_THREAD) != 0) {
        std::snprintf(text, sizeof text, "unbound (binding to cpus %s refused)", cpus);
        return text;
    }
    if (binding == ThreadBinding::core)
        std::snprintf(text, sizeof text, "core %u (cpus %s) numa %d", obj->logical_index, cpus, node_index);
    else
        std::snprintf(text, sizeof text, "numa %d (cpus %s)", node_index, cpus);
    return text;
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
