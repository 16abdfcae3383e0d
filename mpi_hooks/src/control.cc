#include "control.h"

#include "config.h"

extern "C" int kupl_mpi_set_enabled(int on) {
    if (kupl_mpi::config().disabled)
        return 0;
    return kupl_mpi::switched_on().exchange(on != 0) ? 1 : 0;
}
