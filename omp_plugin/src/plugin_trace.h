// The plugin's own view of each construct in the KUPL trace (KUPL_TRACE): a slice on the calling
// thread per libomptarget call, saying which device, how many bytes, and which KUPL queue the
// work went to (the handle; libkupl marks each queue's track with its handle when it is
// created), so a `target update ... nowait` can be followed to the copies it became. Written
// through libkupl_trace only, so it works over any KUPL.
#pragma once

#include "kupl_trace.h"
#include "llvm14_abi.h"

#include <cstdint>
#include <cstdio>

namespace kupl_omp {

class ConstructTrace {
  public:
    // `info` is read when the call returns (the queue is chosen inside it); a synchronize resets
    // it, so its queue is taken now as well.
    ConstructTrace(const char *name, int32_t device, int64_t bytes, __tgt_async_info *info)
        : name_(name), device_(device), bytes_(bytes), info_(info),
          queue_(info != nullptr ? info->Queue : nullptr), start_(kupl_trace_on() ? kupl_trace_now() : 0) {}
    ~ConstructTrace() {
        if (start_ == 0 || !kupl_trace_on())
            return;
        void *queue = info_ != nullptr && info_->Queue != nullptr ? info_->Queue : queue_;
        char args[160];
        int used = std::snprintf(args, sizeof args, "\"device\":%d,\"async\":%s", static_cast<int>(device_),
                                 info_ != nullptr ? "true" : "false");
        if (bytes_ >= 0)
            used += std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used),
                                  ",\"bytes\":%lld", static_cast<long long>(bytes_));
        if (queue != nullptr)
            std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used), ",\"kupl_queue\":\"%p\"",
                          queue);
        kupl_trace_slice(0, "omp.construct", name_, start_, kupl_trace_now(), args);
    }
    ConstructTrace(const ConstructTrace &) = delete;
    ConstructTrace &operator=(const ConstructTrace &) = delete;

  private:
    const char *name_;
    int32_t device_;
    int64_t bytes_;
    __tgt_async_info *info_;
    void *queue_;
    std::uint64_t start_;
};

} // namespace kupl_omp
