#include "sched/engine.h"

#include "copy/kernels/copy_kernels.h"
#include "sched/event.h"
#include "sched/op_trace.h"
#include "sched/queue.h"
#include "support/trace.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace kupl::sched {
namespace {
const char *const injected_fault = "injected copy fault (kuplx_inject_copy_faults / KUPL_FAULT_INJECT)";
} // namespace

void Op::copy_done(const char *why) {
    error = why;
    engine->finish(*this);
}

void Op::event_complete() {
    engine->finish(*this);
}

bool Op::batch_piece_done(const char *why) {
    if (why != nullptr) {
        batch_failed.fetch_add(1, std::memory_order_relaxed);
        const char *none = nullptr;
        batch_error.compare_exchange_strong(none, why, std::memory_order_relaxed);
    }
    if (batch_left.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return false;
    error = batch_error.load(std::memory_order_relaxed);
    return true;
}

std::size_t Op::batch_bytes() const {
    std::size_t bytes = 0;
    for (const BatchPiece &piece : batch)
        bytes += piece.copy.bytes();
    return bytes;
}

void BatchPiece::copy_done(const char *why) {
    if (op->batch_piece_done(why))
        op->engine->finish(*op);
}

Op::~Op() {
    if (signal != nullptr && signal_generation != 0)
        signal->complete(signal_generation, kNotAccepted);
}

Engine::Engine(const support::Config &config, std::unique_ptr<copy::CopyBackend> backend,
               std::unique_ptr<exec::Executor> executor, int num_cores, support::Counters &counters,
               support::FaultInjector &faults)
    : config_(config), backend_(std::move(backend)), executor_(std::move(executor)), num_cores_(num_cores),
      counters_(counters), faults_(faults) {}

[[gnu::hot]] void Engine::copy_now(const copy::CopyDescriptor &c, bool timed) {
    const std::uint64_t trace_start = KUPL_TRACING() ? kupl_trace_now() : 0;
    const std::uint64_t began = timed ? support::now_ns() : 0;
    if (c.height == 1)
        copy::copy_bytes(c.dst, c.src, c.width, false);
    else
        copy::select_row_kernel(c.width, false)(static_cast<char *>(c.dst), c.dpitch,
                                                static_cast<const char *>(c.src), c.spitch, c.width,
                                                c.height);
    if (timed)
        caller_speed_.add(c.cost_bytes(), c.height != 1, (support::now_ns() - began) * 1024 / c.cost_bytes());
    counters_.bump(support::Counter::copies_inline);
    if (trace_start != 0 && KUPL_TRACING()) {
        if (c.trace_threads != nullptr)
            c.trace_threads->fetch_or(std::uint64_t{1} << kupl_trace_thread_index(),
                                      std::memory_order_relaxed);
        char args[64];
        std::snprintf(args, sizeof args, "\"copy\":%llu,\"bytes\":%zu",
                      static_cast<unsigned long long>(c.trace_id), c.bytes());
        kupl_trace_slice(0, "copy", "copy (inline)", trace_start, kupl_trace_now(), args);
    }
}

[[gnu::hot]] Engine::Placement Engine::place(const copy::CopyDescriptor &copy, bool waited_at_once,
                                             std::size_t *stream_bytes) const {
    // Waited for at once, a copy stays here up to a larger size: no compute of the caller's can
    // overlap it, only a split over the channels with the caller helping beats it.
    const std::size_t small = waited_at_once ? config_.sync_threshold : config_.inline_threshold;
    if (copy.bytes() == 0 || copy.cost_bytes() < small)
        return Placement::small;
    if (backend_->ready())
        return channels_keep_up(copy) ? Placement::hand_off : Placement::slower_channels;
    // While every channel sleeps, a copy waited for at once pays for a wake-up alone: nothing
    // else is submitted before it is done.
    if (waited_at_once)
        return worth_waking(copy.cost_bytes()) ? Placement::parked_hand_off : Placement::parked_inline;
    *stream_bytes = parked_stream_with(copy);
    return worth_waking(*stream_bytes != 0 ? *stream_bytes : copy.cost_bytes()) ? Placement::parked_hand_off
                                                                                : Placement::parked_inline;
}

[[gnu::hot]] bool Engine::copies_inline(const copy::CopyDescriptor &copy, InlineCopy *how) const {
    *how = InlineCopy{};
    const Placement where = place(copy, waits_at_once(copy), &how->parked_stream);
    how->timed = timed(where);
    return on_caller(where);
}

[[gnu::hot]] const char *Engine::copy_inline(const copy::CopyDescriptor &copy, bool fail, bool timed) {
    if (fail)
        return injected_fault;
    if (copy.bytes() != 0)
        copy_now(copy, timed);
    return nullptr;
}

[[gnu::hot]] void Engine::count_copy(const copy::CopyDescriptor &copy, const char *error) {
    if (error != nullptr)
        counters_.bump(support::Counter::copies_failed);
    else
        counters_.bump(support::Counter::bytes_copied, copy.bytes());
}

[[gnu::hot]] const char *Engine::copy_at_once(const copy::CopyDescriptor &copy, const InlineCopy &how,
                                              Event *signal, std::uint64_t generation) {
    counters_.bump(support::Counter::copies_submitted);
    const char *error = copy_inline(copy, faults_.should_fail(), how.timed);
    if (how.parked_stream != 0)
        end_parked_copy(how.parked_stream);
    count_copy(copy, error);
    if (signal != nullptr)
        signal->complete(generation, error);
    return error;
}

[[gnu::hot]] const char *Engine::copy_and_wait(const copy::CopyDescriptor &copy) {
    counters_.bump(support::Counter::copies_submitted);
    const bool fail = faults_.should_fail();
    std::size_t unused_stream = 0;
    const Placement where = place(copy, true, &unused_stream);
    const bool inline_copy = on_caller(where);
    if (fail && inline_copy) {
        counters_.bump(support::Counter::copies_failed);
        return injected_fault;
    }
    if (copy.bytes() == 0)
        return nullptr;
    if (inline_copy) {
        copy_now(copy, timed(where));
    } else if (const char *error = hand_off_and_wait(copy, fail)) {
        counters_.bump(support::Counter::copies_failed);
        return error;
    }
    counters_.bump(support::Counter::bytes_copied, copy.bytes());
    return nullptr;
}

const char *Engine::hand_off_and_wait(const copy::CopyDescriptor &copy, bool fail) {
    if (KUPL_TRACING() && copy.trace_threads != nullptr)
        copy.trace_threads->fetch_or(std::uint64_t{1} << kupl_trace_thread_index(),
                                     std::memory_order_relaxed);
    // Shared by the waiter and the completing thread; the last of the two frees it, so the
    // completer may still be inside notify() when the waiter sees `done` and returns.
    struct Completion final : copy::CopyCompletion {
        std::atomic<bool> done{false};
        std::atomic<const char *> error{nullptr}; // what the backend reported (static text)
        std::atomic<int> owners{2};
        support::EventCount wakeups;
        void release() {
            if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1)
                delete this;
        }
        void copy_done(const char *why) override {
            error.store(why, std::memory_order_relaxed);
            done.store(true, std::memory_order_seq_cst);
            wakeups.notify(true);
            release();
        }
    };
    auto *completion = new Completion;
    // An injected fault fails in the backend, through the completion below (see start()).
    copy::CopyDescriptor submitted = copy;
    submitted.fail_with = fail ? injected_fault : nullptr;
    if (const char *refused = backend_->submit(submitted, completion)) {
        delete completion;
        return refused;
    }
    counters_.bump(support::Counter::copies_engine);
    block_until([completion] { return completion->done.load(std::memory_order_acquire); },
                completion->wakeups);
    // A backend that fails a copy (a hardware engine may) fails the synchronous call too.
    const char *error = completion->error.load(std::memory_order_relaxed);
    completion->release();
    return error;
}

