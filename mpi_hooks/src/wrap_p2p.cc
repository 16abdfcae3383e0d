// Point-to-point entry points. An accelerated send packs the user's grid into a
// staging buffer with the copy engine before the real send is posted, so the
// Open MPI request is complete in itself and progresses wherever Open MPI
// progresses (e.g. inside MPI_Barrier). An accelerated receive lands in a
// staging buffer and is unpacked when the application completes the request.
// On the wire the message is the packed bytes as leaf elements (wire_format.h): what Open MPI
// itself would send, so peers may use any layout of the same signature.
#include "request_table.h"
#include "trace.h"
#include "wire_format.h"

#include <mpi.h>

#include <algorithm>

namespace kupl_mpi {
namespace {

using BlockingSend = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
using NonblockingSend = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/** A staging buffer for p; false (and counted) if there is no memory: the call then goes to Open MPI. */
bool new_staging(const Plan &p, StagingBuffer *staging) {
    *staging = StagingBuffer(staging_size(p));
    if (*staging)
        return true;
    stats_fallback(Fallback::NoMemory);
    return false;
}

/** A fresh op for a request, or null (counted) if there is no memory. */
OpPtr new_op_or_count() {
    OpPtr op = new_op();
    if (!op)
        stats_fallback(Fallback::NoMemory);
    return op;
}

/** Packs plan's grid into a fresh staging buffer; false if no memory. */
bool stage_send(const Plan &p, StagingBuffer *staging) {
    if (!new_staging(p, staging))
        return false;
    const std::uint64_t trace_start = kupl_trace_on() ? kupl_trace_now() : 0;
    CopyBatch batch;
    stage_pack(batch, p, staging->data());
    batch.wait();
    trace_copy_span("pack", trace_start, p.bytes);
    stats_accelerated(Accel::Send, p.bytes);
    return true;
}

int blocking_send(BlockingSend send, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm) {
    Plan p;
    StagingBuffer staging;
    if (!plan_or_count(Use::Send, buf, count, type, comm, dest, &p) || !stage_send(p, &staging))
        return send(buf, count, type, dest, tag, comm);
    return send(staging.data(), p.wire_count, p.wire_type, dest, tag, comm);
}

int nonblocking_send(NonblockingSend send, bool persistent, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    Plan p;
    if (!request || !plan_or_count(Use::Send, buf, count, type, comm, dest, &p))
        return send(buf, count, type, dest, tag, comm, request);
    OpPtr op = new_op_or_count();
    if (!op)
        return send(buf, count, type, dest, tag, comm, request);
    op->plan = p;
    op->persistent = persistent;
    // A persistent send packs at every MPI_Start, not now.
    if (persistent ? !new_staging(p, &op->staging) : !stage_send(p, &op->staging))
        return send(buf, count, type, dest, tag, comm, request);
    int rc = send(op->staging.data(), p.wire_count, p.wire_type, dest, tag, comm, request);
    if (rc == MPI_SUCCESS)
        requests_put(*request, std::move(op));
    return rc;
}

using NonblockingRecv = int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

int nonblocking_recv(NonblockingRecv recv, bool persistent, void *buf, int count, MPI_Datatype type,
                     int source, int tag, MPI_Comm comm, MPI_Request *request) {
    Plan p;
    if (!request || !plan_or_count(Use::Recv, buf, count, type, comm, source, &p))
        return recv(buf, count, type, source, tag, comm, request);
    OpPtr op = new_op_or_count();
    if (!op)
        return recv(buf, count, type, source, tag, comm, request);
    op->plan = p;
    op->is_recv = true;
    op->persistent = persistent;
    if (!new_staging(p, &op->staging))
        return recv(buf, count, type, source, tag, comm, request);
    int rc = recv(op->staging.data(), p.wire_count, p.wire_type, source, tag, comm, request);
    if (rc == MPI_SUCCESS)
        requests_put(*request, std::move(op));
    return rc;
}

/**
 * After a blocking receive into staging returned rc: unpacks what arrived (also
 * the head of a truncated message) and hands the status over. On other errors
 * Open MPI writes neither data nor status, and neither do we.
 */
void deliver(int rc, const Plan &p, const StagingBuffer &staging, const MPI_Status &st, MPI_Status *status) {
    // A receive freed while active (MPI_Request_free) that matched earlier on this
    // communicator has completed by now: the program may read its buffer next.
    requests_reap(false);
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        PMPI_Error_class(rc, &error_class);
    if (error_class != MPI_SUCCESS && error_class != MPI_ERR_TRUNCATE)
        return;
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    if (cancelled || bytes == MPI_UNDEFINED || bytes <= 0)
        return;
    // A truncated message's status counts all it carried; only the buffer's worth arrived.
    bytes = std::min<MPI_Count>(bytes, static_cast<MPI_Count>(p.bytes));
    const std::uint64_t trace_start = kupl_trace_on() ? kupl_trace_now() : 0;
    CopyBatch batch;
    stage_unpack(batch, p, staging.data(), static_cast<size_t>(bytes));
    batch.wait();
    trace_copy_span("unpack", trace_start, static_cast<uint64_t>(bytes));
    stats_accelerated(Accel::Recv, static_cast<uint64_t>(bytes));
}

} // namespace
} // namespace kupl_mpi

