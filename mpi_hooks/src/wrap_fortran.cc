// Fortran (mpif.h / `use mpi`, gfortran naming: lower case + one underscore).
// Open MPI 4.1's own Fortran bindings call PMPI_* directly, so without these a
// Fortran program would never reach the C wrappers. Each one converts handles,
// sentinels and indices the way Open MPI's bindings do and calls our MPI_*.
// `use mpi_f08` programs call mpi_<name>_f08_ instead, with the same arguments:
// see the twins at the end of this file.
#include "request_table.h"

#include <mpi.h>

#include <new>
#include <vector>

static_assert(sizeof(MPI_Fint) == sizeof(int), "Open MPI/gfortran INTEGER is a C int");
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a Fortran status is a whole number of INTEGERs");

// Fortran sentinels: common blocks that live in libmpi.
extern "C" MPI_Fint mpi_fortran_bottom_, mpi_fortran_status_ignore_, mpi_fortran_statuses_ignore_;

#define FORTRAN_ENTRY extern "C" __attribute__((visibility("default"))) void

namespace {

constexpr int kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);

void *c_buf(void *buf) {
    return buf == static_cast<void *>(&mpi_fortran_bottom_) ? MPI_BOTTOM : buf;
}
bool status_ignored(MPI_Fint *s) {
    return s == &mpi_fortran_status_ignore_;
}
bool statuses_ignored(MPI_Fint *s) {
    return s == &mpi_fortran_statuses_ignore_;
}
/** A Fortran status has the C layout here, so C calls write it directly (as Open MPI's bindings do). */
MPI_Status *c_status(MPI_Fint *s) {
    return status_ignored(s) ? MPI_STATUS_IGNORE : reinterpret_cast<MPI_Status *>(s);
}
void set(MPI_Fint *ierr, int rc) {
    if (ierr)
        *ierr = rc;
}

/**
 * Requests of a Fortran array as C handles, written back after the call. Without
 * memory for them (!ok) the call does nothing and reports MPI_ERR_NO_MEM.
 */
struct RequestArray {
    std::vector<MPI_Request> c;
    std::vector<MPI_Status> st;
    std::vector<int> indices; // for Waitsome/Testsome
    bool ok = true;
    RequestArray(MPI_Fint n, const MPI_Fint *f, bool with_indices = false) {
        try {
            c.resize(n > 0 ? n : 0);
            st.resize(n > 0 ? n : 0);
            if (with_indices)
                indices.resize(n > 0 ? n : 0);
        } catch (const std::bad_alloc &) {
            ok = false;
            return;
        }
        for (MPI_Fint i = 0; i < n; ++i)
            c[i] = PMPI_Request_f2c(f[i]);
    }
    void write_back(MPI_Fint *f) const {
        for (size_t i = 0; i < c.size(); ++i)
            f[i] = PMPI_Request_c2f(c[i]);
    }
    void statuses_out(MPI_Fint *f, int n) const {
        if (statuses_ignored(f))
            return;
        for (int i = 0; i < n; ++i)
            PMPI_Status_c2f(&st[i], f + i * kStatusInts);
    }
};

} // namespace

FORTRAN_ENTRY mpi_init_(MPI_Fint *ierr) {
    set(ierr, MPI_Init(nullptr, nullptr));
}
FORTRAN_ENTRY mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    int p = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, *required, &p);
    *provided = p;
    set(ierr, rc);
}
FORTRAN_ENTRY mpi_finalize_(MPI_Fint *ierr) {
    set(ierr, MPI_Finalize());
}

FORTRAN_ENTRY mpi_type_commit_(MPI_Fint *type, MPI_Fint *ierr) {
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_commit(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    set(ierr, rc);
}
FORTRAN_ENTRY mpi_type_free_(MPI_Fint *type, MPI_Fint *ierr) {
    MPI_Datatype t = PMPI_Type_f2c(*type);
    int rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS)
        *type = PMPI_Type_c2f(t);
    set(ierr, rc);
}
FORTRAN_ENTRY mpi_type_dup_(MPI_Fint *type, MPI_Fint *newtype, MPI_Fint *ierr) {
    MPI_Datatype n = MPI_DATATYPE_NULL;
    int rc = MPI_Type_dup(PMPI_Type_f2c(*type), &n);
    if (rc == MPI_SUCCESS)
        *newtype = PMPI_Type_c2f(n);
    set(ierr, rc);
}

#define BLOCKING_SEND(fname, cfunc)                                                                          \
    FORTRAN_ENTRY fname(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,           \
                        MPI_Fint *comm, MPI_Fint *ierr) {                                                    \
        set(ierr, cfunc(c_buf(buf), *count, PMPI_Type_f2c(*type), *dest, *tag, PMPI_Comm_f2c(*comm)));       \
    }
BLOCKING_SEND(mpi_send_, MPI_Send)
BLOCKING_SEND(mpi_ssend_, MPI_Ssend)
BLOCKING_SEND(mpi_rsend_, MPI_Rsend)
BLOCKING_SEND(mpi_bsend_, MPI_Bsend)

