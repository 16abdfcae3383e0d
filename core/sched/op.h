// One unit of in-order work on a queue: a copy, a host function, an event record, or a wait for
// another event. Ops are created by the API layer, ordered by Queue and executed by Engine.
//
// One lifetime rule: an op is held by exactly one std::unique_ptr from its creation until the
// engine settles it (Engine::settle, which completes its event, counts it and frees it) — its
// queue's list while it waits or runs there, the synchronous call that runs it, or, for an op no
// queue orders, the engine itself from start() until the op's completion hands it back. An op
// dropped before it was admitted (its submitting call failed) settles its record in ~Op.
#pragma once

#include "copy/backend.h"
#include "sched/event.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kupl::sched {

class Engine;
class Queue;
struct Op;

// One copy of a batch (kuplx_memcpy_batch_async): completes on its own and tells its op.
struct BatchPiece final : copy::CopyCompletion {
    copy::CopyDescriptor copy;
    Op *op = nullptr; // set when the batch starts

    void copy_done(const char *why) override;
};

// Everything an op needs once accepted is allocated with it (the engine allocates nothing on the
// way), so accepted work completes even when memory has run out.
struct Op final : copy::CopyCompletion, EventWaiter {
    enum class Kind { copy, batch, host_function, record, wait_event };

    // The error of a record whose op was dropped before it was accepted (see ~Op).
    static constexpr const char *kNotAccepted = "the work was not accepted (the runtime ran out of memory)";

    explicit Op(Kind k) : kind(k) {}
    Op(const Op &) = delete;
    Op &operator=(const Op &) = delete;
    // An op dropped before it was accepted (its submitting call failed, e.g. for lack of memory)
    // still settles the record it began, with an error: every record completes.
    ~Op();

    Kind kind;
    copy::CopyDescriptor copy; // Kind::copy (for Kind::batch only its priority is used)
    // Kind::batch: copies that run in any order, at once; the op finishes with the last of them,
    // failed if any failed (with the first error reported).
    std::vector<BatchPiece> batch;
    std::atomic<std::size_t> batch_left{0};         // pieces not done, plus one while starting
    std::atomic<std::size_t> batch_failed{0};       // pieces that failed
    std::atomic<const char *> batch_error{nullptr}; // the first failure's reason
    std::function<void()> function;                 // Kind::host_function (owns a by-value copy of its args)

    // Completed when this op finishes (the copy's event, or the recorded event); reset once
    // settled (Engine::settle).
    std::shared_ptr<Event> signal;
    std::uint64_t signal_generation = 0;
    // Kind::wait_event: the op finishes when this record of the event completes.
    std::shared_ptr<Event> awaited;
    std::uint64_t awaited_generation = 0;

    std::shared_ptr<Queue> queue;  // null for an unordered copy (queue == NULL in the API)
    std::uint64_t item_ticket = 0; // the synchronous queue's ticket (marks its host item's scope)
    Engine *engine = nullptr;
    const char *error = nullptr; // why it failed (static text), nullptr if it did not

    // Tracing (KUPL_TRACE; all zero when off). The op's slice runs from trace_start (when it
    // became its queue's head, or was run) to its settling, on trace_track: its queue's track, 0
    // for the calling thread (the synchronous queue), kTraceAsync for a copy no queue orders.
    static constexpr std::uint64_t kTraceAsync = ~std::uint64_t{0};
    std::uint64_t trace_start = 0;
    std::uint64_t trace_track = 0;
    std::uint64_t trace_record_flow = 0;         // Kind::record: the arrow from kupl_event_record
    std::uint64_t signal_event_id = 0;           // the trace number of the event it completes
    std::atomic<std::uint64_t> trace_threads{0}; // Kind::copy: who executed it
    char trace_name[48] = "";                    // Kind::host_function: the item's name

    void copy_done(const char *why) override;
    void event_complete() override; // Kind::wait_event: the awaited record is complete
    // Kind::batch: one piece is done (why: nullptr or its error). Returns true for the last one
    // (the op has finished; its error is set).
    bool batch_piece_done(const char *why);
    std::size_t batch_bytes() const;
};

} // namespace kupl::sched
