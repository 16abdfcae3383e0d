// Collectives the interposer does not otherwise take, seen only for the trace (KUPL_TRACE): they
// go to Open MPI unchanged; a slice shows where each rank spent its time in them. The collectives
// with derived types (wrap_coll.cc, wrap_coll_v.cc) trace themselves.
#include "trace.h"

#include <mpi.h>

using namespace kupl_mpi;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
    CallTrace trace("MPI_Barrier");
    return PMPI_Barrier(comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
    CallTrace trace("MPI_Reduce");
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    CallTrace trace("MPI_Allreduce");
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

} // extern "C"