// What places copies of 32 KiB and more comes after the functions of the copies that run at once
// (above): libkupl is built with -fno-toplevel-reorder, so its functions lie in the order of the
// source, and a small copy with its wait keeps to few code pages (api/api_support.h).

// Copies that come in a stream while every channel sleeps (a batch submitted before compute, a
// loop of copies) add up: inlining every one would keep a whole batch off the channels, and waking
// a channel for the first small one of a loop costs more than the copy. The copy that makes the
// stream worth a wake-up hands off (the channels are then awake for the rest); a pause of
// kStreamWindowNs after the previous copy was done starts a new stream. So does a copy whose
// thread waited since its previous one when the channels, once awake, would leave copies like it
// on the caller: a loop that waits for each copy in turn has nothing to overlap, and each channel
// woken for it parked again unused, the copy that woke it waiting through the wake-up (hot 64 KiB
// copies: a wake-up of ~60 us here every ~64 copies, 0.81x of the caller's memcpy in all). Such a
// copy is no part of any stream, decided without the clock: its two reads (the pause, and the
// copy's end) cost ~55 ns on a VM, a tenth of a hot 64 KiB copy.
[[gnu::hot]] std::size_t Engine::parked_stream_with(const copy::CopyDescriptor &copy) const {
    const bool waited = waited_since_copy;
    waited_since_copy = false;
    if (waited && !awake_channels_take(copy))
        return 0;
    const std::uint64_t last = last_parked_copy_ns_.load(std::memory_order_relaxed);
    const bool new_stream = support::now_ns() - last > kStreamWindowNs;
    const std::size_t before = new_stream ? 0 : parked_stream_bytes_.load(std::memory_order_relaxed);
    return before + copy.cost_bytes();
}

