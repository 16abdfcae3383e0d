#include "numa_topology.h"

#include "plugin_log.h"

#include <cstdlib>

namespace kupl_omp {

NumaTopology::NumaTopology() {
    if (hwloc_topology_init(&topology_) != 0) {
        topology_ = nullptr;
        report_error("hwloc_topology_init failed; assuming one NUMA node");
        return;
    }
    if (hwloc_topology_load(topology_) != 0) {
        hwloc_topology_destroy(topology_);
        topology_ = nullptr;
        report_error("hwloc_topology_load failed; assuming one NUMA node");
        return;
    }
    int nodes = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_NUMANODE);
    num_nodes_ = nodes > 0 ? nodes : 1;
}

NumaTopology::~NumaTopology() {
    if (topology_)
        hwloc_topology_destroy(topology_);
}

hwloc_obj_t NumaTopology::node_obj(int node) const {
    if (!topology_)
        return nullptr;
    return hwloc_get_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(node));
}

int NumaTopology::os_index(int node) const {
    hwloc_obj_t obj = node_obj(node);
    return obj ? static_cast<int>(obj->os_index) : -1;
}

std::string NumaTopology::cpuset_list(int node) const {
    hwloc_obj_t obj = node_obj(node);
    if (!obj || !obj->cpuset)
        return "unknown";
    char *text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, obj->cpuset) < 0 || !text)
        return "unknown";
    std::string result(text);
    free(text);
    return result;
}

uint64_t NumaTopology::local_memory(int node) const {
    hwloc_obj_t obj = node_obj(node);
    return obj && obj->attr ? obj->attr->numanode.local_memory : 0;
}

std::string NumaTopology::cpu_model() const {
    if (!topology_)
        return "unknown";
    hwloc_obj_t root = hwloc_get_root_obj(topology_);
    const char *model = hwloc_obj_get_info_by_name(root, "CPUModel");
    if (!model) {
        hwloc_obj_t package = hwloc_get_obj_by_type(topology_, HWLOC_OBJ_PACKAGE, 0);
        model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : nullptr;
    }
    return model ? model : "unknown";
}

void *NumaTopology::alloc_bound(size_t size, int node) const {
    hwloc_obj_t obj = node_obj(node);
    if (!obj)
        return nullptr;
    // hwloc falls back to plain allocation when binding is unsupported (no STRICT flag).
    return hwloc_alloc_membind(topology_, size, obj->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
}

void NumaTopology::free_bound(void *ptr, size_t size) const {
    if (topology_ && ptr)
        hwloc_free(topology_, ptr, size);
}

} // namespace kupl_omp