using namespace kupl_mpi;

extern "C" {

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    CallTrace trace("MPI_Send");
    trace.message(true, dest, tag, count, type, comm);
    return blocking_send(PMPI_Send, buf, count, type, dest, tag, comm);
}
int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    CallTrace trace("MPI_Ssend");
    trace.message(true, dest, tag, count, type, comm);
    return blocking_send(PMPI_Ssend, buf, count, type, dest, tag, comm);
}
int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    CallTrace trace("MPI_Rsend");
    trace.message(true, dest, tag, count, type, comm);
    return blocking_send(PMPI_Rsend, buf, count, type, dest, tag, comm);
}
// Buffered sends copy the packed bytes into the attached buffer; they take the
// same space there (MPI_Pack_size of an equal signature).
int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    CallTrace trace("MPI_Bsend");
    trace.message(true, dest, tag, count, type, comm);
    return blocking_send(PMPI_Bsend, buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    CallTrace trace("MPI_Isend");
    trace.message(true, dest, tag, count, type, comm);
    return nonblocking_send(PMPI_Isend, false, buf, count, type, dest, tag, comm, request);
}
int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    CallTrace trace("MPI_Issend");
    trace.message(true, dest, tag, count, type, comm);
    return nonblocking_send(PMPI_Issend, false, buf, count, type, dest, tag, comm, request);
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    CallTrace trace("MPI_Irsend");
    trace.message(true, dest, tag, count, type, comm);
    return nonblocking_send(PMPI_Irsend, false, buf, count, type, dest, tag, comm, request);
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    CallTrace trace("MPI_Ibsend");
    trace.message(true, dest, tag, count, type, comm);
    return nonblocking_send(PMPI_Ibsend, false, buf, count, type, dest, tag, comm, request);
}
int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    return nonblocking_send(PMPI_Send_init, true, buf, count, type, dest, tag, comm, request);
}
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return nonblocking_send(PMPI_Ssend_init, true, buf, count, type, dest, tag, comm, request);
}
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return nonblocking_send(PMPI_Rsend_init, true, buf, count, type, dest, tag, comm, request);
}
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return nonblocking_send(PMPI_Bsend_init, true, buf, count, type, dest, tag, comm, request);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    CallTrace trace("MPI_Recv");
    trace.message(false, source, tag, count, type, comm);
    Plan p;
    if (!plan_or_count(Use::Recv, buf, count, type, comm, source, &p)) {
        int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
        requests_reap(false); // see deliver()
        return rc;
    }
    StagingBuffer staging;
    if (!new_staging(p, &staging))
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Recv(staging.data(), p.wire_count, p.wire_type, source, tag, comm, &st);
    deliver(rc, p, staging, st, status);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    CallTrace trace("MPI_Irecv");
    trace.message(false, source, tag, count, type, comm);
    return nonblocking_recv(PMPI_Irecv, false, buf, count, type, source, tag, comm, request);
}
int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    return nonblocking_recv(PMPI_Recv_init, true, buf, count, type, source, tag, comm, request);
}

