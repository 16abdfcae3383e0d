// Environment settings, read once.
#pragma once

#include <cstddef>

namespace kupl_mpi {

struct Config {
    bool disabled = false; // KUPL_MPI_DISABLE=1: pass everything straight through
    bool force = false;    // KUPL_MPI_FORCE=1: accelerate every eligible message (tests)
    size_t min_bytes = 0;  // KUPL_MPI_MIN_BYTES: smaller messages fall back
};

const Config &config();

} // namespace kupl_mpi
