// A libomptarget event: the latest point recorded in some asynchronous work of a device.
// It owns at most one KUPL event; a record while the previous one is still in flight
// switches to a fresh KUPL event (KUPL refuses to re-record a SUBMITTED event).
#pragma once

#include <mutex>

#include "kupl_api.h"

namespace kupl_omp {

class PluginEvent {
  public:
    PluginEvent() = default;
    ~PluginEvent();
    PluginEvent(const PluginEvent &) = delete;
    PluginEvent &operator=(const PluginEvent &) = delete;

    /// Records the current end of queue; a null queue means "nothing outstanding".
    bool record(kupl_queue_h queue);
    /// Makes later work on the queue returned by get_queue() wait for the latest record:
    /// without blocking over our KUPL (kuplx_queue_wait_event_async); over vendor KUPL, which
    /// has no such call, by blocking until the record is complete (kupl_queue_wait_event).
    /// get_queue is only called if there is something to wait for.
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
#ifdef KUPLX_AVAILABLE
    return queue && kuplx_queue_wait_event_async(queue, event_) == KUPL_OK;
#else
    // Stronger than libomptarget asks (it also waits for the queue's earlier work), and it
    // holds this thread, but nothing the recorded work needs: it runs on KUPL's threads.
    return queue && kupl_queue_wait_event(queue, event_) == KUPL_OK;
#endif
}

} // namespace kupl_omp
