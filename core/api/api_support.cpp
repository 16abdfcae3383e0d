#include "api/api_support.h"

#include "support/log.h"
#include "support/trace.h"

#include <cxxabi.h>

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>

namespace kupl::api {

int fail(const char *function, const char *format, ...) {
    if (KUPL_TRACING()) { // every failed call shows on its thread's track
        char message[300], escaped[320], args[400];
        va_list args_list;
        va_start(args_list, format);
        std::vsnprintf(message, sizeof message, format, args_list);
        va_end(args_list);
        std::snprintf(args, sizeof args, "\"call\":\"%s\",\"message\":\"%s\"", function,
                      kupl_trace_escape(escaped, sizeof escaped, message));
        kupl_trace_instant(0, "error", "error", kupl_trace_now(), args);
    }
    if (support::log_enabled(support::LogLevel::error)) {
        char message[400];
        va_list args;
        va_start(args, format);
        std::vsnprintf(message, sizeof message, format, args);
        va_end(args);
        support::log(support::LogLevel::error, "%s: %s", function, message);
    }
    return KUPL_ERROR;
}

void report_exception(const char *function) {
    try {
        throw;
    } catch (const abi::__forced_unwind &) {
        throw; // thread cancellation must go on unwinding
    } catch (const std::bad_alloc &) {
        fail(function, "out of memory");
    } catch (const std::exception &e) {
        fail(function, "%s", e.what());
    } catch (...) {
        fail(function, "an unknown C++ exception");
    }
}

[[gnu::hot]] Runtime *runtime_for(const char *function) {
    Runtime *runtime = Runtime::get();
    if (runtime == nullptr)
        fail(function, "the runtime is not available (process exiting or start-up failed)");
    return runtime;
}

namespace {

// Logs why a handle was not found: NULL, or not a live object of its kind ("a queue").
template <typename Handle>
void report_missing(const char *function, Handle handle, const char *kind, const char *a_kind) {
    if (handle == nullptr)
        fail(function, "%s is NULL", kind);
    else
        fail(function, "%s %p is not a live %s (destroyed, from before fork(), or not %s)", kind,
             static_cast<void *>(handle), kind, a_kind);
}

} // namespace

std::shared_ptr<sched::Queue> find_queue(Runtime &runtime, kupl_queue_h queue, const char *function) {
    std::shared_ptr<sched::Queue> found = queue != nullptr ? runtime.queues.find(queue) : nullptr;
    if (found == nullptr)
        report_missing(function, queue, "queue", "a queue");
    return found;
}

std::shared_ptr<sched::Event> find_event(Runtime &runtime, kupl_event_h event, const char *function) {
    std::shared_ptr<sched::Event> found = event != nullptr ? runtime.events.find(event) : nullptr;
    if (found == nullptr)
        report_missing(function, event, "event", "an event");
    return found;
}

[[gnu::hot]] sched::Queue *borrow_queue(Runtime &runtime, kupl_queue_h queue, const char *function) {
    sched::Queue *found = queue != nullptr ? runtime.queues.borrow(queue) : nullptr;
    if (found == nullptr)
        report_missing(function, queue, "queue", "a queue");
    return found;
}

[[gnu::hot]] sched::Event *borrow_event(Runtime &runtime, kupl_event_h event, const char *function) {
    sched::Event *found = event != nullptr ? runtime.events.borrow(event) : nullptr;
    if (found == nullptr)
        report_missing(function, event, "event", "an event");
    return found;
}

} // namespace kupl::api
