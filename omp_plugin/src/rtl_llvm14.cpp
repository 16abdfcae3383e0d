// The `__tgt_rtl_*` entry points of LLVM 14's libomptarget, each a thin call into Plugin /
// Device. Another libomptarget version would get its own file like this one.
//
// libomptarget calls synchronize only when __tgt_async_info::Queue is non-null, and calls a
// null pointer if synchronize is exported without the async region launchers: the four
// *_async functions and synchronize are exported together.
#include <cxxabi.h>

#include <cstdio>
#include <exception>
#include <new>

#include "device.h"
#include "image_loader.h"
#include "llvm14_abi.h"
#include "plugin.h"
#include "plugin_event.h"
#include "plugin_log.h"
#include "plugin_trace.h"

#define KUPL_OMP_EXPORT extern "C" __attribute__((visibility("default")))

using namespace kupl_omp;

namespace {
Device *device_or_null(int32_t id, const char *entry_point) {
    return Plugin::get().device(id, entry_point);
}

/// Runs one entry point's body. libomptarget is C++ but does not expect a plugin to throw, so an
/// exception (in practice std::bad_alloc from the plugin's own bookkeeping) must not unwind into
/// it: it becomes one error line and the entry point's failure value.
template <typename Result, typename Body> Result guarded(const char *entry_point, Result failure, Body body) {
    try {
        return body();
    } catch (const abi::__forced_unwind &) {
        throw; // thread cancellation must go on unwinding
    } catch (const std::bad_alloc &) {
        report_error("%s: out of memory", entry_point);
    } catch (const std::exception &e) {
        report_error("%s: %s", entry_point, e.what());
    } catch (...) {
        report_error("%s: an unknown C++ exception", entry_point);
    }
    return failure;
}
} // namespace

