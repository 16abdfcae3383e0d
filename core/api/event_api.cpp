// Events: create, destroy, record, wait, query, error detail.
#include "api/api_support.h"
#include "kupl_ext.h"

#include <cstring>
#include <string>

using kupl::api::fail;
using kupl::api::find_event;
using kupl::api::find_queue;
using kupl::api::runtime_for;

extern "C" {

kupl_event_h kupl_event_create(void) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return nullptr;
    return static_cast<kupl_event_h>(runtime->events.add(std::make_shared<kupl::sched::Event>()));
}

void kupl_event_destroy(kupl_event_h event) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return;
    // Work in flight keeps its own reference and completes normally.
    if (runtime->events.remove(event) == nullptr)
        fail(__func__, "event %p is not a live event", static_cast<void *>(event));
}

int kupl_event_record(kupl_event_h event, kupl_queue_h queue) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto recorded = find_event(*runtime, event, __func__);
    auto target = find_queue(*runtime, queue, __func__);
    if (recorded == nullptr || target == nullptr)
        return KUPL_ERROR;
    auto op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::record);
    op->signal_generation = recorded->begin_record();
    if (op->signal_generation == 0)
        return fail(__func__, "event %p is still SUBMITTED (its previous record is not complete)",
                    static_cast<void *>(event));
    op->signal = std::move(recorded);
    target->enqueue(std::move(op));
    return KUPL_OK;
}

int kupl_event_wait(kupl_event_h event) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto awaited = find_event(*runtime, event, __func__);
    if (awaited == nullptr)
        return KUPL_ERROR;
    const std::uint64_t generation = awaited->latest_record();
    if (generation == 0)
        return fail(__func__, "event %p was never recorded", static_cast<void *>(event));
    // A record still pending on a queue whose item this thread runs is behind that item: it
    // cannot complete before the item returns (as kupl_queue_wait from there).
    if (!awaited->is_complete(generation) &&
        kupl::sched::Queue::running_item_of(awaited->record_queue(generation)))
        return fail(__func__,
                    "event %p is recorded behind the calling item on its own queue: the wait would deadlock",
                    static_cast<void *>(event));
    runtime->engine->block_until([&awaited, generation] { return awaited->is_complete(generation); },
                                 awaited->completions());
    std::string why;
    if (awaited->failed(&why))
        return fail(__func__, "the work of event %p failed: %s", static_cast<void *>(event), why.c_str());
    return KUPL_OK;
}

int kupl_event_query(kupl_event_h event) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto queried = find_event(*runtime, event, __func__);
    return queried == nullptr ? KUPL_ERROR : queried->status();
}

int kuplx_event_get_error(kupl_event_h event, char *message, size_t size) {
    kupl::Runtime *runtime = runtime_for(__func__);
    if (runtime == nullptr)
        return KUPL_ERROR;
    auto queried = find_event(*runtime, event, __func__);
    if (queried == nullptr) {
        if (message != nullptr && size > 0)
            std::snprintf(message, size, "invalid event handle");
        return KUPL_ERROR;
    }
    std::string why;
    const bool failed = queried->failed(&why);
    if (message != nullptr && size > 0)
        std::snprintf(message, size, "%s", why.c_str());
    return failed ? KUPL_ERROR : KUPL_OK;
}

} // extern "C"
