// An event: a sequence of records, each completed by the work before it. Only one record is
// outstanding at a time (recording a SUBMITTED event is an error), so generations complete in order.
// Completing a record and waiting for one allocate nothing: work that was accepted must be able to
// finish when memory has run out.
#pragma once

#include "support/parking.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace kupl::sched {

// Something that continues once a record of an event is complete (an op waiting for the event).
// The waiter provides its own storage, so waiting cannot fail for lack of memory.
class EventWaiter {
  public:
    // Called once, from the thread that completes the record (or from when_complete()).
    virtual void event_complete() = 0;

  protected:
    ~EventWaiter() = default;

  private:
    friend class Event;
    std::uint64_t awaited_ = 0;
    EventWaiter *next_ = nullptr; // in the event's list of waiters
};

class Event : public std::enable_shared_from_this<Event> {
  public:
    // Starts a new record and returns its generation (> 0), or 0 if the last one is not complete.
    // `queue`: the ordinary queue it will be enqueued on (see record_queue), or nullptr.
    std::uint64_t begin_record(const void *queue = nullptr);
    // Completes record `generation`; error (static text) is nullptr on success.
    void complete(std::uint64_t generation, const char *error) noexcept;

    // KUPL_EVENT_STATUS_CREATED / SUBMITTED / COMPLETE.
    int status() const;
    std::uint64_t latest_record() const { return recorded_.load(std::memory_order_acquire); }
    // Says record `generation` is now in its queue (or already run): called by its owner once the
    // op that completes it is placed. A wait queued behind it is then ordered after it.
    void publish_record(std::uint64_t generation) noexcept;
    // The latest record whose op is already placed, or whose work is complete: what a queue may be
    // made to wait for. A record begun but not yet placed is left out (the one before it, complete
    // since records run one at a time, is returned instead, or 0 for none): a wait queued on the
    // record's own queue in that moment would sit ahead of the record it waits for, and that
    // queue would never move again. 0 also if the event was never recorded.
    std::uint64_t placed_record() const;
    // seq_cst: a sleeping waiter's check pairs with complete()'s notify_all_after_rmw().
    bool is_complete(std::uint64_t generation) const {
        return completed_.load(std::memory_order_seq_cst) >= generation;
    }
    // Calls waiter->event_complete() once record `generation` is complete: now, on this thread,
    // if it already is.
    void when_complete(std::uint64_t generation, EventWaiter *waiter) noexcept;
    // Why the latest completed record failed (static text), or nullptr if it did not.
    const char *error() const;
    // The queue record `generation` (one begun already) was begun for (an identity, never
    // dereferenced), or nullptr if it is not known (a later record began, or not on an ordinary
    // queue).
    const void *record_queue(std::uint64_t generation) const;

    support::EventCount &completions() { return completions_; }
    // Completions of a record that was already complete, in this process: a defect if ever
    // non-zero (KUPL_STATS reports it beside the op balance).
    static std::uint64_t records_completed_twice() {
        return completed_twice_.load(std::memory_order_relaxed);
    }

    // Tracing: the event's number in the trace, and where and when record `generation` completed
    // (set by the op that completes it, just before complete()); false if not known.
    std::uint64_t trace_id() const { return trace_id_; }
    void set_trace_completion(std::uint64_t generation, std::uint64_t ns, std::uint64_t track);
    bool trace_completion(std::uint64_t generation, std::uint64_t &ns, std::uint64_t &track) const;

  private:
    mutable std::mutex mutex_;                // guards the waiters and the trace fields
    std::atomic<std::uint64_t> recorded_{0};  // advanced by begin_record's compare-and-swap
    std::atomic<std::uint64_t> completed_{0}; // written by the record's one completer
    // The highest record whose op is placed (publish_record). Its owner may publish after the
    // record completed and a later one was published, so it only ever grows (a fetch-max).
    std::atomic<std::uint64_t> published_{0};
    std::atomic<bool> has_waiters_{false}; // waiters_ may be non-empty; written under mutex_
    // Cleared by the record's owner, set by its completer; read without a lock by every wait.
    std::atomic<const char *> error_{nullptr};
    EventWaiter *waiters_ = nullptr; // guarded by mutex_
    // Written by the owner of the latest record (begin_record); see record_queue().
    std::atomic<std::uint64_t> record_queue_generation_{0};
    std::atomic<const void *> record_queue_{nullptr};
    support::EventCount completions_;
    const std::uint64_t trace_id_ = next_trace_id();
    std::uint64_t trace_generation_ = 0; // guarded by mutex_
    std::uint64_t trace_ns_ = 0;         // guarded by mutex_
    std::uint64_t trace_track_ = 0;      // guarded by mutex_
    static std::uint64_t next_trace_id();
    static inline std::atomic<std::uint64_t> completed_twice_{0};
};

} // namespace kupl::sched
