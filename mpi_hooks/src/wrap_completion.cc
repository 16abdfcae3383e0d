// Completion entry points: every Wait*/Test*, MPI_Request_get_status,
// MPI_Request_free and the persistent MPI_Start/Startall. The calls go to Open
// MPI on the real requests; ours are taken out of the side table first (a
// request is completed by one thread at a time, so nobody else can miss them)
// and settled after: received data unpacked, staging buffers released.
#include "request_table.h"
#include "trace.h"
#include "wire_format.h"

#include <mpi.h>

#include <new>
#include <vector>

using namespace kupl_mpi;

namespace {

/**
 * The ops of a request array, taken out of the table for the duration of one call.
 * Everything a call needs memory for is allocated before anything is taken (and
 * before the real call), so running out of memory leaves the requests untouched:
 * the call then reports MPI_ERR_NO_MEM (report_no_memory) without doing anything.
 */
struct TakenOps {
    std::vector<OpPtr> ops;
    bool any = false;

    /** Throws std::bad_alloc (with nothing taken) if there is no memory for the array. */
    TakenOps(int n, const MPI_Request *requests) {
        if (requests_none() || n <= 0 || !requests)
            return;
        ops.resize(n);
        for (int i = 0; i < n; ++i) { // requests_take never throws
            ops[i] = requests_take(requests[i]);
            any = any || ops[i];
        }
    }
    /** Puts every op back unchanged (the call completed nothing). */
    void restore(const MPI_Request *requests) {
        for (size_t i = 0; i < ops.size(); ++i)
            if (ops[i])
                requests_put(requests[i], std::move(ops[i]));
    }
};

/** Which requests of an array completed, and their statuses, for settle(). */
struct Completion {
    std::vector<char> done;
    std::vector<MPI_Status> statuses;
    explicit Completion(int n) : done(n > 0 ? n : 0, 0), statuses(n > 0 ? n : 0, empty_status()) {}
    void settle_into(int n, MPI_Request *requests, TakenOps &taken) {
        settle(n, requests, taken.ops.data(), done.data(), statuses.data());
    }
};

/** For Waitall/Testall: which requests the error says completed. */
bool completed_in(int rc, const MPI_Status &st) {
    if (rc == MPI_SUCCESS)
        return true;
    return rc == MPI_ERR_IN_STATUS && st.MPI_ERROR != MPI_ERR_PENDING;
}

/** Waitsome/Testsome share everything but the call. */
int some(bool wait, int incount, MPI_Request requests[], int *outcount, int indices[],
         MPI_Status statuses[]) {
    if (requests_none())
        return wait ? PMPI_Waitsome(incount, requests, outcount, indices, statuses)
                    : PMPI_Testsome(incount, requests, outcount, indices, statuses);
    Completion c(incount);
    std::vector<MPI_Status> st(incount > 0 ? incount : 1, empty_status());
    TakenOps taken(incount, requests);
    if (!taken.any)
        return wait ? PMPI_Waitsome(incount, requests, outcount, indices, statuses)
                    : PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int rc = wait ? PMPI_Waitsome(incount, requests, outcount, indices, st.data())
                  : PMPI_Testsome(incount, requests, outcount, indices, st.data());
    if (*outcount != MPI_UNDEFINED)
        for (int j = 0; j < *outcount; ++j) {
            const int i = indices[j];
            if (i < 0 || i >= incount || (rc == MPI_ERR_IN_STATUS && st[j].MPI_ERROR == MPI_ERR_PENDING))
                continue;
            c.done[i] = 1;
            c.statuses[i] = st[j];
        }
    c.settle_into(incount, requests, taken);
    if (statuses != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
        for (int j = 0; j < *outcount; ++j)
            statuses[j] = st[j];
    return rc;
}

} // namespace

extern "C" {

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    CallTrace trace("MPI_Wait");
    requests_reap(false);
    OpPtr op = request ? requests_take(*request) : nullptr;
    if (!op)
        return PMPI_Wait(request, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Wait(request, &st);
    const char done = 1; // MPI_Wait always completes the request, even with an error
    settle(1, request, &op, &done, &st);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    requests_reap(false);
    OpPtr op = request ? requests_take(*request) : nullptr;
    if (!op)
        return PMPI_Test(request, flag, status);
    const MPI_Request before = *request;
    MPI_Status st = empty_status();
    int rc = PMPI_Test(request, flag, &st);
    const char done = *flag != 0;
    if (!done) {
        requests_put(before, std::move(op));
        return rc;
    }
    settle(1, request, &op, &done, &st);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) try {
    CallTrace trace("MPI_Waitall");
    requests_reap(false);
    if (requests_none())
        return PMPI_Waitall(count, requests, statuses);
    Completion c(count);
    TakenOps taken(count, requests);
    if (!taken.any)
        return PMPI_Waitall(count, requests, statuses);
    int rc = PMPI_Waitall(count, requests, c.statuses.data());
    for (int i = 0; i < count; ++i)
        c.done[i] = completed_in(rc, c.statuses[i]);
    c.settle_into(count, requests, taken);
    if (statuses != MPI_STATUSES_IGNORE && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS))
        for (int i = 0; i < count; ++i)
            statuses[i] = c.statuses[i];
    return rc;
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) try {
    requests_reap(false);
    if (requests_none() || count <= 0 || !requests)
        return PMPI_Testall(count, requests, flag, statuses);
    std::vector<MPI_Request> before(requests, requests + count);
    Completion c(count);
    TakenOps taken(count, requests);
    if (!taken.any)
        return PMPI_Testall(count, requests, flag, statuses);
    int rc = PMPI_Testall(count, requests, flag, c.statuses.data());
    if (!*flag) { // Testall completes all or nothing
        taken.restore(before.data());
        return rc;
    }
    for (int i = 0; i < count; ++i)
        c.done[i] = completed_in(rc, c.statuses[i]);
    c.settle_into(count, requests, taken);
    if (statuses != MPI_STATUSES_IGNORE && *flag)
        for (int i = 0; i < count; ++i)
            statuses[i] = c.statuses[i];
    return rc;
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) try {
    requests_reap(false);
    if (requests_none())
        return PMPI_Waitany(count, requests, index, status);
    Completion c(count);
    TakenOps taken(count, requests);
    if (!taken.any)
        return PMPI_Waitany(count, requests, index, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Waitany(count, requests, index, &st);
    if (*index != MPI_UNDEFINED && *index >= 0 && *index < count) {
        c.done[*index] = 1;
        c.statuses[*index] = st;
    }
    c.settle_into(count, requests, taken);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) try {
    requests_reap(false);
    if (requests_none())
        return PMPI_Testany(count, requests, index, flag, status);
    Completion c(count);
    TakenOps taken(count, requests);
    if (!taken.any)
        return PMPI_Testany(count, requests, index, flag, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Testany(count, requests, index, flag, &st);
    if (*flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count) {
        c.done[*index] = 1;
        c.statuses[*index] = st;
    }
    c.settle_into(count, requests, taken);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) try {
    requests_reap(false);
    return some(true, incount, requests, outcount, indices, statuses);
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) try {
    requests_reap(false);
    return some(false, incount, requests, outcount, indices, statuses);
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

// Completion without freeing: unpack now, since the application may read the
// buffer as soon as the flag is set; the later Wait/Test finds it delivered.
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    OpPtr op = requests_take(request);
    if (!op)
        return PMPI_Request_get_status(request, flag, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Request_get_status(request, flag, &st);
    const char done = *flag != 0;
    if (done) {
        // settle() would drop nothing here: the request stays allocated.
        settle(1, &request, &op, &done, &st);
        if (status != MPI_STATUS_IGNORE)
            *status = st;
    } else {
        requests_put(request, std::move(op));
    }
    return rc;
}

int MPI_Request_free(MPI_Request *request) {
    OpPtr op = request ? requests_take(*request) : nullptr;
    if (!op)
        return PMPI_Request_free(request);
    int flag = 0;
    MPI_Status st = empty_status();
    PMPI_Request_get_status(*request, &flag, &st);
    if (!flag) {
        // Still active: Open MPI must keep it (and our staging buffer) until it completes.
        requests_detach(*request, std::move(op));
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    MPI_Request keep = *request;
    const char done = 1;
    settle(1, &keep, &op, &done, &st);
    OpPtr again = requests_take(keep); // settle puts it back under the live handle
    return PMPI_Request_free(request);
}

int MPI_Start(MPI_Request *request) {
    OpPtr op = request ? requests_take(*request) : nullptr;
    if (!op)
        return PMPI_Start(request);
    if (op->is_recv) {
        op->delivered = false;
    } else {
        CopyBatch batch;
        stage_pack(batch, op->plan, op->staging.data());
        batch.wait();
        stats_accelerated(Accel::Persistent, op->plan.bytes);
    }
    int rc = PMPI_Start(request);
    requests_put(*request, std::move(op));
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) try {
    TakenOps taken(count, requests);
    if (!taken.any)
        return PMPI_Startall(count, requests);
    {
        CopyBatch batch; // all sends of the call packed together
        for (auto &op : taken.ops) {
            if (!op)
                continue;
            if (op->is_recv) {
                op->delivered = false;
            } else {
                stage_pack(batch, op->plan, op->staging.data());
                stats_accelerated(Accel::Persistent, op->plan.bytes);
            }
        }
        batch.wait();
    }
    int rc = PMPI_Startall(count, requests);
    taken.restore(requests);
    return rc;
} catch (const std::bad_alloc &) {
    return report_no_memory();
}

} // extern "C"
