// Events: create, destroy, record, wait, query, error detail.
#include "api/api_support.h"
#include "kupl_ext.h"
#include "sched/op_trace.h"
#include "support/trace.h"

#include <cstdio>

using kupl::api::fail;
using kupl::api::find_event;
using kupl::api::find_queue;
using kupl::api::guarded;
using kupl::api::runtime_for;

extern "C" {

kupl_event_h kupl_event_create(void) {
    return guarded(__func__, kupl_event_h{nullptr}, [](const char *function) -> kupl_event_h {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return nullptr;
        void *handle = runtime->events.add(std::make_shared<kupl::sched::Event>());
        if (handle == nullptr)
            fail(function, "no event handles left (ids are never reused)");
        return static_cast<kupl_event_h>(handle);
    });
}

void kupl_event_destroy(kupl_event_h event) {
    guarded(__func__, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return;
        // Work in flight keeps its own reference and completes normally.
        if (runtime->events.remove(event) == nullptr)
            fail(function, "event %p is not a live event", static_cast<void *>(event));
    });
}

int kupl_event_record(kupl_event_h event, kupl_queue_h queue) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        auto recorded = find_event(*runtime, event, function);
        auto target = find_queue(*runtime, queue, function);
        if (recorded == nullptr || target == nullptr)
            return KUPL_ERROR;
        auto op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::record);
        op->signal_generation = recorded->begin_record(target->synchronous() ? nullptr : target.get());
        if (op->signal_generation == 0)
            return fail(function, "event %p is still SUBMITTED (its previous record is not complete)",
                        static_cast<void *>(event));
        if (KUPL_TRACING()) {
            // An arrow from this call to the record's completion on its queue.
            char args[64];
            std::snprintf(args, sizeof args, "\"event\":%llu,\"queue\":%llu",
                          static_cast<unsigned long long>(recorded->trace_id()),
                          static_cast<unsigned long long>(target->trace_number()));
            const std::uint64_t now = kupl_trace_now();
            kupl_trace_slice(0, "event", function, now, now, args);
            op->trace_record_flow = kupl_trace_new_id();
            kupl_trace_flow_start("event", "record", op->trace_record_flow, kupl_trace_thread_track(), now);
        }
        const std::uint64_t generation = op->signal_generation;
        op->signal = recorded; // settled by the op from here, even if it is not accepted
        target->enqueue(std::move(op));
        recorded->publish_record(generation); // a wait on its queue may now be queued behind it
        return KUPL_OK;
    });
}

[[gnu::hot]] int kupl_event_wait(kupl_event_h event) {
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        // Borrowed (api_support.h): the wait looks up nothing else and runs no user code.
        kupl::sched::Event *awaited = kupl::api::borrow_event(*runtime, event, function);
        if (awaited == nullptr)
            return KUPL_ERROR;
        const std::uint64_t generation = awaited->latest_record();
        if (generation == 0)
            return fail(function, "event %p was never recorded", static_cast<void *>(event));
        // A record still pending on a queue whose item this thread runs is behind that item: it
        // cannot complete before the item returns (as kupl_queue_wait from there).
        if (!awaited->is_complete(generation) &&
            kupl::sched::Queue::running_item_of(awaited->record_queue(generation)))
            return fail(
                function,
                "event %p is recorded behind the calling item on its own queue: the wait would deadlock",
                static_cast<void *>(event));
        {
            kupl::support::TraceScope trace("wait", function);
            runtime->engine->block_until([awaited, generation] { return awaited->is_complete(generation); },
                                         awaited->completions());
            if (trace.active()) {
                std::snprintf(trace.args, sizeof trace.args, "\"event\":%llu,\"generation\":%llu",
                              static_cast<unsigned long long>(awaited->trace_id()),
                              static_cast<unsigned long long>(generation));
                // Just inside the wait's start: further in, the copy pieces this thread helped
                // with are nested, and an arrow binds to the innermost slice around its end.
                kupl::sched::trace_flow_from_event(*awaited, generation, kupl_trace_thread_track(),
                                                   trace.start() + 1);
            }
        }
        if (const char *why = awaited->error())
            return fail(function, "the work of event %p failed: %s", static_cast<void *>(event), why);
        return KUPL_OK;
    });
}

[[gnu::hot]] int kupl_event_query(kupl_event_h event) {
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        auto queried = find_event(*runtime, event, function);
        return queried == nullptr ? KUPL_ERROR : queried->status();
    });
}

int kuplx_event_get_error(kupl_event_h event, char *message, size_t size) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        auto queried = find_event(*runtime, event, function);
        if (queried == nullptr) {
            if (message != nullptr && size > 0)
                std::snprintf(message, size, "invalid event handle");
            return KUPL_ERROR;
        }
        const char *why = queried->error();
        if (message != nullptr && size > 0)
            std::snprintf(message, size, "%s", why != nullptr ? why : "");
        return why != nullptr ? KUPL_ERROR : KUPL_OK;
    });
}

} // extern "C"
