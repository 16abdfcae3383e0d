// A backend copy's completion that a test thread can wait for (tests that drive a CopyBackend
// directly, without the runtime).
#pragma once

#include "copy/backend.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kupl_test {

class CopyDone final : public kupl::copy::CopyCompletion {
  public:
    void copy_done(const char *error) override {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = error;
        done_ = true;
        changed_.notify_all();
    }
    // True if the copy was done within `limit` and did not fail.
    bool wait_for(std::chrono::seconds limit) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, limit, [this] { return done_; }) && error_ == nullptr;
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool done_ = false;
    const char *error_ = nullptr;
};

} // namespace kupl_test
