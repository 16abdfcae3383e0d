#include "plugin_event.h"

#include "plugin_log.h"

namespace kupl_omp {

PluginEvent::~PluginEvent() {
    if (event_)
        kupl_event_destroy(event_); // safe while in flight
}

bool PluginEvent::pending_locked() const {
    return event_ && kupl_event_query(event_) == KUPL_EVENT_STATUS_SUBMITTED;
}

bool PluginEvent::record(kupl_queue_h queue) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queue) {
        // Nothing is outstanding in the recording construct: the new record is complete at once.
        if (pending_locked()) {
            kupl_event_destroy(event_);
            event_ = nullptr;
        }
        return true;
    }
    if (pending_locked()) {
        kupl_event_destroy(event_);
        event_ = nullptr;
    }
    if (!event_ && !(event_ = kupl_event_create())) {
        report_error("kupl_event_create failed");
        return false;
    }
    if (kupl_event_record(event_, queue) != KUPL_OK) {
        report_error("kupl_event_record failed");
        return false;
    }
    return true;
}

bool PluginEvent::synchronize() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!event_ || kupl_event_query(event_) == KUPL_EVENT_STATUS_CREATED)
        return true;
    return kupl_event_wait(event_) == KUPL_OK;
}

} // namespace kupl_omp
