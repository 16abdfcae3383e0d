// One offload device: a NUMA node's memory, the images loaded for it, and the KUPL queues
// that carry its asynchronous work.
//
// What maps to what:
//   __tgt_async_info::Queue  <-> a kupl_queue_h taken from this device's pool while the
//                                construct has work outstanding, returned by synchronize;
//   data_submit/retrieve     <-> nothing outstanding: copied now (memcpy below KUPL's sync
//                                threshold, else kupl_memcpy); else kupl_memcpy_async, and a
//                                retrieve returns once its bytes have landed;
//   a target region          <-> launched outside any `parallel`, or from an image that never
//                                enters libomp: run on the launching thread after the
//                                construct's queued copies; else a host item on
//                                that queue, run by a KUPL executor thread with the team size
//                                it would get on the launching thread; either way the launch
//                                returns once it has run;
//   wait_event               <-> kuplx_queue_wait_event_async (non-blocking); over vendor
//                                KUPL kupl_queue_wait_event (blocking);
//   data_delete              <-> free now if no queue is busy, else a free queued behind an
//                                event recorded on every busy queue (over vendor KUPL: the
//                                last of a countdown item queued on each); never blocks.
// Every method is safe to call from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kupl_api.h"

#include "device_memory.h"
#include "image_loader.h"
#include "llvm14_abi.h"

namespace kupl_omp {

class NumaTopology;
class PluginEvent;

class Device {
  public:
    Device(int id, int node, const NumaTopology &topology);
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    int id() const { return id_; }
    int node() const { return node_; }

    /// Creates the KUPL objects the device needs; idempotent.
    bool init();
    __tgt_target_table *load(const __tgt_device_image *image);

    void *allocate(int64_t size, int32_t kind, const void *host_ptr);
    int32_t deallocate(void *ptr);

    /// info may be null (synchronous call).
    int32_t submit(void *device_dst, const void *host_src, int64_t size, __tgt_async_info *info);
    int32_t retrieve(void *host_dst, const void *device_src, int64_t size, __tgt_async_info *info);
    int32_t exchange(void *dst, const void *src, int64_t size, __tgt_async_info *info);
    /// Runs a target region: on the launching thread when that is outside any `parallel` (no
    /// hand-off, and libomp is right there) or when the region's image never enters libomp,
    /// else on a KUPL executor thread (see region_threads.h). Returns once the region has run
    /// either way.
    int32_t run_region(void *entry, void **args, ptrdiff_t *offsets, int32_t count, __tgt_async_info *info);
    int32_t synchronize(__tgt_async_info *info);

    int32_t record_event(PluginEvent *event, __tgt_async_info *info);
    int32_t wait_event(PluginEvent *event, __tgt_async_info *info);

    /// One line saying what the device is (LIBOMPTARGET_INFO).
    std::string summary() const;
    /// Several lines on stdout (print_device_info).
    void print_info(int num_devices) const;

  private:
    int32_t run_region_here(void *entry, void **args, ptrdiff_t *offsets, int32_t count,
                            __tgt_async_info *info);
    kupl_queue_h queue_of(__tgt_async_info *info);
    void return_queue(kupl_queue_h queue);
    const char *entry_name(const void *entry);
    /// False only if the entry's image provably never enters libomp (image_imports.h).
    bool region_may_enter_openmp(const void *entry);
    bool defer_free(const Allocation &block, const std::vector<kupl_queue_h> &busy);

    const int id_;
    const int node_;
    const NumaTopology &topology_;
    DeviceMemory memory_;

    std::mutex queues_mutex_;
    std::vector<kupl_queue_h> idle_queues_;
    std::vector<kupl_queue_h> busy_queues_;
    kupl_queue_h reaper_ = nullptr; ///< carries deferred frees

    std::mutex images_mutex_;
    std::list<std::unique_ptr<LoadedImage>> images_;
};

} // namespace kupl_omp
