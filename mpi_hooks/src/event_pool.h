// A pool of completed kupl events, so a message does not create and destroy one.
#pragma once

#include <kupl.h>

namespace kupl_mpi {

/** A COMPLETE or CREATED event ready to be recorded, or NULL if none can be made. */
kupl_event_h event_pool_get();
/** Returns an event whose latest record is complete. */
void event_pool_put(kupl_event_h event);

} // namespace kupl_mpi
