// Room kept free in the address space while the runtime starts its threads.
#pragma once

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>

namespace kupl::support {

// Under an address-space limit (ulimit -v, RLIMIT_AS) the runtime starts threads until the system
// refuses one, which would leave the process less than one thread stack of room: the rest of the
// start-up, and the application's next allocations, could then fail. While this object lives it
// holds one default thread stack of address space (inaccessible, never backed by memory); the
// threads started meanwhile cannot take it, and destroying it hands it back. If even that much
// room is not there, it holds nothing and start-up goes on as without it.
class AddressSpaceReserve {
  public:
    AddressSpaceReserve() {
        size_ = std::clamp(default_thread_stack_bytes(), std::size_t{2} << 20, std::size_t{64} << 20);
        base_ = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base_ == MAP_FAILED)
            base_ = nullptr;
    }
    ~AddressSpaceReserve() {
        if (base_ != nullptr)
            munmap(base_, size_);
    }
    AddressSpaceReserve(const AddressSpaceReserve &) = delete;
    AddressSpaceReserve &operator=(const AddressSpaceReserve &) = delete;

  private:
    // What std::thread gives a new thread: glibc's default, from ulimit -s at process start.
    static std::size_t default_thread_stack_bytes() {
        pthread_attr_t attr;
        std::size_t bytes = 0;
        if (pthread_getattr_default_np(&attr) == 0) {
            pthread_attr_getstacksize(&attr, &bytes);
            pthread_attr_destroy(&attr);
        }
        return bytes;
    }

    void *base_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace kupl::support
