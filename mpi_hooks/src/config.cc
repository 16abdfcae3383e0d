#include "config.h"

#include "support/env_config.h"

namespace kupl_mpi {

const Config &config() {
    static const Config c = [] {
        using kupl::env::read_bool;
        using kupl::env::read_size;
        Config k;
        k.disabled = read_bool("KUPL_MPI_DISABLE", false);
        k.force = read_bool("KUPL_MPI_FORCE", false);
        k.p2p = read_bool("KUPL_MPI_P2P", true);
        k.min_bytes = read_size("KUPL_MPI_MIN_BYTES", 1024);
        k.engine_bytes = read_size("KUPL_MPI_ENGINE_BYTES", size_t(1) << 20);
        k.stats = read_bool("KUPL_MPI_STATS", false);
        return k;
    }();
    return c;
}

} // namespace kupl_mpi