// A matched message: its source is fixed already, so only the layout matters.
int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
    Plan p;
    if (!message || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC ||
        !plan_or_count(Use::MatchedRecv, buf, count, type, MPI_COMM_NULL, 0, &p))
        return PMPI_Mrecv(buf, count, type, message, status);
    StagingBuffer staging;
    if (!new_staging(p, &staging))
        return PMPI_Mrecv(buf, count, type, message, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Mrecv(staging.data(), p.wire_count, p.wire_type, message, &st);
    deliver(rc, p, staging, st, status);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request) {
    Plan p;
    if (!message || !request || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC ||
        !plan_or_count(Use::MatchedRecv, buf, count, type, MPI_COMM_NULL, 0, &p))
        return PMPI_Imrecv(buf, count, type, message, request);
    OpPtr op = new_op_or_count();
    if (!op)
        return PMPI_Imrecv(buf, count, type, message, request);
    op->plan = p;
    op->is_recv = true;
    if (!new_staging(p, &op->staging))
        return PMPI_Imrecv(buf, count, type, message, request);
    int rc = PMPI_Imrecv(op->staging.data(), p.wire_count, p.wire_type, message, request);
    if (rc == MPI_SUCCESS)
        requests_put(*request, std::move(op));
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status *status) {
    CallTrace trace("MPI_Sendrecv");
    trace.message(true, dest, sendtag, sendcount, sendtype, comm);
    trace.message(false, source, recvtag, recvcount, recvtype, comm);
    Plan sp, rp;
    StagingBuffer sstage, rstage;
    const bool send_fast =
        plan_or_count(Use::Send, sendbuf, sendcount, sendtype, comm, dest, &sp) && stage_send(sp, &sstage);
    const bool recv_fast =
        plan_or_count(Use::Recv, recvbuf, recvcount, recvtype, comm, source, &rp) && new_staging(rp, &rstage);
    MPI_Status st = empty_status();
    int rc = PMPI_Sendrecv(send_fast ? sstage.data() : sendbuf, send_fast ? sp.wire_count : sendcount,
                           send_fast ? sp.wire_type : sendtype, dest, sendtag,
                           recv_fast ? rstage.data() : recvbuf, recv_fast ? rp.wire_count : recvcount,
                           recv_fast ? rp.wire_type : recvtype, source, recvtag, comm, &st);
    if (recv_fast) {
        deliver(rc, rp, rstage, st, status);
    } else if (status != MPI_STATUS_IGNORE) {
        int error_class = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            PMPI_Error_class(rc, &error_class);
        if (error_class == MPI_SUCCESS || error_class == MPI_ERR_TRUNCATE)
            *status = st;
    }
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status) {
    CallTrace trace("MPI_Sendrecv_replace");
    trace.message(true, dest, sendtag, count, type, comm);
    trace.message(false, source, recvtag, count, type, comm);
    Plan p, from_source;
    StagingBuffer staging;
    // Planned as a receive too: the source must be on the node and the buffer safe to unpack into
    // (blocks proven disjoint), which a send alone does not need.
    const bool fast = plan_or_count(Use::Send, buf, count, type, comm, dest, &p) &&
                      plan_or_count(Use::Recv, buf, count, type, comm, source, &from_source) &&
                      stage_send(p, &staging);
    if (!fast)
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    MPI_Status st = empty_status();
    int rc = PMPI_Sendrecv_replace(staging.data(), p.wire_count, p.wire_type, dest, sendtag, source, recvtag,
                                   comm, &st);
    deliver(rc, p, staging, st, status);
    return rc;
}

} // extern "C"