[[gnu::hot]] void Engine::end_parked_copy(std::size_t stream_bytes) {
    parked_stream_bytes_.store(stream_bytes, std::memory_order_relaxed);
    last_parked_copy_ns_.store(support::now_ns(), std::memory_order_relaxed);
}

bool Engine::awake_channels_take(const copy::CopyDescriptor &copy) const {
    if (copy.cost_bytes() >= config_.mt_threshold)
        return true;
    const bool two_d = copy.height != 1;
    const std::uint64_t ours = caller_speed_.ns_per_kib(copy.cost_bytes(), two_d);
    if (ours == 0 || backend_->ns_per_kib(copy.cost_bytes(), two_d) == 0)
        return true;
    return backend_->hand_off_slowdown(copy, ours) <= 1.0;
}

[[gnu::hot]] bool Engine::channels_keep_up(const copy::CopyDescriptor &copy) const {
    // Split copies go to all channels with the waiting caller helping: never slower.
    if (copy.cost_bytes() >= config_.mt_threshold)
        return true;
    const bool two_d = copy.height != 1;
    const std::uint64_t theirs = backend_->ns_per_kib(copy.cost_bytes(), two_d);
    if (theirs == 0)
        return true; // hand it off, which measures (a hardware engine never does: always)
    // It keeps up even with the fastest caller there can be (a halved copy, cut for both
    // speeds): the caller's speed cannot turn the judgement, so it is not measured.
    if (backend_->hand_off_slowdown(copy, 1) <= 1.0)
        return true;
    const std::uint64_t ours = caller_speed_.ns_per_kib(copy.cost_bytes(), two_d);
    if (ours == 0)
        return false; // run it here, which measures (timed())
    const double slowdown = backend_->hand_off_slowdown(copy, ours);
    const bool keep_up = slowdown <= 1.0;
    // The side not chosen is measured again now and then, often when the call is close, and at
    // once when the side chosen has moved since (the data moved: hot, then cold): the figure of
    // the side not chosen is from before.
    Explored &explored = explored_[support::SpeedBySize::index(copy.cost_bytes(), two_d)];
    const std::uint64_t chosen = keep_up ? theirs : ours;
    const std::uint64_t then = (keep_up ? explored.theirs : explored.ours).load(std::memory_order_relaxed);
    const bool moved = then == 0 || static_cast<double>(chosen) > kMoved * static_cast<double>(then) ||
                       static_cast<double>(then) > kMoved * static_cast<double>(chosen);
    const bool close = slowdown < kCloseCall && slowdown * kCloseCall > 1.0;
    static thread_local unsigned judgements = 0;
    ++judgements;
    if (!moved && judgements % (close ? kExploreCloseEvery : kExploreEvery) != 0)
        return keep_up;
    explored.ours.store(ours, std::memory_order_relaxed);
    explored.theirs.store(theirs, std::memory_order_relaxed);
    time_next_inline = keep_up; // the caller's side, measured again: time it (timed())
    return !keep_up;
}

