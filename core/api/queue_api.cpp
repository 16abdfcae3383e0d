// Queues: create, destroy, wait, host-function items, acquired queues.
#include "api/api_support.h"
#include "kupl_ext.h"
#include "sched/op_trace.h"
#include "support/trace.h"

#include <cstdio>
#include <cstring>

using kupl::api::fail;
using kupl::api::find_event;
using kupl::api::find_queue;
using kupl::api::guarded;
using kupl::api::runtime_for;

namespace {

constexpr int least_priority = 0;
constexpr int greatest_priority = 3;

kupl_queue_h create_queue(const char *function, int priority) {
    kupl::Runtime *runtime = runtime_for(function);
    if (runtime == nullptr)
        return nullptr;
    if (priority < least_priority || priority > greatest_priority) {
        fail(function, "priority %d is outside %d..%d", priority, least_priority, greatest_priority);
        return nullptr;
    }
    auto queue = std::make_shared<kupl::sched::Queue>(*runtime->engine, priority, false);
    kupl::sched::Queue *created = queue.get();
    void *handle = runtime->queues.add(std::move(queue));
    if (handle == nullptr)
        fail(function, "no queue handles left (ids are never reused)");
    else if (KUPL_TRACING())
        created->trace_handle(handle);
    return static_cast<kupl_queue_h>(handle);
}

// The item's name (KUPL_QUEUE_ITEM_DESC_FIELD_NAME), or nullptr.
const char *item_name(const kupl_queue_item_desc_t *desc) {
    if (desc == nullptr || (desc->field_mask & KUPL_QUEUE_ITEM_DESC_FIELD_NAME) == 0)
        return nullptr;
    return desc->name;
}

int submit_function(const char *function, kupl_queue_h queue, std::function<void()> body,
                    const char *name = nullptr) {
    kupl::Runtime *runtime = runtime_for(function);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto target = find_queue(*runtime, queue, function);
    if (target == nullptr)
        return KUPL_ERROR;
    auto op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::host_function);
    op->function = std::move(body);
    if (name != nullptr && KUPL_TRACING())
        std::snprintf(op->trace_name, sizeof op->trace_name, "%s", name);
    target->enqueue(std::move(op)); // the synchronous queue runs it now, on this thread
    return KUPL_OK;
}

// Makes later work on queue wait for event's latest record; with `block`, also waits for that
// point of the queue (kupl_queue_wait_event) and reports a failure of the awaited work.
int order_after_event(const char *function, kupl_queue_h queue, kupl_event_h event, bool block) {
    kupl::Runtime *runtime = runtime_for(function);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto target = find_queue(*runtime, queue, function);
    auto awaited = find_event(*runtime, event, function);
    if (target == nullptr || awaited == nullptr)
        return KUPL_ERROR;
    if (block && target->called_from_own_item())
        return fail(function, "waiting on a queue from one of its own items would deadlock");
    if (awaited->latest_record() == 0)
        return fail(function, "the event was never recorded");
    // Not latest_record(): a record another thread has begun but not yet placed may be on this
    // very queue, and a wait queued ahead of it would never end. Ordering after the record before
    // it is as if this call came first. 0 (the first record, not yet placed) waits for nothing.
    const std::uint64_t generation = awaited->placed_record();
    auto op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::wait_event);
    op->awaited = awaited;
    op->awaited_generation = generation;
    const std::uint64_t ticket = target->enqueue(std::move(op));
    if (!block)
        return KUPL_OK;
    kupl::support::TraceScope trace("wait", function);
    target->wait_for(ticket);
    if (trace.active()) {
        std::snprintf(trace.args, sizeof trace.args, "\"queue\":%llu,\"event\":%llu",
                      static_cast<unsigned long long>(target->trace_number()),
                      static_cast<unsigned long long>(awaited->trace_id()));
        // Just inside the wait's start: pieces it helped with are nested further in.
        kupl::sched::trace_flow_from_event(*awaited, generation, kupl_trace_thread_track(),
                                           trace.start() + 1);
    }
    if (const char *why = awaited->error())
        return fail(function, "the awaited work failed: %s", why);
    return KUPL_OK;
}

} // namespace

extern "C" {

kupl_queue_h kupl_queue_create(void) {
    return guarded(__func__, kupl_queue_h{nullptr},
                   [](const char *function) { return create_queue(function, 0); });
}

kupl_queue_h kupl_queue_create_with_priority(int priority) {
    return guarded(__func__, kupl_queue_h{nullptr},
                   [&](const char *function) { return create_queue(function, priority); });
}

int kupl_get_queue_priority_range(int *least, int *greatest) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (least == nullptr || greatest == nullptr)
            return fail(function, "%s is NULL", least == nullptr ? "least_priority" : "greatest_priority");
        *least = least_priority;
        *greatest = greatest_priority;
        return KUPL_OK;
    });
}

