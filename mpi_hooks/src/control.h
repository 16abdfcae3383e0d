// The run-time switch: kupl_mpi_set_enabled() turns acceleration of new calls on
// and off inside a running process, so a benchmark can compare Open MPI and the
// interposer in the same processes.
#pragma once

#include <atomic>

namespace kupl_mpi {

/** False while the program has switched the interposer off (kupl_mpi_set_enabled(0)). */
inline std::atomic<bool> &switched_on() {
    static std::atomic<bool> on{true};
    return on;
}

} // namespace kupl_mpi

extern "C" {
/**
 * Turns acceleration of calls made from now on on (on != 0) or off (on == 0) and
 * returns the previous state (1 on, 0 off). Calls already made are not
 * affected: a request started while on is still completed (unpacked) by the
 * interposer when it is waited for while off, and the other way round. Types
 * committed while off are analysed as usual. With KUPL_MPI_DISABLE=1 it stays
 * off and always returns 0. Thread-safe. Find it with
 * dlsym(RTLD_DEFAULT, "kupl_mpi_set_enabled"): it exists only when the
 * interposer is loaded.
 */
__attribute__((visibility("default"))) int kupl_mpi_set_enabled(int on);
}