std::string Engine::speed_summary() const {
    std::string line;
    for (const bool two_d : {false, true}) {
        for (std::size_t cost = 1024; cost != 0 && cost < (std::size_t{1} << 41); cost <<= 1) {
            const std::uint64_t ours = caller_speed_.ns_per_kib(cost, two_d);
            const std::uint64_t theirs = backend_->ns_per_kib(cost, two_d);
            if (ours == 0 && theirs == 0)
                continue;
            char entry[64];
            std::snprintf(entry, sizeof entry, " %s%zu KiB %llu/%llu", two_d ? "2D " : "", cost >> 10,
                          static_cast<unsigned long long>(ours), static_cast<unsigned long long>(theirs));
            line += entry;
        }
    }
    return line.empty() ? line : "copy speed by size, caller/channels ns per KiB (0: not measured):" + line;
}

[[gnu::hot]] bool Engine::worth_waking(std::size_t cost_bytes) const {
    return cost_bytes >= config_.mt_threshold && backend_->worth_waking(cost_bytes);
}

bool Engine::start_copy(copy::CopyDescriptor &copy, copy::CopyCompletion &done, const char **error) {
    counters_.bump(support::Counter::copies_submitted);
    const bool fail = faults_.should_fail();
    std::size_t stream = 0;
    const Placement where = place(copy, false, &stream);
    if (on_caller(where)) {
        *error = copy_inline(copy, fail, timed(where));
        if (where == Placement::parked_inline && stream != 0)
            end_parked_copy(stream);
        return true;
    }
    if (where == Placement::parked_hand_off)
        end_parked_copy(0); // the channels wake: the stream is over
    // An injected fault on a backend copy fails in the backend, so the failure travels the
    // same asynchronous completion path as a real engine's would.
    copy.fail_with = fail ? injected_fault : nullptr;
    if (const char *refused = backend_->submit(copy, &done)) {
        *error = refused;
        return true;
    }
    counters_.bump(support::Counter::copies_engine);
    return false;
}

bool Engine::start(Op &op, Run how) {
    const bool to_its_end = how == Run::to_its_end;
    switch (op.kind) {
    case Op::Kind::copy:
        if (to_its_end) {
            op.error = copy_and_wait(op.copy); // counts the copy (see count_settled)
            return true;
        }
        return start_copy(op.copy, op, &op.error);
    case Op::Kind::batch: {
        if (to_its_end) {
            // Piece after piece, each counted by copy_and_wait (large ones still use the channels).
            for (BatchPiece &piece : op.batch) {
                piece.copy.priority = op.copy.priority;
                if (const char *error = copy_and_wait(piece.copy); error != nullptr && op.error == nullptr)
                    op.error = error;
            }
            return true;
        }
        // Each piece starts as a copy of its own would (inline or on the backend), all before
        // any is waited for. The extra count held while starting keeps a piece that completes
        // early from finishing the op before the last piece is out.
        op.batch_left.store(op.batch.size() + 1, std::memory_order_relaxed);
        for (BatchPiece &piece : op.batch) {
            piece.op = &op;
            piece.copy.priority = op.copy.priority;
            const char *error = nullptr;
            if (start_copy(piece.copy, piece, &error))
                op.batch_piece_done(error); // never the last: the start's count is still held
        }
        return op.batch_piece_done(nullptr);
    }
    case Op::Kind::host_function: {
        if (to_its_end) {
            run_item(op);
            return true;
        }
        // On an executor thread, never on the submitting one. The task captures one pointer only,
        // so the std::function needs no memory of its own; op.queue keeps the queue alive until
        // the op is settled.
        Op *item = &op;
        if (!executor_->post([item] {
                item->engine->run_item(*item);
                item->engine->finish(*item);
            })) {
            op.error = "out of memory for queueing the host function (it did not run)";
            return true;
        }
        return false;
    }
    case Op::Kind::record:
        return true;
    case Op::Kind::wait_event: {
        // A satisfied wait finishes here, returning true: finished through when_complete() it
        // would retire itself and start the next op from inside this call, and a long run of
        // satisfied waits would nest one drain per op until the stack overflows.
        if (op.awaited->is_complete(op.awaited_generation))
            return true;
        // The op may be finished (and freed) on another thread before when_complete() returns,
        // so the event is held by a reference of our own, not through op.
        std::shared_ptr<Event> awaited = op.awaited;
        if (to_its_end) {
            const std::uint64_t generation = op.awaited_generation;
            block_until([&awaited, generation] { return awaited->is_complete(generation); },
                        awaited->completions());
            return true;
        }
        awaited->when_complete(op.awaited_generation, &op);
        return false;
    }
    }
    return true;
}

