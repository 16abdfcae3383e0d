// Shared by the C entry points: error returns with a log line, and handle look-ups.
#pragma once

#include "kupl.h"
#include "runtime.h"

#include <memory>

namespace kupl::api {

// Logs "<function>: <message>" at KUPL_LOG_LEVEL >= 1 and returns KUPL_ERROR.
int fail(const char *function, const char *format, ...) __attribute__((format(printf, 2, 3)));

// The runtime, or nullptr (logged) if the process is exiting.
Runtime *runtime_for(const char *function);

// The live object behind a handle, or nullptr (logged) for NULL, destroyed or foreign handles.
std::shared_ptr<sched::Queue> find_queue(Runtime &runtime, kupl_queue_h queue, const char *function);
std::shared_ptr<sched::Event> find_event(Runtime &runtime, kupl_event_h event, const char *function);

} // namespace kupl::api