#define REQUEST_CALL(fname, cfunc)                                                                           \
    FORTRAN_ENTRY fname(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag,           \
                        MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr) {                                 \
        MPI_Request r = MPI_REQUEST_NULL;                                                                    \
        int rc = cfunc(c_buf(buf), *count, PMPI_Type_f2c(*type), *peer, *tag, PMPI_Comm_f2c(*comm), &r);     \
        if (rc == MPI_SUCCESS)                                                                               \
            *request = PMPI_Request_c2f(r);                                                                  \
        set(ierr, rc);                                                                                       \
    }
REQUEST_CALL(mpi_isend_, MPI_Isend)
REQUEST_CALL(mpi_issend_, MPI_Issend)
REQUEST_CALL(mpi_irsend_, MPI_Irsend)
REQUEST_CALL(mpi_ibsend_, MPI_Ibsend)
REQUEST_CALL(mpi_irecv_, MPI_Irecv)
REQUEST_CALL(mpi_send_init_, MPI_Send_init)
REQUEST_CALL(mpi_ssend_init_, MPI_Ssend_init)
REQUEST_CALL(mpi_rsend_init_, MPI_Rsend_init)
REQUEST_CALL(mpi_bsend_init_, MPI_Bsend_init)
REQUEST_CALL(mpi_recv_init_, MPI_Recv_init)

FORTRAN_ENTRY mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
                        MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr) {
    set(ierr, MPI_Recv(c_buf(buf), *count, PMPI_Type_f2c(*type), *source, *tag, PMPI_Comm_f2c(*comm),
                       c_status(status)));
}

FORTRAN_ENTRY mpi_sendrecv_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
                            MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                            MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status,
                            MPI_Fint *ierr) {
    set(ierr, MPI_Sendrecv(c_buf(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), *dest, *sendtag,
                           c_buf(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype), *source, *recvtag,
                           PMPI_Comm_f2c(*comm), c_status(status)));
}

FORTRAN_ENTRY mpi_sendrecv_replace_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest,
                                    MPI_Fint *sendtag, MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm,
                                    MPI_Fint *status, MPI_Fint *ierr) {
    set(ierr, MPI_Sendrecv_replace(c_buf(buf), *count, PMPI_Type_f2c(*type), *dest, *sendtag, *source,
                                   *recvtag, PMPI_Comm_f2c(*comm), c_status(status)));
}

