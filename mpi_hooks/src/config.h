// Environment settings, read once (core/support/env_config.h: one warning line per bad value).
#pragma once

#include <cstddef>

namespace kupl_mpi {

struct Config {
    bool disabled = false;   // KUPL_MPI_DISABLE=1: pass everything straight through
    bool force = false;      // KUPL_MPI_FORCE=1: accelerate every eligible message (tests)
    bool p2p = true;         // KUPL_MPI_P2P=0: never stage point-to-point messages (see cost_model.cc)
    size_t min_bytes = 0;    // KUPL_MPI_MIN_BYTES: smaller messages fall back
    size_t engine_bytes = 0; // KUPL_MPI_ENGINE_BYTES: from this size copies go to KUPL channels
    bool stats = false;      // KUPL_MPI_STATS=1: print the statistics at MPI_Finalize
};

const Config &config();

} // namespace kupl_mpi
