// An event: a sequence of records, each completed by the work before it. Only one record is
// outstanding at a time (recording a SUBMITTED event is an error), so generations complete in order.
#pragma once

#include "support/parking.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kupl::sched {

class Event {
  public:
    // Starts a new record and returns its generation (> 0), or 0 if the last one is not complete.
    std::uint64_t begin_record();
    // Completes record `generation`; error is nullptr on success.
    void complete(std::uint64_t generation, const char *error);

    // KUPL_EVENT_STATUS_CREATED / SUBMITTED / COMPLETE.
    int status() const;
    std::uint64_t latest_record() const { return recorded_.load(std::memory_order_acquire); }
    bool is_complete(std::uint64_t generation) const {
        return completed_.load(std::memory_order_acquire) >= generation;
    }
    // Runs fn once record `generation` is complete: now, on this thread, if it already is.
    void when_complete(std::uint64_t generation, std::function<void()> fn);
    // The queue record `generation` was enqueued on (an identity, never dereferenced), or
    // nullptr if it is not known (another record, or not on an ordinary queue).
    void set_record_queue(std::uint64_t generation, const void *queue);
    const void *record_queue(std::uint64_t generation) const;
    // True if the latest completed record failed; *why gets the reason.
    bool failed(std::string *why) const;

    support::EventCount &completions() { return completions_; }

  private:
    mutable std::mutex mutex_;
    std::atomic<std::uint64_t> recorded_{0};  // written under mutex_
    std::atomic<std::uint64_t> completed_{0}; // written under mutex_
    bool failed_ = false;
    std::string error_;
    std::vector<std::pair<std::uint64_t, std::function<void()>>> continuations_;
    std::uint64_t record_queue_generation_ = 0; // guarded by mutex_
    const void *record_queue_ = nullptr;        // guarded by mutex_
    support::EventCount completions_;
};

} // namespace kupl::sched
