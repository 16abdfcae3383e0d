#include "cost_model.h"

namespace kupl_mpi {

bool worth_accelerating(Use, const StridedLayout &message, size_t min_bytes) {
    return static_cast<size_t>(message.packed_bytes()) >= min_bytes;
}

} // namespace kupl_mpi
