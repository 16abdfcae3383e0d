// MPI_Pack/MPI_Unpack: the packed bytes are the blocks in typemap order, which
// is exactly what Open MPI writes for a homogeneous (native) pack.
#include "planner.h"
#include "trace.h"

#include <mpi.h>

using namespace kupl_mpi;

extern "C" {

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
             MPI_Comm comm) {
    CallTrace trace("MPI_Pack");
    Plan p;
    if (comm == MPI_COMM_NULL || !outbuf || !position) {
        stats_fallback(Fallback::BadArgument);
        return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
    }
    if (!plan_or_count(Use::Pack, inbuf, incount, datatype, comm, 0, &p))
        return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
    if (*position < 0 || outsize < *position || static_cast<size_t>(outsize - *position) < p.bytes) {
        stats_fallback(Fallback::BufferTooSmall); // Open MPI reports the error
        return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
    }
    CopyBatch batch;
    batch.pack(p.where, static_cast<char *>(outbuf) + *position);
    batch.wait();
    *position += static_cast<int>(p.bytes);
    stats_accelerated(Accel::Pack, p.bytes);
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm) {
    CallTrace trace("MPI_Unpack");
    Plan p;
    if (comm == MPI_COMM_NULL || !inbuf || !position) {
        stats_fallback(Fallback::BadArgument);
        return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
    }
    if (!plan_or_count(Use::Unpack, outbuf, outcount, datatype, comm, 0, &p))
        return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
    if (*position < 0 || insize < *position || static_cast<size_t>(insize - *position) < p.bytes) {
        stats_fallback(Fallback::BufferTooSmall);
        return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
    }
    CopyBatch batch;
    batch.unpack(static_cast<const char *>(inbuf) + *position, p.bytes, p.where);
    batch.wait();
    *position += static_cast<int>(p.bytes);
    stats_accelerated(Accel::Unpack, p.bytes);
    return MPI_SUCCESS;
}

} // extern "C"
