#include "support/parking.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kupl::support {

void futex_wait(std::atomic<uint32_t> &word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr,
            0);
}

void futex_wake(std::atomic<uint32_t> &word, int count) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

} // namespace kupl::support
