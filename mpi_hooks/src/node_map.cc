#include "node_map.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace kupl_mpi {
namespace {

struct CommLocality {
    bool inter = false;
    bool all_local = false;
    std::vector<char> local; // per rank of the communicator
};

std::mutex g_mutex;
std::atomic<bool> g_ready{false};
int g_keyval = MPI_KEYVAL_INVALID;
MPI_Group g_world_group = MPI_GROUP_NULL;
std::vector<char> g_world_local; // per MPI_COMM_WORLD rank
int g_ranks_on_node = 1;

int delete_locality(MPI_Comm, int, void *value, void *) {
    delete static_cast<CommLocality *>(value);
    return MPI_SUCCESS;
}

/** The locality of comm, or null if there is no memory for it (the call then goes to Open MPI). */
CommLocality *compute(MPI_Comm comm) try {
    auto loc = std::make_unique<CommLocality>();
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        loc->inter = true;
        return loc.release();
    }
    int size = 0;
    PMPI_Comm_size(comm, &size);
    MPI_Group group;
    PMPI_Comm_group(comm, &group);
    std::vector<int> ranks, world;
    try {
        ranks.resize(size);
        world.resize(size);
        loc->local.resize(size);
    } catch (const std::bad_alloc &) {
        PMPI_Group_free(&group);
        throw;
    }
    for (int i = 0; i < size; ++i)
        ranks[i] = i;
    PMPI_Group_translate_ranks(group, size, ranks.data(), g_world_group, world.data());
    PMPI_Group_free(&group);
    loc->all_local = true;
    for (int i = 0; i < size; ++i) {
        loc->local[i] = world[i] != MPI_UNDEFINED && g_world_local[world[i]];
        loc->all_local = loc->all_local && loc->local[i];
    }
    return loc.release();
} catch (const std::bad_alloc &) {
    return nullptr;
}

} // namespace

void node_map_init() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_ready.load())
        return;
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Group node_group;
    PMPI_Comm_group(node, &node_group);
    PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
    int world_size = 0, node_size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_size(node, &node_size);
    bool ok = true;
    try {
        std::vector<int> ranks(node_size), world(node_size);
        for (int i = 0; i < node_size; ++i)
            ranks[i] = i;
        PMPI_Group_translate_ranks(node_group, node_size, ranks.data(), g_world_group, world.data());
        g_world_local.assign(world_size, 0);
        for (int r : world)
            if (r != MPI_UNDEFINED)
                g_world_local[r] = 1;
    } catch (const std::bad_alloc &) {
        ok = false; // no node map: every message goes to Open MPI (counted as no-node-map)
    }
    g_ranks_on_node = node_size;
    PMPI_Group_free(&node_group);
    PMPI_Comm_free(&node);
    if (!ok) {
        PMPI_Group_free(&g_world_group);
        return;
    }
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_locality, &g_keyval, nullptr);
    g_ready.store(true);
}

void node_map_finalize() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_ready.load())
        return;
    g_ready.store(false);
    // Attributes on MPI_COMM_WORLD/SELF are deleted by MPI_Finalize itself.
    PMPI_Comm_free_keyval(&g_keyval);
    PMPI_Group_free(&g_world_group);
}

int ranks_on_node() {
    return g_ready.load(std::memory_order_acquire) ? g_ranks_on_node : 1;
}

bool peer_on_node(MPI_Comm comm, int peer, Fallback *why) {
    if (peer == MPI_PROC_NULL) {
        *why = Fallback::ProcNull;
        return false;
    }
    if (!g_ready.load(std::memory_order_acquire)) {
        *why = Fallback::NoNodeMap;
        return false;
    }
    if (comm == MPI_COMM_NULL) {
        *why = Fallback::BadArgument;
        return false;
    }
    CommLocality *loc = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        int found = 0;
        PMPI_Comm_get_attr(comm, g_keyval, &loc, &found);
        if (!found) {
            loc = compute(comm);
            if (loc)
                PMPI_Comm_set_attr(comm, g_keyval, loc);
        }
    }
    if (!loc) { // computed again at the next call
        *why = Fallback::NoMemory;
        return false;
    }
    if (loc->inter) {
        *why = Fallback::Intercomm;
        return false;
    }
    if (peer == MPI_ANY_SOURCE) {
        if (!loc->all_local)
            *why = Fallback::AnySourceOffNode;
        return loc->all_local;
    }
    if (peer < 0 || peer >= static_cast<int>(loc->local.size())) {
        *why = Fallback::BadArgument;
        return false;
    }
    if (!loc->local[peer])
        *why = Fallback::OffNode;
    return loc->local[peer];
}

} // namespace kupl_mpi
