// Contiguous staging buffers for packed messages, recycled so that a message
// does not pay for fresh pages (page faults cost more than the copy).
#pragma once

#include <cstddef>

namespace kupl_mpi {

/** A 64-byte aligned buffer of at least the requested size; frees itself. */
class StagingBuffer {
  public:
    StagingBuffer() = default;
    explicit StagingBuffer(size_t bytes);
    ~StagingBuffer();
    StagingBuffer(StagingBuffer &&o) noexcept;
    StagingBuffer &operator=(StagingBuffer &&o) noexcept;
    StagingBuffer(const StagingBuffer &) = delete;
    StagingBuffer &operator=(const StagingBuffer &) = delete;

    char *data() const { return data_; }
    explicit operator bool() const { return data_ != nullptr; }

  private:
    void release();
    char *data_ = nullptr;
    int size_class_ = -1;
};

/** Frees every cached buffer (at MPI_Finalize). */
void staging_pool_trim();

} // namespace kupl_mpi
