#include "request_table.h"

#include "stats.h"
#include "wire_format.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kupl_mpi {
namespace {

std::mutex g_mutex;
std::atomic<size_t> g_tracked{0};  // table + detached
std::atomic<size_t> g_detached{0}; // detached only
std::unordered_map<MPI_Request, OpPtr> &table() {
    static auto *t = new std::unordered_map<MPI_Request, OpPtr>;
    return *t;
}
std::vector<std::pair<MPI_Request, OpPtr>> &detached() {
    static auto *d = new std::vector<std::pair<MPI_Request, OpPtr>>;
    return *d;
}

MPI_Count received_bytes(const MPI_Status &st) {
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    if (cancelled)
        return 0;
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    return bytes == MPI_UNDEFINED ? 0 : bytes;
}

} // namespace

MPI_Status empty_status() {
    // A real request's status after a zero-byte receive: count 0, source/tag "any".
    MPI_Status st{};
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    st.MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(&st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(&st, 0);
    return st;
}

bool requests_none() {
    return g_tracked.load(std::memory_order_acquire) == 0;
}

void requests_put(MPI_Request request, OpPtr op) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto &slot = table()[request];
    if (!slot)
        g_tracked.fetch_add(1, std::memory_order_release);
    slot = std::move(op);
}

OpPtr requests_take(MPI_Request request) {
    if (requests_none() || request == MPI_REQUEST_NULL)
        return nullptr;
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = table().find(request);
    if (it == table().end())
        return nullptr;
    OpPtr op = std::move(it->second);
    table().erase(it);
    g_tracked.fetch_sub(1, std::memory_order_release);
    return op;
}

void settle(int n, const MPI_Request *after, OpPtr *ops, const char *done, const MPI_Status *statuses) {
    {
        CopyBatch batch;
        for (int i = 0; i < n; ++i) {
            PendingOp *op = ops[i].get();
            if (!op || !done[i] || !op->is_recv || op->delivered)
                continue;
            op->delivered = true;
            // A truncated message's status counts all it carried; only the buffer's worth arrived.
            const MPI_Count bytes = std::min<MPI_Count>(received_bytes(statuses[i]), op->plan.bytes);
            if (bytes > 0) {
                stage_unpack(batch, op->plan, op->staging.data(), static_cast<size_t>(bytes));
                stats_accelerated(Accel::Recv, static_cast<uint64_t>(bytes));
            }
        }
        batch.wait();
    }
    for (int i = 0; i < n; ++i) {
        if (!ops[i])
            continue;
        if (done[i] && after[i] == MPI_REQUEST_NULL)
            ops[i].reset();
        else
            requests_put(after[i], std::move(ops[i]));
    }
}

void requests_detach(MPI_Request request, OpPtr op) {
    std::lock_guard<std::mutex> lock(g_mutex);
    detached().emplace_back(request, std::move(op));
    g_tracked.fetch_add(1, std::memory_order_release);
    g_detached.fetch_add(1, std::memory_order_release);
}

void requests_reap(bool final) {
    if (g_detached.load(std::memory_order_acquire) == 0)
        return;
    std::vector<std::pair<MPI_Request, OpPtr>> mine;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (detached().empty())
            return;
        mine.swap(detached());
    }
    std::vector<std::pair<MPI_Request, OpPtr>> pending;
    for (auto &entry : mine) {
        MPI_Request r = entry.first;
        int flag = 0;
        MPI_Status st = empty_status();
        PMPI_Test(&r, &flag, &st);
        if (!flag) {
            if (final)
                (void)entry.second.release(); // Open MPI may still touch the staging buffer: leak it
            else
                pending.push_back(std::move(entry));
            continue;
        }
        const char done = 1;
        settle(1, &r, &entry.second, &done, &st);
        if (r != MPI_REQUEST_NULL) { // persistent or failed: the application already let go of it
            OpPtr left = requests_take(r);
            PMPI_Request_free(&r);
        }
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_tracked.fetch_sub(mine.size() - pending.size(), std::memory_order_release);
    g_detached.fetch_sub(mine.size() - pending.size(), std::memory_order_release);
    for (auto &entry : pending)
        detached().push_back(std::move(entry));
}

} // namespace kupl_mpi
