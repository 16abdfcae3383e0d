#include "sched/queue.h"

#include "sched/engine.h"
#include "sched/event.h"
#include "support/trace.h"

#include <cstdio>
#include <vector>

namespace kupl::sched {
namespace {

const char *const ended_by_exit = "not run: the process exited inside an earlier item of this queue";

// The items the calling thread is running, innermost first.
thread_local const Queue::ItemScope *current_items = nullptr;

} // namespace

Queue::ItemScope::ItemScope(Queue *queue_running, std::uint64_t item_ticket)
    : queue(queue_running), ticket(item_ticket), outer(current_items) {
    current_items = this;
}

Queue::ItemScope::~ItemScope() {
    current_items = outer;
}

Queue::Queue(Engine &engine, int priority, bool synchronous)
    : engine_(engine), priority_(priority), synchronous_(synchronous) {
    if (KUPL_TRACING()) {
        static std::atomic<std::uint64_t> count{0};
        trace_number_ = count.fetch_add(1, std::memory_order_relaxed) + 1;
        char name[64];
        if (synchronous)
            std::snprintf(name, sizeof name, "queue %llu (KUPL_ASYNC_SYNC: runs on its callers)",
                          static_cast<unsigned long long>(trace_number_));
        else
            std::snprintf(name, sizeof name, "queue %llu (priority %d)",
                          static_cast<unsigned long long>(trace_number_), priority);
        // The synchronous queue's ops show on their calling threads; its track only names it.
        trace_track_ = kupl_trace_new_track(name, static_cast<int>(trace_number_));
    }
}

void Queue::trace_handle(const void *handle) const {
    if (trace_track_ == 0 || !KUPL_TRACING())
        return;
    char args[64];
    std::snprintf(args, sizeof args, "\"handle\":\"%p\",\"queue\":%llu", handle,
                  static_cast<unsigned long long>(trace_number_));
    kupl_trace_instant(trace_track_, "op", "queue created", kupl_trace_now(), args);
}

std::uint64_t Queue::enqueue(std::unique_ptr<Op> op) {
    if (synchronous_) {
        std::uint64_t ticket = 0;
        run_inline(std::move(op), &ticket);
        return ticket;
    }
    op->engine = &engine_;
    op->queue = shared_from_this();
    op->copy.priority = priority_;
    op->trace_track = trace_track_;
    std::uint64_t ticket;
    bool start = false;
    Op *const head = op.get();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const bool ended = ended_.load(std::memory_order_relaxed);
        if (!ended)
            ops_.push_back(std::move(op)); // before the ticket: this may throw, a ticket is for good
        // An ended queue stays busy for good (its head never returns): only a ticket for the error.
        std::uint64_t state = state_.load(std::memory_order_relaxed);
        while (!state_.compare_exchange_weak(state, (state + kOneTicket) | (ended ? 0 : kDispatching),
                                             std::memory_order_seq_cst)) {
        }
        ticket = tickets(state) + 1;
        start = !ended && (state & kDispatching) == 0;
    }
    engine_.count_admitted(); // from here the engine settles it
    if (op != nullptr) {      // the queue was ended by exit(): this op can never run
        op->error = ended_by_exit;
        engine_.settle(std::move(op), ended_by_exit);
        return ticket;
    }
    if (start)
        drain(head); // the queue was idle: the op just appended is its head
    return ticket;
}

[[gnu::hot]] bool Queue::try_copy_at_once(const copy::CopyDescriptor &copy, Event *signal,
                                          std::uint64_t generation) {
    if (synchronous_)
        return false;
    Engine::InlineCopy how;
    std::uint64_t state = state_.load(std::memory_order_relaxed);
    // Busy, or ended by exit() (then busy for good): the op path orders it (or settles it with the
    // error).
    if ((state & kDispatching) != 0 || ended_.load(std::memory_order_relaxed) ||
        !engine_.copies_inline(copy, &how))
        return false;
    // Claims the idle queue: ops enqueued from here on wait behind this copy, as behind a head op.
    if (!state_.compare_exchange_strong(state, state | kDispatching, std::memory_order_seq_cst))
        return false; // an enqueue came first: the op path
    if (engine_.copy_at_once(copy, how, signal, generation) != nullptr)
        count_failure();
    if (idle_unless_more(finished_.load(std::memory_order_relaxed))) // only dispatchers change it
        drain();
    return true;
}

