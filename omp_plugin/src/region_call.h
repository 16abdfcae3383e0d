// A target region ready to run: the outlined entry and its arguments, copied out of
// libomptarget's (caller-local) arrays so that the call may happen later on another thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <ffi.h>

namespace kupl_omp {

class RegionCall {
  public:
    /// team_size: the default team the region forks (0: the running thread's own default).
    RegionCall(void *entry, void **bases, const ptrdiff_t *offsets, int32_t count, int team_size);
    RegionCall(const RegionCall &) = delete;
    RegionCall &operator=(const RegionCall &) = delete;

    /// Prepares the libffi call; false (and a message) if that is impossible.
    bool prepare(int device);
    /// Calls entry(args...) with the host C calling convention (every argument a pointer),
    /// after setting the calling thread's default team size.
    void run();

  private:
    void *entry_;
    int team_size_;
    size_t count_;
    /// One allocation for the call: the argument values (base + offset), then their addresses,
    /// which libffi wants.
    std::vector<void *> storage_;
    std::vector<ffi_type *> own_types_; ///< only for calls too long for the shared table
    ffi_cif cif_{};
};

} // namespace kupl_omp
