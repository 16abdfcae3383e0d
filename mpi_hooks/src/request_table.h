// Side table of the requests whose data goes through a staging buffer: the
// application holds the real Open MPI request; we remember what to unpack or
// release when it completes. Thread-safe.
#pragma once

#include "planner.h"
#include "staging_pool.h"

#include <mpi.h>

#include <memory>

namespace kupl_mpi {

struct PendingOp {
    bool is_recv = false;
    bool persistent = false;
    bool delivered = false; // recv: staging already unpacked into the user buffer
    Plan plan;
    StagingBuffer staging;
    // The table's own links, so that recording an op after its real request is posted
    // allocates nothing and so cannot fail (see requests_put).
    MPI_Request handle = MPI_REQUEST_NULL;
    PendingOp *next = nullptr;
};
using OpPtr = std::unique_ptr<PendingOp>;

/** A new op, or null when out of memory (the call then goes to Open MPI untouched). */
OpPtr new_op();

/** True if no request is tracked (the fast path of every completion call). */
bool requests_none();
/** Records op under request. Never fails or throws: safe once the real request exists. */
void requests_put(MPI_Request request, OpPtr op);
/** Removes and returns the op of request, or null. */
OpPtr requests_take(MPI_Request request);

/**
 * Settles ops whose requests completed: unpacks received data (all unpacks of
 * the call overlapped in one batch), then drops the ops of freed requests and
 * puts the others (persistent, or failed and not freed) back under their handle.
 * ops[i] may be null; done[i] says whether request i completed, statuses[i] its status.
 */
void settle(int n, const MPI_Request *after, OpPtr *ops, const char *done, const MPI_Status *statuses);

/** Keeps a freed but still active request until it completes (MPI_Request_free). Never fails. */
void requests_detach(MPI_Request request, OpPtr op);
/** Completes detached requests that have finished; with final, abandons the rest. */
void requests_reap(bool final);

/**
 * For a completion call that has no memory for its bookkeeping and so did
 * nothing: raises MPI_ERR_NO_MEM on MPI_COMM_WORLD's error handler (fatal by
 * default, as an Open MPI request error would be) and returns it.
 */
int report_no_memory();

/** A status with count 0, not cancelled. */
MPI_Status empty_status();

} // namespace kupl_mpi