const char *Queue::run_inline(std::unique_ptr<Op> op, std::uint64_t *ticket_out) {
    op->engine = &engine_;
    op->queue = shared_from_this(); // for the item's scope (see Engine::run_item)
    op->copy.priority = priority_;
    std::uint64_t ticket;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ticket = tickets(state_.fetch_add(kOneTicket, std::memory_order_relaxed)) + 1;
        in_flight_.insert(ticket);
        oldest_in_flight_.store(*in_flight_.begin(), std::memory_order_seq_cst);
    }
    if (ticket_out != nullptr)
        *ticket_out = ticket;
    op->item_ticket = ticket;
    if (KUPL_TRACING())
        op->trace_start = kupl_trace_now(); // on the calling thread's track (trace_track 0)
    engine_.count_admitted();
    engine_.start(*op, Engine::Run::to_its_end);
    const char *const error = op->error; // static text, still valid once the op is gone
    engine_.settle(std::move(op), nullptr);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        in_flight_.erase(ticket);
        oldest_in_flight_.store(in_flight_.empty() ? UINT64_MAX : *in_flight_.begin(),
                                std::memory_order_seq_cst);
    }
    progress_.notify(true); // one read-modify-write when nobody waits
    return error;
}

// Starts ops from the head while they finish at once (small copies, records, satisfied waits).
// `first`, if given, is the head already (saves a lock on the submitting path).
void Queue::drain(Op *first) {
    for (;;) {
        Op *head = first;
        first = nullptr;
        if (head == nullptr) {
            std::lock_guard<std::mutex> lock(mutex_);
            head = ops_.front().get();
        }
        if (KUPL_TRACING())
            head->trace_start = kupl_trace_now();
        if (!engine_.start(*head))
            return; // head_finished() continues from the thread that finishes it
        if (!retire_head(*head))
            return;
    }
}

void Queue::head_finished(Op &op) {
    auto keep_alive = shared_from_this(); // the retired op may hold the last other reference
    if (retire_head(op))
        drain();
}

// Pops the finished head and settles it. Returns true if more ops wait (this thread goes on
// dispatching them), false if the queue went idle. Only the dispatching thread touches the head
// and the failure counts before it, so the queue's lock is taken once, to pop.
bool Queue::retire_head(Op &head) {
    const char *record_error = nullptr;
    if (head.error != nullptr)
        count_failure();
    if (head.kind == Op::Kind::record) {
        if (failures_since_record_ != 0)
            record_error = "work enqueued on the queue before this record failed";
        failures_since_record_ = 0;
    }
    std::unique_ptr<Op> done;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done = std::move(ops_.front());
        ops_.pop_front();
    }
    // Events complete before the ticket counts as finished, so a returned wait implies them.
    engine_.settle(std::move(done), record_error);
    return count_finished();
}

void Queue::count_failure() {
    // Relaxed: published by the release of state_ (and, for an op, by finished_) that follows.
    failures_since_wait_.fetch_add(1, std::memory_order_relaxed);
    ++failures_since_record_;
}

bool Queue::count_finished() {
    const std::uint64_t now_finished = finished_.fetch_add(1, std::memory_order_seq_cst) + 1;
    const bool more = idle_unless_more(now_finished);
    if (now_finished >= wake_at_.load(std::memory_order_seq_cst)) {
        wake_at_.store(UINT64_MAX, std::memory_order_seq_cst); // woken waiters announce again
        progress_.notify(true);
    }
    return more;
}

