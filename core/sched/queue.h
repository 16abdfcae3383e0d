// A queue: a strictly in-order stream of ops. Only the head op runs; when it finishes the next
// one starts, on whichever thread finished it. No thread is held while an op waits for an event.
//
// The synchronous queue (kupl_queue_acquire(KUPL_ASYNC_SYNC)) has no stream: each op runs to
// its end inside the call that submits it, on the submitting thread, so work from different
// threads runs side by side and a record on it completes at once.
#pragma once

#include "sched/op.h"
#include "support/parking.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>

namespace kupl::sched {

class Engine;

class Queue : public std::enable_shared_from_this<Queue> {
  public:
    Queue(Engine &engine, int priority, bool synchronous);

    int priority() const { return priority_; }
    // The KUPL_ASYNC_SYNC queue: its ops run inline in the submitting call.
    bool synchronous() const { return synchronous_; }
    // Tracing: the queue's number ("queue 3", in creation order) and its track; 0 when not tracing.
    std::uint64_t trace_number() const { return trace_number_; }
    std::uint64_t trace_track() const { return trace_track_; }
    // Marks the queue's track with its API handle (what the plugin and the interposer see).
    void trace_handle(const void *handle) const;

    // Appends op and starts it if the queue was idle (the synchronous queue runs it now). Returns
    // its ticket for wait_for().
    std::uint64_t enqueue(std::unique_ptr<Op> op);
    // The common case without an op: if this (ordinary) queue is idle and `copy` would run on the
    // calling thread anyway, runs it now in the queue's order, completes record `generation` of
    // `signal` (if any) and returns true; else does nothing and returns false (enqueue an op).
    bool try_copy_at_once(const copy::CopyDescriptor &copy, Event *signal, std::uint64_t generation);
    // The synchronous queue: runs op on the calling thread; returns nullptr or why it failed.
    const char *run_inline(std::unique_ptr<Op> op, std::uint64_t *ticket = nullptr);
    // Blocks (helping the copy engine) until the op with this ticket and every op before it are
    // done. If they never can be (an item ahead called exit()), blocks until the process ends.
    void wait_for(std::uint64_t ticket);
    // kupl_queue_wait: waits for everything enqueued so far. False if work failed since the
    // previous wait_all.
    bool wait_all();
    // True if the calling thread is running a host function of this queue, directly or through
    // a synchronous-queue item it submitted (waiting on the queue from there would deadlock).
    bool called_from_own_item() const;
    // True if `queue` (compared, never dereferenced) is one whose item the calling thread runs.
    static bool running_item_of(const void *queue);

    // At exit: the calling thread runs exit() inside items of these queues (or waits forever
    // behind such an item), and they never return. Ends each such queue: later ops on an
    // ordinary queue can never run and settle at once with an error (so does any op enqueued
    // later: events recorded there fail, queues ordered after them go on), and its waiters wait
    // until the process ends; on the synchronous queue only the calling thread's items are
    // given up.
    static void end_items_of_calling_thread();
    // At exit: waits until every op enqueued so far is done (or can never be); true if the
    // queue then had nothing left.
    bool drain_at_exit();

    // Engine → queue: the head op finished asynchronously.
    void head_finished(Op &op);

    // Marks the calling thread, while it lives, as running an item of `queue` (of the synchronous
    // queue: the one with `ticket`), for called_from_own_item() and end_items_of_calling_thread().
    // Items nest: an item of the synchronous queue runs inside the call that submitted it.
    class ItemScope {
      public:
        ItemScope(Queue *queue, std::uint64_t ticket);
        ~ItemScope();
        ItemScope(const ItemScope &) = delete;
        ItemScope &operator=(const ItemScope &) = delete;

        Queue *const queue;
        const std::uint64_t ticket;
        const ItemScope *const outer;
    };

  private:
    void drain(Op *first = nullptr);
    bool retire_head(Op &head);
    // Counts the settled head as finished; true if more ops wait (this thread goes on
    // dispatching them).
    bool count_finished();
    // The dispatching thread, having counted `finished` ops: stops dispatching unless tickets were
    // handed out beyond them; true if more ops wait.
    bool idle_unless_more(std::uint64_t finished);
    // The dispatching thread notes a failed op (or op-less copy), before it goes on.
    void count_failure();
    bool reached(std::uint64_t ticket) const;
    // Blocks until reached(ticket) (an ended queue counts as reached).
    void wait_until(std::uint64_t ticket);
    [[noreturn]] void wait_forever();
    void end_by_exit(std::uint64_t ticket);

    Engine &engine_;
    const int priority_;
    const bool synchronous_;
    std::uint64_t trace_number_ = 0;
    std::uint64_t trace_track_ = 0;

    mutable std::mutex mutex_;
    std::deque<std::unique_ptr<Op>> ops_; // front() is the running op; guarded by mutex_
    // The tickets handed out (bits 1-63) and whether a thread is dispatching (bit 0), in one word:
    // a copy on an idle queue claims the queue with one compare-and-swap and no lock, and the
    // dispatching thread goes idle only if no ticket was handed out after the ops it finished.
    // Enqueues change it under mutex_, after appending their op, so a dispatcher that sees a
    // newer ticket finds its op in ops_ once it holds the lock. An op-less copy takes no ticket:
    // it is done before its kupl_memcpy*_async returns, so no later wait has to find it.
    std::atomic<std::uint64_t> state_{0};
    static constexpr std::uint64_t kDispatching = 1;
    static constexpr std::uint64_t kOneTicket = 2;
    static std::uint64_t tickets(std::uint64_t state) { return state / kOneTicket; }
    // Failed ops since the last wait_all / record: counted by the dispatching thread (one at a
    // time, handed on through state_'s dispatching bit) before it counts the op as finished.
    std::atomic<unsigned> failures_since_wait_{0};
    unsigned failures_since_record_ = 0;
    std::atomic<std::uint64_t> finished_{0};
    // The synchronous queue: tickets of the ops running now (on their submitting threads), and
    // the smallest of them (UINT64_MAX if none) for lock-free waits.
    std::set<std::uint64_t> in_flight_; // guarded by mutex_
    std::atomic<std::uint64_t> oldest_in_flight_{UINT64_MAX};
    // An item of this (ordinary) queue called exit(): nothing behind it will ever run.
    std::atomic<bool> ended_{false};
    // The smallest ticket a sleeping waiter waits for: retiring wakes waiters only when it is
    // reached, not at every op (each wake-up costs a system call and a context switch).
    std::atomic<std::uint64_t> wake_at_{UINT64_MAX};
    support::EventCount progress_;
};

} // namespace kupl::sched
