// One unit of in-order work on a queue: a copy, a host function, an event record, or a wait for
// another event. Ops are created by the API layer, ordered by Queue and executed by Engine.
#pragma once

#include "copy/backend.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace kupl::sched {

class Engine;
class Event;
class Queue;

struct Op final : copy::CopyCompletion {
    enum class Kind { copy, host_function, record, wait_event };

    explicit Op(Kind k) : kind(k) {}

    Kind kind;
    copy::CopyDescriptor copy;      // Kind::copy
    std::function<void()> function; // Kind::host_function (owns a by-value copy of its args)

    // Completed when this op finishes (the copy's event, or the recorded event).
    std::shared_ptr<Event> signal;
    std::uint64_t signal_generation = 0;
    // Kind::wait_event: the op finishes when this record of the event completes.
    std::shared_ptr<Event> awaited;
    std::uint64_t awaited_generation = 0;

    std::shared_ptr<Queue> queue; // null for an unordered copy (queue == NULL in the API)
    Engine *engine = nullptr;
    const char *error = nullptr; // why it failed (static text), nullptr if it did not

    void copy_done(const char *why) override;
};

} // namespace kupl::sched
