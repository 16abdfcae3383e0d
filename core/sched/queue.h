// A queue: a strictly in-order stream of ops. Only the head op runs; when it finishes the next
// one starts, on whichever thread finished it. No thread is held while an op waits for an event.
#pragma once

#include "sched/op.h"
#include "support/parking.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

namespace kupl::sched {

class Engine;

class Queue : public std::enable_shared_from_this<Queue> {
  public:
    Queue(Engine &engine, int priority, bool synchronous);

    int priority() const { return priority_; }
    // The KUPL_ASYNC_SYNC queue: host functions run in the submitting call, and every submit
    // waits for its work before it returns.
    bool synchronous() const { return synchronous_; }

    // Appends op and starts it if the queue was idle. Returns its ticket: the op is done once
    // finished() >= ticket.
    std::uint64_t enqueue(std::unique_ptr<Op> op);
    std::uint64_t finished() const { return finished_.load(std::memory_order_acquire); }
    // Blocks (helping the copy engine) until the op with this ticket is done.
    void wait_for(std::uint64_t ticket);
    // kupl_queue_wait: waits for everything enqueued so far. False if work failed since the
    // previous wait_all.
    bool wait_all();
    // True if the calling thread is running a host function of this queue (waiting on the
    // queue from there would deadlock).
    bool called_from_own_item() const;

    // Engine → queue: the head op finished asynchronously.
    void head_finished(Op &op);

  private:
    void drain();
    bool retire_head();

    Engine &engine_;
    const int priority_;
    const bool synchronous_;

    std::mutex mutex_;
    std::deque<std::unique_ptr<Op>> ops_; // front() is the running op; guarded by mutex_
    bool running_ = false;                // a thread is dispatching ops_; guarded by mutex_
    std::uint64_t enqueued_ = 0;          // guarded by mutex_
    unsigned failures_since_wait_ = 0;    // guarded by mutex_
    unsigned failures_since_record_ = 0;  // guarded by mutex_
    std::atomic<std::uint64_t> finished_{0};
    // The smallest ticket a sleeping waiter waits for: retiring wakes waiters only when it is
    // reached, not at every op (each wake-up costs a system call and a context switch).
    std::atomic<std::uint64_t> wake_at_{UINT64_MAX};
    support::EventCount progress_;
};

} // namespace kupl::sched
