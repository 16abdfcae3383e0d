#include "staging_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace kupl_mpi {
namespace {

constexpr int kMinClassLog2 = 12; // 4 KiB
constexpr int kClasses = 20;      // up to 2 GiB
constexpr size_t kMaxCachedBytes = size_t(64) << 20;

std::mutex g_mutex;
std::vector<char *> g_free[kClasses];
size_t g_cached_bytes = 0;

size_t class_bytes(int c) {
    return size_t(1) << (c + kMinClassLog2);
}

int class_of(size_t bytes) {
    for (int c = 0; c < kClasses; ++c)
        if (bytes <= class_bytes(c))
            return c;
    return -1;
}

} // namespace

StagingBuffer::StagingBuffer(size_t bytes) {
    int c = class_of(bytes);
    if (c < 0) {
        data_ = static_cast<char *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
        return;
    }
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!g_free[c].empty()) {
            data_ = g_free[c].back();
            g_free[c].pop_back();
            g_cached_bytes -= class_bytes(c);
        }
    }
    if (!data_)
        data_ = static_cast<char *>(std::aligned_alloc(64, class_bytes(c)));
    if (data_)
        size_class_ = c;
}

StagingBuffer::~StagingBuffer() {
    release();
}

StagingBuffer::StagingBuffer(StagingBuffer &&o) noexcept : data_(o.data_), size_class_(o.size_class_) {
    o.data_ = nullptr;
    o.size_class_ = -1;
}

StagingBuffer &StagingBuffer::operator=(StagingBuffer &&o) noexcept {
    if (this != &o) {
        release();
        data_ = o.data_;
        size_class_ = o.size_class_;
        o.data_ = nullptr;
        o.size_class_ = -1;
    }
    return *this;
}

void StagingBuffer::release() {
    if (!data_)
        return;
    if (size_class_ >= 0) {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_cached_bytes + class_bytes(size_class_) <= kMaxCachedBytes) {
            try {
                g_free[size_class_].push_back(data_);
                g_cached_bytes += class_bytes(size_class_);
                data_ = nullptr;
                return;
            } catch (const std::bad_alloc &) {
                // No room in the free list (this runs in destructors): free the buffer instead.
            }
        }
    }
    std::free(data_);
    data_ = nullptr;
}

void staging_pool_trim() {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto &list : g_free) {
        for (char *p : list)
            std::free(p);
        list.clear();
    }
    g_cached_bytes = 0;
}

} // namespace kupl_mpi