void kupl_queue_destroy(kupl_queue_h queue) {
    guarded(__func__, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return;
        auto target = find_queue(*runtime, queue, function);
        if (target == nullptr)
            return;
        if (runtime->is_acquired(queue)) {
            fail(function, "queue %p belongs to the runtime (kupl_queue_acquire) and is not destroyed",
                 static_cast<void *>(queue));
            return;
        }
        if (target->called_from_own_item()) {
            fail(function,
                 "a queue cannot be destroyed from one of its own items (it would wait for itself)");
            return;
        }
        {
            kupl::support::TraceScope trace("wait", function);
            if (trace.active())
                std::snprintf(trace.args, sizeof trace.args, "\"queue\":%llu",
                              static_cast<unsigned long long>(target->trace_number()));
            target->wait_all(); // KUPL destroys after the pending work is done
        }
        runtime->queues.remove(queue);
    });
}

int kupl_queue_wait(kupl_queue_h queue) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        auto target = find_queue(*runtime, queue, function);
        if (target == nullptr)
            return KUPL_ERROR;
        if (target->called_from_own_item())
            return fail(function, "waiting on a queue from one of its own items would deadlock");
        bool ok;
        {
            kupl::support::TraceScope trace("wait", function);
            if (trace.active())
                std::snprintf(trace.args, sizeof trace.args, "\"queue\":%llu",
                              static_cast<unsigned long long>(target->trace_number()));
            ok = target->wait_all();
        }
        if (!ok)
            return fail(function, "work on the queue failed since the previous wait");
        return KUPL_OK;
    });
}

int kupl_queue_wait_event(kupl_queue_h queue, kupl_event_h event) {
    return guarded(__func__, KUPL_ERROR,
                   [&](const char *function) { return order_after_event(function, queue, event, true); });
}

int kuplx_queue_wait_event_async(kupl_queue_h queue, kupl_event_h event) {
    return guarded(__func__, KUPL_ERROR,
                   [&](const char *function) { return order_after_event(function, queue, event, false); });
}

int kupl_queue_submit(kupl_queue_h queue, kupl_queue_item_desc_t *desc) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (desc == nullptr)
            return fail(function, "desc is NULL");
        if (desc->func == nullptr)
            return fail(function, "desc->func is NULL");
        kupl_queue_item_func_t func = desc->func;
        if ((desc->field_mask & KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE) != 0 && desc->args_size != 0) {
            if (desc->args == nullptr)
                return fail(function, "desc->args is NULL but args_size is %zu", desc->args_size);
            // By value: the caller may reuse its args as soon as this returns. (Rounded up without
            // overflow: an absurd args_size fails to allocate instead of wrapping to a small one.)
            constexpr std::size_t unit = sizeof(std::max_align_t);
            const std::size_t units = desc->args_size / unit + (desc->args_size % unit != 0 ? 1 : 0);
            auto copy = std::shared_ptr<std::max_align_t[]>(new std::max_align_t[units]);
            std::memcpy(copy.get(), desc->args, desc->args_size);
            return submit_function(
                function, queue, [func, copy] { func(copy.get()); }, item_name(desc));
        }
        void *args = desc->args;
        return submit_function(
            function, queue, [func, args] { func(args); }, item_name(desc));
    });
}

kupl_queue_h kupl_queue_acquire(int index) {
    return guarded(__func__, kupl_queue_h{nullptr}, [&](const char *function) -> kupl_queue_h {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return nullptr;
        if (index < KUPL_ASYNC_SYNC) {
            fail(function, "index %d is negative (only KUPL_ASYNC_SYNC = -1 is allowed)", index);
            return nullptr;
        }
        return static_cast<kupl_queue_h>(runtime->acquire_queue(index));
    });
}

int kupl_queue_wait_all(void) {
    return guarded(__func__, KUPL_ERROR, [](const char *function) {
        kupl::Runtime *runtime = runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        bool ok;
        {
            kupl::support::TraceScope trace("wait", function);
            ok = runtime->wait_acquired();
        }
        // A natural point to write the trace out: the program has just waited for everything.
        if (KUPL_TRACING())
            kupl_trace_flush();
        if (!ok)
            return fail(function, "work on an acquired queue failed since its previous wait");
        return KUPL_OK;
    });
}

} // extern "C"

namespace kupl {

int queue_submit(kupl_queue_h queue, kupl_queue_item_desc_t *desc, const std::function<void(void)> &func) {
    return guarded("kupl::queue_submit", KUPL_ERROR, [&](const char *function) {
        if (!func)
            return fail(function, "func is empty");
        return submit_function(function, queue, func, item_name(desc));
    });
}

} // namespace kupl
