// Start-up, shut-down and datatype lifecycle entry points.
#include "config.h"
#include "node_map.h"
#include "request_table.h"
#include "staging_pool.h"
#include "trace.h"
#include "type_cache.h"
#include "wire_format.h"

#include "kupl_api.h"
#include <mpi.h>

using namespace kupl_mpi;

namespace {

/** Node map, and KUPL's runtime started now (~40 ms of topology discovery) rather than in the first message.
 */
void start(int rc) {
    if (rc == MPI_SUCCESS) { // the trace knows this process as its rank, accelerated or not
        int rank = -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        trace_rank_known(rank);
    }
    if (rc != MPI_SUCCESS || config().disabled)
        return;
    node_map_init();
#ifdef KUPLX_AVAILABLE
    kuplx_engine_info_t info;
    kuplx_get_engine_info(&info);
#else
    // Vendor KUPL starts lazily too, on its first queue or event call.
    if (kupl_event_h event = kupl_event_create())
        kupl_event_destroy(event);
#endif
}

} // namespace

extern "C" {

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    start(rc);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    start(rc);
    return rc;
}

int MPI_Finalize(void) {
    requests_reap(true);
    kupl_trace_flush(); // the ranks' files are complete before mpirun may kill a straggler
    if (stats_enabled()) {
        int rank = -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        stats_print(rank);
    }
    node_map_finalize();
    wire_types_release();
    staging_pool_trim();
    return PMPI_Finalize();
}

int MPI_Type_commit(MPI_Datatype *datatype) {
    int rc = PMPI_Type_commit(datatype);
    if (rc == MPI_SUCCESS && !config().disabled)
        type_cache_add(*datatype);
    return rc;
}

int MPI_Type_free(MPI_Datatype *datatype) {
    if (datatype)
        type_cache_remove(*datatype);
    return PMPI_Type_free(datatype);
}

// A duplicate of a committed type is committed without MPI_Type_commit.
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    int rc = PMPI_Type_dup(oldtype, newtype);
    TypeInfo info;
    if (rc == MPI_SUCCESS && type_cache_find(oldtype, &info))
        type_cache_add(*newtype);
    return rc;
}

} // extern "C"
