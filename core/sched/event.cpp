#include "sched/event.h"

#include "kupl.h"

#include <thread>

namespace kupl::sched {

[[gnu::hot]] std::uint64_t Event::begin_record(const void *queue) {
    // No lock: the compare-and-swap makes one caller the record's owner, and the fields below have
    // no other writer until the record it begins is complete.
    std::uint64_t recorded = recorded_.load(std::memory_order_relaxed);
    do {
        if (recorded > completed_.load(std::memory_order_acquire))
            return 0;
    } while (!recorded_.compare_exchange_weak(recorded, recorded + 1, std::memory_order_acq_rel));
    const std::uint64_t generation = recorded + 1;
    error_.store(nullptr, std::memory_order_relaxed); // published to the completer by the handover
    // Set here rather than at enqueue: one step per record, not two. record_queue() reads the
    // queue between two reads of its generation; 0 marks it as being changed.
    record_queue_generation_.store(0, std::memory_order_relaxed);
    record_queue_.store(queue, std::memory_order_release);
    record_queue_generation_.store(generation, std::memory_order_release);
    return generation;
}

[[gnu::hot]] void Event::publish_record(std::uint64_t generation) noexcept {
    std::uint64_t published = published_.load(std::memory_order_relaxed);
    while (published < generation &&
           !published_.compare_exchange_weak(published, generation, std::memory_order_release))
        ;
}

std::uint64_t Event::placed_record() const {
    const std::uint64_t recorded = recorded_.load(std::memory_order_acquire);
    if (recorded == 0 || published_.load(std::memory_order_acquire) >= recorded ||
        completed_.load(std::memory_order_acquire) >= recorded)
        return recorded;
    return recorded - 1; // began only once this one was complete
}

[[gnu::hot]] void Event::complete(std::uint64_t generation, const char *error) noexcept {
    if (error != nullptr)
        error_.store(error, std::memory_order_relaxed); // one record outstanding: no other writer
    // Most records have no op waiting on them: then no lock. when_complete() sets has_waiters_
    // before it reads completed_, this reads has_waiters_ after setting completed_: either this
    // sees the flag, or that call sees the completion and runs its waiter itself. Both sides set
    // with a read-modify-write, not a store: qemu-user (aarch64 on x86-64) lets a load pass an
    // earlier STLR to another variable (tests/cross/store_buffering.cpp), and there the waiting
    // op was never run, hanging Concurrency.PingPongAcrossQueues once in 10 to 200 runs. An
    // exchange keeps the order everywhere.
    if (completed_.exchange(generation, std::memory_order_seq_cst) >= generation)
        completed_twice_.fetch_add(1, std::memory_order_relaxed);
    EventWaiter *ready = nullptr;
    if (has_waiters_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> lock(mutex_);
        // Move the waiters of this or an earlier record to `ready`, keeping the others.
        EventWaiter **link = &waiters_;
        while (*link != nullptr) {
            EventWaiter *waiter = *link;
            if (waiter->awaited_ <= generation) {
                *link = waiter->next_;
                waiter->next_ = ready;
                ready = waiter;
            } else {
                link = &waiter->next_;
            }
        }
        has_waiters_.store(waiters_ != nullptr, std::memory_order_seq_cst);
    }
    completions_.notify_all_after_rmw(); // after the exchange; waits read with is_complete()
    while (ready != nullptr) {
        EventWaiter *waiter = ready;
        ready = waiter->next_; // read first: the waiter may be gone once it has run
        waiter->event_complete();
    }
}

[[gnu::hot]] int Event::status() const {
    const std::uint64_t recorded = recorded_.load(std::memory_order_acquire);
    if (recorded == 0)
        return KUPL_EVENT_STATUS_CREATED;
    return completed_.load(std::memory_order_acquire) >= recorded ? KUPL_EVENT_STATUS_COMPLETE
                                                                  : KUPL_EVENT_STATUS_SUBMITTED;
}

void Event::when_complete(std::uint64_t generation, EventWaiter *waiter) noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        has_waiters_.exchange(true, std::memory_order_seq_cst); // see complete()
        if (completed_.load(std::memory_order_seq_cst) < generation) {
            waiter->awaited_ = generation;
            waiter->next_ = waiters_;
            waiters_ = waiter;
            return;
        }
        has_waiters_.store(waiters_ != nullptr, std::memory_order_seq_cst);
    }
    waiter->event_complete();
}

const void *Event::record_queue(std::uint64_t generation) const {
    for (;;) {
        const std::uint64_t written = record_queue_generation_.load(std::memory_order_acquire);
        if (written == generation) {
            // Read after that generation's store, so at least its queue; if a later record's,
            // that owner's 0 (stored before its queue) shows in the second read.
            const void *queue = record_queue_.load(std::memory_order_acquire);
            return record_queue_generation_.load(std::memory_order_relaxed) == generation ? queue : nullptr;
        }
        if (written > generation)
            return nullptr;
        // The record's owner is between its compare-and-swap and these stores (a few
        // instructions, nothing that blocks): wait for them rather than answer "not known".
        std::this_thread::yield();
    }
}

[[gnu::hot]] const char *Event::error() const {
    // Ordered after the completion the caller saw: completed_ is stored (seq_cst) after error_.
    return error_.load(std::memory_order_acquire);
}

} // namespace kupl::sched

namespace kupl::sched {

std::uint64_t Event::next_trace_id() {
    static std::atomic<std::uint64_t> count{0};
    return count.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Event::set_trace_completion(std::uint64_t generation, std::uint64_t ns, std::uint64_t track) {
    std::lock_guard<std::mutex> lock(mutex_);
    trace_generation_ = generation;
    trace_ns_ = ns;
    trace_track_ = track;
}

bool Event::trace_completion(std::uint64_t generation, std::uint64_t &ns, std::uint64_t &track) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (trace_generation_ != generation || trace_ns_ == 0)
        return false;
    ns = trace_ns_;
    track = trace_track_;
    return true;
}

} // namespace kupl::sched
