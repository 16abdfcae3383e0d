#include "request_table.h"
#include "trace.h"

#include "stats.h"
#include "wire_format.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <utility>

namespace kupl_mpi {
namespace {

std::mutex g_mutex;
std::atomic<size_t> g_tracked{0};  // table + detached
std::atomic<size_t> g_detached{0}; // detached only

// The table is a fixed array of chains through PendingOp::next, and the detached
// requests one more chain: linking an op in never allocates, so recording a
// request whose real Open MPI request is already posted cannot fail.
constexpr size_t kBuckets = 4096;
PendingOp *g_buckets[kBuckets];
PendingOp *g_detached_list = nullptr;

PendingOp *&bucket(MPI_Request request) {
    const auto v = reinterpret_cast<uintptr_t>(request);
    return g_buckets[((v >> 4) ^ (v >> 16)) % kBuckets];
}

/** Unlinks and returns the op recorded under request, or null. Caller holds g_mutex. */
PendingOp *unlink(MPI_Request request) {
    for (PendingOp **link = &bucket(request); *link; link = &(*link)->next) {
        PendingOp *op = *link;
        if (op->handle == request) {
            *link = op->next;
            op->next = nullptr;
            return op;
        }
    }
    return nullptr;
}

} // namespace

OpPtr new_op() {
    return OpPtr(new (std::nothrow) PendingOp);
}

namespace {

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

int report_no_memory() {
    stats_fallback(Fallback::NoMemory);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    return MPI_ERR_NO_MEM;
}

bool requests_none() {
    return g_tracked.load(std::memory_order_acquire) == 0;
}

void requests_put(MPI_Request request, OpPtr op) {
    OpPtr replaced;
    std::lock_guard<std::mutex> lock(g_mutex);
    replaced.reset(unlink(request));
    if (!replaced)
        g_tracked.fetch_add(1, std::memory_order_release);
    PendingOp *p = op.release();
    p->handle = request;
    p->next = bucket(request);
    bucket(request) = p;
}

OpPtr requests_take(MPI_Request request) {
    if (requests_none() || request == MPI_REQUEST_NULL)
        return nullptr;
    std::lock_guard<std::mutex> lock(g_mutex);
    OpPtr op(unlink(request));
    if (op)
        g_tracked.fetch_sub(1, std::memory_order_release);
    return op;
}

void settle(int n, const MPI_Request *after, OpPtr *ops, const char *done, const MPI_Status *statuses) {
    {
        const std::uint64_t trace_start = kupl_trace_on() ? kupl_trace_now() : 0;
        std::uint64_t trace_bytes = 0;
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
                trace_bytes += static_cast<std::uint64_t>(bytes);
            }
        }
        batch.wait();
        if (trace_bytes != 0)
            trace_copy_span("unpack", trace_start, trace_bytes);
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
    PendingOp *p = op.release();
    p->handle = request;
    p->next = g_detached_list;
    g_detached_list = p;
    g_tracked.fetch_add(1, std::memory_order_release);
    g_detached.fetch_add(1, std::memory_order_release);
}

void requests_reap(bool final) {
    if (g_detached.load(std::memory_order_acquire) == 0)
        return;
    PendingOp *mine = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        std::swap(mine, g_detached_list);
    }
    PendingOp *pending = nullptr, *pending_tail = nullptr;
    size_t settled = 0;
    while (mine) {
        OpPtr op(mine);
        mine = mine->next;
        op->next = nullptr;
        MPI_Request r = op->handle;
        int flag = 0;
        MPI_Status st = empty_status();
        PMPI_Test(&r, &flag, &st);
        if (!flag) {
            if (final) {
                (void)op.release(); // Open MPI may still touch the staging buffer: leak it
                ++settled;
            } else {
                PendingOp *p = op.release();
                (pending_tail ? pending_tail->next : pending) = p;
                pending_tail = p;
            }
            continue;
        }
        ++settled;
        const char done = 1;
        settle(1, &r, &op, &done, &st);
        if (r != MPI_REQUEST_NULL) { // persistent or failed: the application already let go of it
            OpPtr left = requests_take(r);
            PMPI_Request_free(&r);
        }
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_tracked.fetch_sub(settled, std::memory_order_release);
    g_detached.fetch_sub(settled, std::memory_order_release);
    if (pending_tail) {
        pending_tail->next = g_detached_list;
        g_detached_list = pending;
    }
}

} // namespace kupl_mpi
