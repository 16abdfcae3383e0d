// Shared by the C entry points: the exception boundary, error returns with a log line, and handle
// look-ups.
//
// The functions on the path of a copy and its wait (here and in sched/, copy/) are [[gnu::hot]],
// lambdas too: GCC places them side by side (.text.hot), in the order of the files and of the
// functions in them (core/CMakeLists.txt), and what only slower paths need (a handle not in this
// thread's cache, an op to build, a wait for unfinished work) is kept out of line. A small copy
// that runs at once, with its wait, so runs from 2 of libkupl's code pages (9 before the
// grouping). On a VM each cold page is a nested page walk of ~0.8 us, a cold line ~0.13 us
// (core_cold_state_bench).
#pragma once

#include "kupl.h"
#include "runtime.h"

#include <memory>
#include <type_traits>

namespace kupl::api {

// Logs "<function>: <message>" at KUPL_LOG_LEVEL >= 1 and returns KUPL_ERROR.
int fail(const char *function, const char *format, ...) __attribute__((format(printf, 2, 3)));

// Logs the exception being handled (call from a catch block) on behalf of `function`. Rethrows
// only a thread cancellation's forced unwind, which must go on.
void report_exception(const char *function);

// The body of every exported entry point runs inside guarded(), so no C++ exception ever reaches
// a C caller: an exception (std::bad_alloc when memory runs out, std::system_error when a thread
// or lock cannot be had) becomes the call's error result, `on_exception`, logged like every other
// failure. body(function) returns the call's result.
// Always inlined: an entry point and its body are one function on the copy path's code pages.
template <typename Result, typename Body>
[[gnu::always_inline]] inline Result guarded(const char *function, Result on_exception, Body &&body) {
    try {
        return body(function);
    } catch (...) {
        report_exception(function);
    }
    return on_exception;
}
// For entry points that return nothing.
template <typename Body> [[gnu::always_inline]] inline void guarded(const char *function, Body &&body) {
    try {
        body(function);
    } catch (...) {
        report_exception(function);
    }
}

// The runtime, or nullptr (logged) if the process is exiting.
Runtime *runtime_for(const char *function);

// The live object behind a handle, or nullptr (logged) for NULL, destroyed or foreign handles.
std::shared_ptr<sched::Queue> find_queue(Runtime &runtime, kupl_queue_h queue, const char *function);
std::shared_ptr<sched::Event> find_event(Runtime &runtime, kupl_event_h event, const char *function);
// The same, borrowed (see HandleTable::borrow): valid until the calling thread's next look-up of
// a handle of the same kind, with no reference counted. For the hot calls (a copy, an event wait)
// that look up each handle once and run no user code while they use it.
sched::Queue *borrow_queue(Runtime &runtime, kupl_queue_h queue, const char *function);
sched::Event *borrow_event(Runtime &runtime, kupl_event_h event, const char *function);

} // namespace kupl::api