void Engine::run_item(Op &op) {
    Queue::ItemScope scope(op.queue.get(), op.item_ticket); // a kupl call from the item knows it
    const std::uint64_t start = KUPL_TRACING() && !op.queue->synchronous() ? kupl_trace_now() : 0;
    op.function();
    if (start != 0 && KUPL_TRACING()) {
        char args[48];
        std::snprintf(args, sizeof args, "\"queue\":%llu",
                      static_cast<unsigned long long>(op.queue->trace_number()));
        kupl_trace_slice(0, "item", op.trace_name[0] != '\0' ? op.trace_name : "host item", start,
                         kupl_trace_now(), args);
    }
}

void Engine::finish(Op &op) {
    if (op.queue != nullptr) {
        op.queue->head_finished(op);
        return;
    }
    settle(std::unique_ptr<Op>(&op), nullptr); // started by run_unordered(), which let it go
}

void Engine::count_settled(const Op &op) {
    counters_.bump(support::Counter::ops_settled);
    if (op.kind == Op::Kind::host_function) {
        counters_.bump(support::Counter::host_items);
        return;
    }
    // The synchronous queue's copies ran to their end through copy_and_wait, which counted them.
    if (op.queue != nullptr && op.queue->synchronous())
        return;
    if (op.kind == Op::Kind::copy) {
        count_copy(op.copy, op.error);
    } else if (op.kind == Op::Kind::batch) {
        const std::size_t failed = op.batch_failed.load(std::memory_order_relaxed);
        if (failed != 0)
            counters_.bump(support::Counter::copies_failed, failed);
        else
            counters_.bump(support::Counter::bytes_copied, op.batch_bytes());
    }
}

void Engine::settle(std::unique_ptr<Op> op, const char *record_error) {
    count_settled(*op);
    std::uint64_t traced_at = 0;
    if (KUPL_TRACING()) {
        traced_at = kupl_trace_now();
        trace_before_complete(*op, traced_at);
    }
    if (op->signal != nullptr) {
        const std::shared_ptr<Event> signal = std::move(op->signal); // settled: ~Op leaves it alone
        signal->complete(op->signal_generation, op->kind == Op::Kind::record ? record_error : op->error);
    }
    if (traced_at != 0 && KUPL_TRACING())
        trace_settled(*op, record_error, traced_at);
}

void Engine::run_unordered(std::unique_ptr<Op> op) {
    op->engine = this;
    if (KUPL_TRACING()) {
        op->trace_start = kupl_trace_now();
        op->trace_track = Op::kTraceAsync; // unordered copies overlap: an asynchronous span each
    }
    count_admitted();
    Op *raw = op.release(); // held by the engine until it finishes (finish() settles it)
    if (start(*raw))
        settle(std::unique_ptr<Op>(raw), nullptr);
}

void Engine::drain_and_stop(std::chrono::milliseconds limit) {
    while (!quiescent())
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    backend_->stop_at_exit(limit);
    executor_->stop_at_exit(limit);
}

} // namespace kupl::sched
