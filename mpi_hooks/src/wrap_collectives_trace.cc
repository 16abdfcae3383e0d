// Collectives, seen only for the trace (KUPL_TRACE): they go to Open MPI unchanged; a slice
// shows where each rank spent its time in them.
#include "trace.h"

#include <mpi.h>

using namespace kupl_mpi;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
    CallTrace trace("MPI_Barrier");
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    CallTrace trace("MPI_Bcast");
    return PMPI_Bcast(buffer, count, type, root, comm);
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

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    CallTrace trace("MPI_Allgather");
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    CallTrace trace("MPI_Alltoall");
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

} // extern "C"