[[gnu::hot]] bool Queue::idle_unless_more(std::uint64_t finished) {
    // A ticket beyond `finished` has its op in ops_ (appended before the ticket, under mutex_,
    // which drain() takes): then this thread dispatches it.
    std::uint64_t state = state_.load(std::memory_order_seq_cst);
    while (tickets(state) == finished) {
        if (state_.compare_exchange_weak(state, state & ~kDispatching, std::memory_order_seq_cst))
            return false;
    }
    return true;
}

bool Queue::reached(std::uint64_t ticket) const {
    if (synchronous_)
        return oldest_in_flight_.load(std::memory_order_acquire) > ticket;
    return finished_.load(std::memory_order_acquire) >= ticket || ended_.load(std::memory_order_acquire);
}

void Queue::wait_until(std::uint64_t ticket) {
    if (synchronous_) { // inline ops finish out of order: every finish notifies
        engine_.block_until([this, ticket] { return reached(ticket); }, progress_);
        return;
    }
    engine_.block_until([this, ticket] { return reached(ticket); }, progress_,
                        [this, ticket] {
                            std::uint64_t current = wake_at_.load(std::memory_order_seq_cst);
                            while (ticket < current && !wake_at_.compare_exchange_weak(
                                                           current, ticket, std::memory_order_seq_cst)) {
                            }
                        });
}

void Queue::wait_for(std::uint64_t ticket) {
    wait_until(ticket);
    if (!synchronous_ && finished_.load(std::memory_order_acquire) < ticket)
        wait_forever(); // ended by exit(): what this waits for never runs
}

void Queue::wait_forever() {
    // Another thread is ending the process inside an item ahead of what this thread waits for.
    // Returning (with an error) would let this thread run on, even call exit() a second time, while
    // the process ends; it waits instead, as for an item that never returns, until the process is
    // gone. Its own items never return either: the exit drain gives them up and does not wait.
    end_items_of_calling_thread();
    engine_.executor().abandon_calling_task();
    std::atomic<std::uint32_t> never{0};
    for (;;)
        support::futex_wait(never, 0);
}

bool Queue::wait_all() {
    wait_for(tickets(state_.load(std::memory_order_acquire)));
    return failures_since_wait_.exchange(0, std::memory_order_acq_rel) == 0;
}

bool Queue::drain_at_exit() {
    const std::uint64_t ticket = tickets(state_.load(std::memory_order_acquire));
    wait_until(ticket); // an ended queue counts as drained: its head never returns
    return tickets(state_.load(std::memory_order_acquire)) == ticket;
}

bool Queue::called_from_own_item() const {
    return running_item_of(this);
}

bool Queue::running_item_of(const void *queue) {
    for (const ItemScope *frame = current_items; frame != nullptr; frame = frame->outer)
        if (frame->queue == queue)
            return true;
    return false;
}

void Queue::end_items_of_calling_thread() {
    for (const ItemScope *frame = current_items; frame != nullptr; frame = frame->outer)
        frame->queue->end_by_exit(frame->ticket);
}

void Queue::end_by_exit(std::uint64_t ticket) {
    std::deque<std::unique_ptr<Op>> never_run;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (synchronous_) {
            // Other threads' items on this queue are not behind this one: only it is given up.
            in_flight_.erase(ticket);
            oldest_in_flight_.store(in_flight_.empty() ? UINT64_MAX : *in_flight_.begin(),
                                    std::memory_order_seq_cst);
        } else {
            ended_.store(true, std::memory_order_seq_cst);
            // The head is the item running exit(); everything behind it is cancelled.
            if (!ops_.empty())
                never_run.assign(std::make_move_iterator(ops_.begin() + 1),
                                 std::make_move_iterator(ops_.end()));
            ops_.erase(ops_.begin() + (ops_.empty() ? 0 : 1), ops_.end());
        }
    }
    for (auto &op : never_run) {
        op->error = ended_by_exit;
        engine_.settle(std::move(op), ended_by_exit);
    }
    wake_at_.store(UINT64_MAX, std::memory_order_seq_cst);
    progress_.notify(true);
}

} // namespace kupl::sched
