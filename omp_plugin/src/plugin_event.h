// A libomptarget event: the latest point recorded in some asynchronous work of a device.
// It owns at most one KUPL event; a record while the previous one is still in flight
// switches to a fresh KUPL event (KUPL refuses to re-record a SUBMITTED event).
#pragma once

#include <mutex>

#include <kupl.h>
#include <kupl_ext.h>

namespace kupl_omp {

class PluginEvent {
  public:
    PluginEvent() = default;
    ~PluginEvent();
    PluginEvent(const PluginEvent &) = delete;
    PluginEvent &operator=(const PluginEvent &) = delete;

    /// Records the current end of queue; a null queue means "nothing outstanding".
    bool record(kupl_queue_h queue);
    /// Makes later work on the queue returned by get_queue() wait for the latest record,
    /// without blocking. get_queue is only called if there is something to wait for.
    template <class GetQueue> bool order_after(GetQueue get_queue);
    /// Blocks until the latest record is complete.
    bool synchronize();

  private:
    bool pending_locked() const;

    std::mutex mutex_;
    kupl_event_h event_ = nullptr;
};

template <class GetQueue> bool PluginEvent::order_after(GetQueue get_queue) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_locked())
        return true; // never recorded, or already complete: nothing to order after
    kupl_queue_h queue = get_queue();
    return queue && kuplx_queue_wait_event_async(queue, event_) == KUPL_OK;
}

} // namespace kupl_omp
