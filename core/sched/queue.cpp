#include "sched/queue.h"

#include "sched/engine.h"

namespace kupl::sched {
namespace {
// The queue whose host function the calling thread is running, if any.
thread_local const Queue *current_item_queue = nullptr;
} // namespace

Queue::Queue(Engine &engine, int priority, bool synchronous)
    : engine_(engine), priority_(priority), synchronous_(synchronous) {}

std::uint64_t Queue::enqueue(std::unique_ptr<Op> op) {
    op->engine = &engine_;
    op->queue = shared_from_this();
    op->copy.priority = priority_;
    std::uint64_t ticket;
    bool start;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ops_.push_back(std::move(op));
        ticket = ++enqueued_;
        start = !running_;
        running_ = true;
    }
    if (start)
        drain();
    return ticket;
}

// Starts ops from the head while they finish at once (small copies, records, satisfied waits).
void Queue::drain() {
    for (;;) {
        Op *head;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            head = ops_.front().get();
        }
        if (head->kind == Op::Kind::host_function && !synchronous_) {
            // Runs on an executor thread; marks that thread as inside this queue's item. Captures
            // one pointer only, so the std::function needs no memory of its own (head->queue keeps
            // the queue alive).
            const bool posted = engine_.executor().post([head] {
                current_item_queue = head->queue.get();
                head->function();
                current_item_queue = nullptr;
                head->engine->finish(*head);
            });
            if (posted)
                return;
            head->error = "out of memory for queueing the host function (it did not run)";
            if (!retire_head())
                return;
            continue;
        }
        if (!engine_.start(*head))
            return; // head_finished() continues from the thread that finishes it
        if (!retire_head())
            return;
    }
}

void Queue::head_finished(Op &) {
    auto keep_alive = shared_from_this(); // the retired op may hold the last other reference
    if (retire_head())
        drain();
}

// Pops the finished head and settles it. Returns true if more ops wait (this thread goes on
// dispatching them), false if the queue went idle.
bool Queue::retire_head() {
    std::unique_ptr<Op> done;
    const char *record_error = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done = std::move(ops_.front());
        ops_.pop_front();
        if (done->error != nullptr) {
            ++failures_since_wait_;
            ++failures_since_record_;
        }
        if (done->kind == Op::Kind::record) {
            if (failures_since_record_ != 0)
                record_error = "work enqueued on the queue before this record failed";
            failures_since_record_ = 0;
        }
    }
    // Events complete before the ticket counts as finished, so a returned wait implies them.
    engine_.settle(*done, record_error);
    done.reset();
    bool more;
    std::uint64_t now_finished;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        now_finished = finished_.fetch_add(1, std::memory_order_seq_cst) + 1;
        more = !ops_.empty();
        running_ = more;
    }
    if (now_finished >= wake_at_.load(std::memory_order_seq_cst)) {
        wake_at_.store(UINT64_MAX, std::memory_order_seq_cst); // woken waiters announce again
        progress_.notify(true);
    }
    return more;
}

void Queue::wait_for(std::uint64_t ticket) {
    engine_.block_until([this, ticket] { return finished() >= ticket; }, progress_,
                        [this, ticket] {
                            std::uint64_t current = wake_at_.load(std::memory_order_seq_cst);
                            while (ticket < current && !wake_at_.compare_exchange_weak(
                                                           current, ticket, std::memory_order_seq_cst)) {
                            }
                        });
}

bool Queue::wait_all() {
    std::uint64_t ticket;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ticket = enqueued_;
    }
    wait_for(ticket);
    std::lock_guard<std::mutex> lock(mutex_);
    const bool ok = failures_since_wait_ == 0;
    failures_since_wait_ = 0;
    return ok;
}

bool Queue::called_from_own_item() const {
    return current_item_queue == this;
}

} // namespace kupl::sched