KUPL_OMP_EXPORT int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *image) {
    return guarded("is_valid_binary", int32_t{0}, [&] {
        const ImageLayout layout = inspect_image(image);
        if (!layout.valid) {
            // Not an error: libomptarget offers every image to every plugin.
            if (info_enabled(kInfoPluginKernel))
                report_info(kInfoPluginKernel, -1, "image refused: %s", layout.reason.c_str());
            return int32_t{0};
        }
        return int32_t{1};
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_number_of_devices() {
    return guarded("number_of_devices", int32_t{0}, [] { return int32_t{Plugin::get().num_devices()}; });
}

KUPL_OMP_EXPORT int64_t __tgt_rtl_init_requires(int64_t flags) {
    // Host and device share one address space, so every `requires` clause is satisfiable.
    return guarded("init_requires", flags, [&] {
        Plugin::get().set_requires(flags);
        return flags;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_init_device(int32_t id) {
    return guarded("init_device", kOffloadFail, [&] {
        Device *device = device_or_null(id, "init_device");
        if (!device || !device->init())
            return kOffloadFail;
        report_info(~0u, id, "%s%s", device->summary().c_str(),
                    Plugin::get().requires_flags() & kRequiresUnifiedSharedMemory ? ", unified shared memory"
                                                                                  : "");
        return kOffloadSuccess;
    });
}

KUPL_OMP_EXPORT __tgt_target_table *__tgt_rtl_load_binary(int32_t id, __tgt_device_image *image) {
    return guarded("load_binary", static_cast<__tgt_target_table *>(nullptr), [&] {
        Device *device = device_or_null(id, "load_binary");
        return device ? device->load(image) : nullptr;
    });
}

KUPL_OMP_EXPORT void *__tgt_rtl_data_alloc(int32_t id, int64_t size, void *host_ptr, int32_t kind) {
    return guarded("data_alloc", static_cast<void *>(nullptr), [&] {
        Device *device = device_or_null(id, "data_alloc");
        return device ? device->allocate(size, kind, host_ptr) : nullptr;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_delete(int32_t id, void *target_ptr) {
    return guarded("data_delete", kOffloadFail, [&] {
        Device *device = device_or_null(id, "data_delete");
        return device ? device->deallocate(target_ptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_submit(int32_t id, void *target_ptr, void *host_ptr, int64_t size) {
    return guarded("data_submit", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("to device", id, size, nullptr);
        Device *device = device_or_null(id, "data_submit");
        return device ? device->submit(target_ptr, host_ptr, size, nullptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_submit_async(int32_t id, void *target_ptr, void *host_ptr,
                                                    int64_t size, __tgt_async_info *info) {
    return guarded("data_submit_async", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("to device", id, size, info);
        Device *device = device_or_null(id, "data_submit_async");
        return device ? device->submit(target_ptr, host_ptr, size, info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_retrieve(int32_t id, void *host_ptr, void *target_ptr, int64_t size) {
    return guarded("data_retrieve", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("from device", id, size, nullptr);
        Device *device = device_or_null(id, "data_retrieve");
        return device ? device->retrieve(host_ptr, target_ptr, size, nullptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_retrieve_async(int32_t id, void *host_ptr, void *target_ptr,
                                                      int64_t size, __tgt_async_info *info) {
    return guarded("data_retrieve_async", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("from device", id, size, info);
        Device *device = device_or_null(id, "data_retrieve_async");
        return device ? device->retrieve(host_ptr, target_ptr, size, info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_is_data_exchangable(int32_t src_id, int32_t dst_id) {
    return guarded("is_data_exchangable", int32_t{0}, [&] {
        const int count = Plugin::get().num_devices();
        return int32_t{src_id >= 0 && src_id < count && dst_id >= 0 && dst_id < count};
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_exchange(int32_t src_id, void *src_ptr, int32_t dst_id, void *dst_ptr,
                                                int64_t size) {
    return guarded("data_exchange", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("device to device", dst_id, size, nullptr);
        Device *src = device_or_null(src_id, "data_exchange");
        Device *dst = device_or_null(dst_id, "data_exchange");
        return src && dst ? src->exchange(dst_ptr, src_ptr, size, nullptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_data_exchange_async(int32_t src_id, void *src_ptr, int32_t dst_id,
                                                      void *dst_ptr, int64_t size, __tgt_async_info *info) {
    return guarded("data_exchange_async", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("device to device", dst_id, size, info);
        Device *src = device_or_null(src_id, "data_exchange_async");
        Device *dst = device_or_null(dst_id, "data_exchange_async");
        return src && dst ? src->exchange(dst_ptr, src_ptr, size, info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_run_target_region(int32_t id, void *entry, void **args, ptrdiff_t *offsets,
                                                    int32_t count) {
    return guarded("run_target_region", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("target region", id, -1, nullptr);
        Device *device = device_or_null(id, "run_target_region");
        return device ? device->run_region(entry, args, offsets, count, nullptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_run_target_region_async(int32_t id, void *entry, void **args,
                                                          ptrdiff_t *offsets, int32_t count,
                                                          __tgt_async_info *info) {
    return guarded("run_target_region_async", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("target region", id, -1, info);
        Device *device = device_or_null(id, "run_target_region_async");
        return device ? device->run_region(entry, args, offsets, count, info) : kOffloadFail;
    });
}

// Teams and thread limits are applied by the outlined host code itself (it forks its own
// league), so the launch is the same as for a plain region.
KUPL_OMP_EXPORT int32_t __tgt_rtl_run_target_team_region(int32_t id, void *entry, void **args,
                                                         ptrdiff_t *offsets, int32_t count,
                                                         int32_t /*num_teams*/, int32_t /*thread_limit*/,
                                                         uint64_t /*trip_count*/) {
    return guarded("run_target_team_region", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("target teams region", id, -1, nullptr);
        Device *device = device_or_null(id, "run_target_team_region");
        return device ? device->run_region(entry, args, offsets, count, nullptr) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_run_target_team_region_async(
    int32_t id, void *entry, void **args, ptrdiff_t *offsets, int32_t count, int32_t /*num_teams*/,
    int32_t /*thread_limit*/, uint64_t /*trip_count*/, __tgt_async_info *info) {
    return guarded("run_target_team_region_async", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("target teams region", id, -1, info);
        Device *device = device_or_null(id, "run_target_team_region_async");
        return device ? device->run_region(entry, args, offsets, count, info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_synchronize(int32_t id, __tgt_async_info *info) {
    return guarded("synchronize", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("synchronize", id, -1, info);
        Device *device = device_or_null(id, "synchronize");
        return device ? device->synchronize(info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_create_event(int32_t id, void **event) {
    return guarded("create_event", kOffloadFail, [&] {
        if (!device_or_null(id, "create_event") || !event)
            return kOffloadFail;
        *event = new PluginEvent();
        return kOffloadSuccess;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_record_event(int32_t id, void *event, __tgt_async_info *info) {
    return guarded("record_event", kOffloadFail, [&] {
        Device *device = device_or_null(id, "record_event");
        return device && event ? device->record_event(static_cast<PluginEvent *>(event), info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_wait_event(int32_t id, void *event, __tgt_async_info *info) {
    return guarded("wait_event", kOffloadFail, [&] {
        kupl_omp::ConstructTrace trace("wait_event", id, -1, info);
        Device *device = device_or_null(id, "wait_event");
        return device && event ? device->wait_event(static_cast<PluginEvent *>(event), info) : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_sync_event(int32_t id, void *event) {
    return guarded("sync_event", kOffloadFail, [&] {
        Device *device = device_or_null(id, "sync_event");
        return device && event ? device->wait_event(static_cast<PluginEvent *>(event), nullptr)
                               : kOffloadFail;
    });
}

KUPL_OMP_EXPORT int32_t __tgt_rtl_destroy_event(int32_t id, void *event) {
    return guarded("destroy_event", kOffloadFail, [&] {
        if (!device_or_null(id, "destroy_event") || !event)
            return kOffloadFail;
        delete static_cast<PluginEvent *>(event);
        return kOffloadSuccess;
    });
}

KUPL_OMP_EXPORT void __tgt_rtl_set_info_flag(uint32_t level) {
    set_info_level(level);
}

KUPL_OMP_EXPORT void __tgt_rtl_print_device_info(int32_t id) {
    guarded("print_device_info", 0, [&] {
        Device *device = device_or_null(id, "print_device_info");
        if (device)
            device->print_info(Plugin::get().num_devices());
        fflush(stdout);
        return 0;
    });
}