FORTRAN_ENTRY mpi_mrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *status,
                         MPI_Fint *ierr) {
    MPI_Message m = PMPI_Message_f2c(*message);
    int rc = MPI_Mrecv(c_buf(buf), *count, PMPI_Type_f2c(*type), &m, c_status(status));
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(m);
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_imrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *request,
                          MPI_Fint *ierr) {
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Imrecv(c_buf(buf), *count, PMPI_Type_f2c(*type), &m, &r);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        *request = PMPI_Request_c2f(r);
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_pack_(void *inbuf, MPI_Fint *incount, MPI_Fint *type, void *outbuf, MPI_Fint *outsize,
                        MPI_Fint *position, MPI_Fint *comm, MPI_Fint *ierr) {
    int pos = *position;
    int rc =
        MPI_Pack(c_buf(inbuf), *incount, PMPI_Type_f2c(*type), outbuf, *outsize, &pos, PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_unpack_(void *inbuf, MPI_Fint *insize, MPI_Fint *position, void *outbuf, MPI_Fint *outcount,
                          MPI_Fint *type, MPI_Fint *comm, MPI_Fint *ierr) {
    int pos = *position;
    int rc = MPI_Unpack(inbuf, *insize, &pos, c_buf(outbuf), *outcount, PMPI_Type_f2c(*type),
                        PMPI_Comm_f2c(*comm));
    if (rc == MPI_SUCCESS)
        *position = pos;
    set(ierr, rc);
}

// ---- completion: every one must be wrapped, or an accelerated receive would never be unpacked.

FORTRAN_ENTRY mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr) {
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Wait(&r, c_status(status));
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr) {
    MPI_Request r = PMPI_Request_f2c(*request);
    int f = 0;
    int rc = MPI_Test(&r, &f, c_status(status));
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = f;
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr) {
    if (*count == 0)
        return set(ierr, MPI_SUCCESS);
    RequestArray a(*count, requests);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    int rc = MPI_Waitall(*count, a.c.data(), a.st.data());
    if (rc == MPI_SUCCESS) {
        a.write_back(requests);
        a.statuses_out(statuses, *count);
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_testall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                           MPI_Fint *ierr) {
    if (*count == 0) {
        *flag = 1;
        return set(ierr, MPI_SUCCESS);
    }
    RequestArray a(*count, requests);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    int f = 0;
    int rc = MPI_Testall(*count, a.c.data(), &f, a.st.data());
    if (rc == MPI_SUCCESS) {
        *flag = f;
        if (f) {
            a.write_back(requests);
            a.statuses_out(statuses, *count);
        }
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                           MPI_Fint *ierr) {
    RequestArray a(*count, requests);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    int i = MPI_UNDEFINED;
    int rc = MPI_Waitany(*count, a.c.data(), &i, c_status(status));
    if (rc == MPI_SUCCESS) {
        if (i != MPI_UNDEFINED) {
            requests[i] = PMPI_Request_c2f(a.c[i]);
            ++i; // Fortran indices are 1-based
        }
        *index = i;
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_testany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                           MPI_Fint *status, MPI_Fint *ierr) {
    RequestArray a(*count, requests);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    int i = MPI_UNDEFINED, f = 0;
    int rc = MPI_Testany(*count, a.c.data(), &i, &f, c_status(status));
    if (rc == MPI_SUCCESS) {
        if (i != MPI_UNDEFINED) {
            requests[i] = PMPI_Request_c2f(a.c[i]);
            ++i;
        }
        *index = i;
        *flag = f;
    }
    set(ierr, rc);
}

static void fortran_some(bool wait, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                         MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr) {
    if (*incount == 0) {
        *outcount = MPI_UNDEFINED;
        return set(ierr, MPI_SUCCESS);
    }
    RequestArray a(*incount, requests, true);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    std::vector<int> &idx = a.indices;
    int out = 0;
    int rc = wait ? MPI_Waitsome(*incount, a.c.data(), &out, idx.data(), a.st.data())
                  : MPI_Testsome(*incount, a.c.data(), &out, idx.data(), a.st.data());
    if (rc == MPI_SUCCESS) {
        *outcount = out;
        if (out != MPI_UNDEFINED) {
            for (int j = 0; j < out; ++j) {
                requests[idx[j]] = PMPI_Request_c2f(a.c[idx[j]]);
                indices[j] = idx[j] + 1;
            }
            a.statuses_out(statuses, out);
        }
    }
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_waitsome_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                            MPI_Fint *statuses, MPI_Fint *ierr) {
    fortran_some(true, incount, requests, outcount, indices, statuses, ierr);
}

FORTRAN_ENTRY mpi_testsome_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                            MPI_Fint *statuses, MPI_Fint *ierr) {
    fortran_some(false, incount, requests, outcount, indices, statuses, ierr);
}

FORTRAN_ENTRY mpi_request_get_status_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr) {
    int f = 0;
    int rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &f, c_status(status));
    if (rc == MPI_SUCCESS)
        *flag = f;
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_request_free_(MPI_Fint *request, MPI_Fint *ierr) {
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(MPI_REQUEST_NULL);
    set(ierr, rc);
}

FORTRAN_ENTRY mpi_start_(MPI_Fint *request, MPI_Fint *ierr) {
    MPI_Request r = PMPI_Request_f2c(*request);
    set(ierr, MPI_Start(&r));
}

FORTRAN_ENTRY mpi_startall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr) {
    RequestArray a(*count, requests);
    if (!a.ok)
        return set(ierr, kupl_mpi::report_no_memory());
    set(ierr, MPI_Startall(*count, a.c.data()));
}

// mpi_f08 (`use mpi_f08`): in Open MPI 4.1 each mpi_<name>_f08_ takes exactly the arguments of
// mpi_<name>_ -- a TYPE(MPI_Datatype/Comm/Request/Message) is one INTEGER handle, a
// TYPE(MPI_Status) has the C layout (24 bytes, as MPI_STATUS_SIZE INTEGERs), buffers and the
// MPI_BOTTOM / MPI_STATUS_IGNORE sentinels are passed as with mpif.h -- and forwards them to the
// same ompi_<name>_f function (checked in Debian's libmpi_usempif08.so.40; the array calls copy
// the request array in and out around it). The one difference, an absent optional ierror
// arriving as NULL, every wrapper above already allows (set()). So each f08 entry point is an
// alias of its mpif.h twin.
#define F08_TWIN(name)                                                                                       \
    extern "C" __attribute__((visibility("default"))) decltype(mpi_##name##_) mpi_##name##_f08_              \
        __attribute__((alias("mpi_" #name "_")));
F08_TWIN(init)
F08_TWIN(init_thread)
F08_TWIN(finalize)
F08_TWIN(type_commit)
F08_TWIN(type_free)
F08_TWIN(type_dup)
F08_TWIN(send)
F08_TWIN(ssend)
F08_TWIN(rsend)
F08_TWIN(bsend)
F08_TWIN(isend)
F08_TWIN(issend)
F08_TWIN(irsend)
F08_TWIN(ibsend)
F08_TWIN(irecv)
F08_TWIN(send_init)
F08_TWIN(ssend_init)
F08_TWIN(rsend_init)
F08_TWIN(bsend_init)
F08_TWIN(recv_init)
F08_TWIN(recv)
F08_TWIN(sendrecv)
F08_TWIN(sendrecv_replace)
F08_TWIN(mrecv)
F08_TWIN(imrecv)
F08_TWIN(pack)
F08_TWIN(unpack)
F08_TWIN(wait)
F08_TWIN(test)
F08_TWIN(waitall)
F08_TWIN(testall)
F08_TWIN(waitany)
F08_TWIN(testany)
F08_TWIN(waitsome)
F08_TWIN(testsome)
F08_TWIN(request_get_status)
F08_TWIN(request_free)
F08_TWIN(start)
F08_TWIN(startall)
