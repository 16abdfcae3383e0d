// Joining a thread with a time limit (std::thread has none).
#pragma once

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <new>
#include <thread>

namespace kupl::support {

// Joins `thread` if it ends within `limit`; else detaches it. Returns true if it was joined.
// Used at process exit: a runtime thread that ran OpenMP code runs libomp's thread-exit hook
// after our code, and that hook blocks forever once libomp has shut down.
inline bool join_within(std::thread &thread, std::chrono::milliseconds limit) {
    if (!thread.joinable())
        return true;
    // pthread_timedjoin_np wants an absolute CLOCK_REALTIME time, which system_clock is.
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        (std::chrono::system_clock::now() + limit).time_since_epoch())
                        .count();
    const timespec deadline{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    if (pthread_timedjoin_np(thread.native_handle(), nullptr, &deadline) == 0) {
        new (&thread) std::thread(); // joined behind std::thread's back: forget the handle
        return true;
    }
    thread.detach();
    return false;
}

} // namespace kupl::support
