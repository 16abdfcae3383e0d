#include "support/parking.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace kupl::support {

void futex_wait(std::atomic<uint32_t> &word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr,
            0);
}

void futex_wait_for(std::atomic<uint32_t> &word, uint32_t expected, std::uint64_t timeout_ns) {
    const timespec timeout{static_cast<time_t>(timeout_ns / 1000000000),
                           static_cast<long>(timeout_ns % 1000000000)};
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout, nullptr,
            0);
}

void futex_wake(std::atomic<uint32_t> &word, int count) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

} // namespace kupl::support
