#include "device.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kupl_trace.h"
#include "numa_topology.h"
#include "plugin_event.h"
#include "plugin_log.h"
#include "region_call.h"
#include "region_threads.h"
#include "support/env_config.h"

namespace kupl_omp {
namespace {

int32_t status(bool ok) {
    return ok ? kOffloadSuccess : kOffloadFail;
}

/// Copies smaller than this, with nothing outstanding, are done by the calling thread with
/// memcpy: KUPL's own kupl_memcpy copies them on the caller too (below its "sync threshold"),
/// so going through it would only add its bookkeeping. 0 until init() reads the engine.
std::atomic<int64_t> g_direct_copy_bytes{0};

/// Large copies the KUPL engine is doing for constructs right now.
std::atomic<int> g_engine_copies{0};

/// A copy that needs no ordering. Large ones go to the KUPL engine, which splits them over its
/// channels and the waiting caller; but while the engine already carries another construct's
/// copy, the caller (which would only wait) copies itself, so that concurrent constructs copy
/// in parallel instead of queueing behind the engine's channels.
int32_t copy_now(void *dst, const void *src, int64_t size) {
    if (size >= g_direct_copy_bytes.load(std::memory_order_relaxed)) {
        if (g_engine_copies.fetch_add(1, std::memory_order_acq_rel) == 0) {
            const bool ok = kupl_memcpy(dst, src, static_cast<size_t>(size)) == KUPL_OK;
            g_engine_copies.fetch_sub(1, std::memory_order_acq_rel);
            return status(ok);
        }
        g_engine_copies.fetch_sub(1, std::memory_order_acq_rel);
    }
    const uint64_t trace_start = kupl_trace_on() ? kupl_trace_now() : 0;
    memcpy(dst, src, static_cast<size_t>(size));
    if (trace_start != 0 && kupl_trace_on()) { // no KUPL call to show it: the plugin says so itself
        char args[64];
        std::snprintf(args, sizeof args, "\"copy\":0,\"bytes\":%lld,\"by\":\"plugin\"",
                      static_cast<long long>(size));
        kupl_trace_slice(0, "copy", "memcpy (plugin, on the caller)", trace_start, kupl_trace_now(), args);
    }
    return kOffloadSuccess;
}

/// KUPL_OMP_DIRECT_COPY_BYTES, else the engine's synchronous-copy threshold.
int64_t direct_copy_threshold() {
    constexpr uint64_t kUnset = UINT64_MAX;
    const uint64_t bytes = kupl::env::read_size("KUPL_OMP_DIRECT_COPY_BYTES", kUnset, 0, kupl::env::kMaxBytes,
                                                "the engine's sync threshold");
    if (bytes != kUnset)
        return static_cast<int64_t>(bytes);
#ifdef KUPLX_AVAILABLE
    kuplx_engine_info_t engine{};
    return kuplx_get_engine_info(&engine) == KUPL_OK ? static_cast<int64_t>(engine.sync_threshold) : 0;
#else
    // Vendor KUPL does not tell its threshold: its documented default
    // (KUPL_MEMCPY_SDMA_THRESHOLD); below it vendor's kupl_memcpy is a memcpy on the caller too.
    return int64_t(512) << 10;
#endif
}

/// Queues a copy on a construct's queue. Our KUPL takes a NULL event; vendor KUPL refuses one,
/// so over it each copy records a throwaway event (destroying one in flight is allowed). A NULL
/// queue (kupl_queue_create failed) is refused here: our KUPL would run the copy unordered.
bool enqueue_copy(void *dst, const void *src, int64_t size, kupl_queue_h queue) {
    if (!queue)
        return false;
#ifdef KUPLX_AVAILABLE
    return kupl_memcpy_async(dst, src, static_cast<size_t>(size), queue, nullptr) == KUPL_OK;
#else
    kupl_event_h event = kupl_event_create();
    if (!event)
        return false;
    const bool ok = kupl_memcpy_async(dst, src, static_cast<size_t>(size), queue, event) == KUPL_OK;
    kupl_event_destroy(event);
    return ok;
#endif
}

bool copy_args_ok(const void *dst, const void *src, int64_t size, int device, const char *what) {
    if (size < 0 || (size > 0 && (!dst || !src))) {
        report_error("device %d: %s with dst=%p src=%p size=%lld refused", device, what, dst, src,
                     static_cast<long long>(size));
        return false;
    }
    return true;
}

void run_region_item(void *arg) {
    auto *call = static_cast<RegionCall *>(arg);
    call->run();
    delete call;
}

#ifdef KUPLX_AVAILABLE
/// A block whose free waits for the work that was in flight when it was deleted.
struct DeferredFree {
    const DeviceMemory *memory;
    Allocation block;
    std::vector<kupl_event_h> events;
};

void run_deferred_free(void *arg) {
    auto *job = static_cast<DeferredFree *>(arg);
    job->memory->release(job->block);
    for (kupl_event_h event : job->events)
        kupl_event_destroy(event);
    delete job;
}
#else
/// Vendor KUPL has no non-blocking cross-queue wait: a block whose free waits for the work in
/// flight when it was deleted gets a countdown item on each busy queue instead, and the last
/// one to run frees it. No thread waits meanwhile.
struct CountdownFree {
    const DeviceMemory *memory;
    Allocation block;
    std::atomic<size_t> left;
};

void run_countdown_free(void *arg) {
    auto *job = static_cast<CountdownFree *>(arg);
    if (job->left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        job->memory->release(job->block);
        delete job;
    }
}
#endif

} // namespace

Device::Device(int id, int node, const NumaTopology &topology)
    : id_(id), node_(node), topology_(topology), memory_(topology, node) {}

bool Device::init() {
    static const bool threshold_read = [] {
        g_direct_copy_bytes.store(direct_copy_threshold());
        return true;
    }();
    (void)threshold_read;
    std::lock_guard<std::mutex> lock(queues_mutex_);
    if (!reaper_ && !(reaper_ = kupl_queue_create())) {
        report_error("device %d: kupl_queue_create failed", id_);
        return false;
    }
    return true;
}

__tgt_target_table *Device::load(const __tgt_device_image *image) {
    std::string error;
    std::unique_ptr<LoadedImage> loaded = load_image(image, &error);
    if (!loaded) {
        report_error("device %d: cannot load the image: %s", id_, error.c_str());
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(images_mutex_);
    images_.push_back(std::move(loaded));
    const __tgt_target_table *table = images_.back()->table();
    report_info(kInfoPluginKernel, id_, "loaded an image with %zu entries",
                static_cast<size_t>(table->EntriesEnd - table->EntriesBegin));
    return const_cast<__tgt_target_table *>(table);
}

void *Device::allocate(int64_t size, int32_t kind, const void *host_ptr) {
    if (size < 0) {
        report_error("device %d: allocation of %lld bytes refused", id_, static_cast<long long>(size));
        return nullptr;
    }
    return memory_.allocate(static_cast<size_t>(size), kind, host_ptr, id_);
}

int32_t Device::deallocate(void *ptr) {
    Allocation block;
    if (!memory_.take(ptr, &block)) {
        report_error("device %d: delete of %p, which is not a live allocation of this device", id_, ptr);
        return kOffloadFail;
    }
    std::vector<kupl_queue_h> busy;
    {
        std::lock_guard<std::mutex> lock(queues_mutex_);
        busy = busy_queues_;
    }
    if (busy.empty()) {
        memory_.release(block);
        return kOffloadSuccess;
    }
    // libomptarget calls this holding its map lock, and another construct's queued work may
    // still use the block: free it behind that work instead of waiting here.
    return status(defer_free(block, busy));
}

bool Device::defer_free(const Allocation &block, const std::vector<kupl_queue_h> &busy) {
    if (!init())
        return false;
#ifndef KUPLX_AVAILABLE
    // One count per busy queue, and one held here until all items are queued.
    auto *job = new CountdownFree{&memory_, block, {busy.size() + 1}};
    for (kupl_queue_h queue : busy) {
        kupl_queue_item_desc_t desc{};
        desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
        desc.func = run_countdown_free;
        desc.args = job;
        desc.name = "kupl-omp deferred free";
        if (kupl_queue_submit(queue, &desc) != KUPL_OK) {
            // Items already queued still count down, but never to zero: the block stays.
            report_error("device %d: cannot defer the free of %zu bytes at %p; the block is leaked", id_,
                         block.size, block.ptr);
            return false;
        }
    }
    run_countdown_free(job); // drops the count held here
    return true;
#else
    auto *job = new DeferredFree{&memory_, block, {}};
    bool ok = true;
    for (kupl_queue_h queue : busy) {
        kupl_event_h event = kupl_event_create();
        if (!event) {
            ok = false;
            break;
        }
        job->events.push_back(event);
        if (kupl_event_record(event, queue) != KUPL_OK ||
            kuplx_queue_wait_event_async(reaper_, event) != KUPL_OK) {
            ok = false;
            break;
        }
    }
    kupl_queue_item_desc_t desc{};
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    desc.func = run_deferred_free;
    desc.args = job;
    desc.name = "kupl-omp deferred free";
    if (ok && kupl_queue_submit(reaper_, &desc) == KUPL_OK)
        return true;
    // Freeing now could pull memory from under running work: keep it, say so.
    report_error("device %d: cannot defer the free of %zu bytes at %p; the block is leaked", id_, block.size,
                 block.ptr);
    for (kupl_event_h event : job->events)
        kupl_event_destroy(event);
    delete job;
    return false;
#endif
}

kupl_queue_h Device::queue_of(__tgt_async_info *info) {
    if (info->Queue)
        return static_cast<kupl_queue_h>(info->Queue);
    kupl_queue_h queue = nullptr;
    {
        std::lock_guard<std::mutex> lock(queues_mutex_);
        if (!idle_queues_.empty()) {
            queue = idle_queues_.back();
            idle_queues_.pop_back();
        } else if (!(queue = kupl_queue_create())) {
            report_error("device %d: kupl_queue_create failed", id_);
            return nullptr;
        }
        busy_queues_.push_back(queue);
    }
    info->Queue = queue;
    return queue;
}

void Device::return_queue(kupl_queue_h queue) {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    auto found = std::find(busy_queues_.begin(), busy_queues_.end(), queue);
    if (found != busy_queues_.end())
        busy_queues_.erase(found);
    idle_queues_.push_back(queue);
}

int32_t Device::synchronize(__tgt_async_info *info) {
    if (!info || !info->Queue)
        return kOffloadSuccess;
    kupl_queue_h queue = static_cast<kupl_queue_h>(info->Queue);
    const bool ok = kupl_queue_wait(queue) == KUPL_OK;
    if (!ok)
        report_error("device %d: asynchronous work failed", id_);
    info->Queue = nullptr;
    return_queue(queue);
    return status(ok);
}

int32_t Device::submit(void *device_dst, const void *host_src, int64_t size, __tgt_async_info *info) {
    if (!copy_args_ok(device_dst, host_src, size, id_, "host-to-device copy"))
        return kOffloadFail;
    if (size == 0)
        return kOffloadSuccess;
    if (info_enabled(kInfoDataTransfer))
        report_info(kInfoDataTransfer, id_, "copy %lld bytes host %p -> device %p%s",
                    static_cast<long long>(size), host_src, device_dst,
                    info && info->Queue ? " (queued)" : "");
    // Nothing outstanding in this construct: the copy needs no ordering, do it now.
    if (!info || !info->Queue)
        return copy_now(device_dst, host_src, size);
    return status(enqueue_copy(device_dst, host_src, size, queue_of(info)));
}

int32_t Device::retrieve(void *host_dst, const void *device_src, int64_t size, __tgt_async_info *info) {
    if (!copy_args_ok(host_dst, device_src, size, id_, "device-to-host copy"))
        return kOffloadFail;
    if (size == 0)
        return kOffloadSuccess;
    if (info_enabled(kInfoDataTransfer))
        report_info(kInfoDataTransfer, id_, "copy %lld bytes device %p -> host %p%s",
                    static_cast<long long>(size), device_src, host_dst,
                    info && info->Queue ? " (queued)" : "");
    if (!info || !info->Queue)
        return copy_now(host_dst, device_src, size);
    // libomptarget rewrites host pointers inside the destination right after this returns
    // (structs with pointer members), so the bytes must have landed before we return.
    kupl_queue_h queue = queue_of(info);
    if (!enqueue_copy(host_dst, device_src, size, queue))
        return kOffloadFail;
    return status(kupl_queue_wait(queue) == KUPL_OK);
}

int32_t Device::exchange(void *dst, const void *src, int64_t size, __tgt_async_info *info) {
    if (!copy_args_ok(dst, src, size, id_, "device-to-device copy"))
        return kOffloadFail;
    if (size == 0)
        return kOffloadSuccess;
    if (!info || !info->Queue)
        return copy_now(dst, src, size);
    return status(enqueue_copy(dst, src, size, queue_of(info)));
}

const char *Device::entry_name(const void *entry) {
    std::lock_guard<std::mutex> lock(images_mutex_);
    for (const auto &image : images_) {
        const char *name = image->entry_name(entry);
        if (name[0] != '?')
            return name;
    }
    return "?";
}

bool Device::region_may_enter_openmp(const void *entry) {
    std::lock_guard<std::mutex> lock(images_mutex_);
    for (const auto &image : images_)
        if (image->holds(entry))
            return image->may_enter_openmp();
    return true;
}

int32_t Device::run_region(void *entry, void **args, ptrdiff_t *offsets, int32_t count,
                           __tgt_async_info *info) {
    if (!entry || count < 0 || (count > 0 && (!args || !offsets))) {
        report_error("device %d: region launch with entry=%p and %d arguments refused", id_, entry, count);
        return kOffloadFail;
    }
    // A region that never enters libomp does not care which thread runs it: it runs here, as
    // with the stock plugin, without a hand-off to an executor and back.
    if (launching_thread_is_outside_parallel() || !region_may_enter_openmp(entry))
        return run_region_here(entry, args, offsets, count, info);
    auto *call = new RegionCall(entry, args, offsets, count, launching_thread_team_size());
    if (!call->prepare(id_)) {
        delete call;
        return kOffloadFail;
    }
    if (info_enabled(kInfoPluginKernel))
        report_info(kInfoPluginKernel, id_, "launching region %s with %d arguments on a KUPL executor",
                    entry_name(entry), count);
    __tgt_async_info local{nullptr};
    __tgt_async_info *target = info ? info : &local;
    kupl_queue_h queue = queue_of(target);
    kupl_queue_item_desc_t desc{};
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    desc.func = run_region_item;
    desc.args = call;
    desc.name = "kupl-omp target region";
    if (!queue || kupl_queue_submit(queue, &desc) != KUPL_OK) {
        report_error("device %d: cannot queue a target region", id_);
        delete call;
        if (!info)
            synchronize(&local);
        return kOffloadFail;
    }
    // The region runs on a KUPL executor, never on an OpenMP thread, where its `teams` would be
    // nested in an OpenMP team (see region_threads.h).
    // The launch returns once it has run: libomptarget 14 drops the construct's reference counts
    // (targetDataEnd) before it synchronizes, so another construct's final copy-back of shared
    // data would otherwise miss this region's writes. The caller would block in the following
    // retrieve or synchronize anyway.
    if (!info)
        return synchronize(&local);
    if (kupl_queue_wait(queue) != KUPL_OK) {
        report_error("device %d: a target region or the work queued before it failed", id_);
        return kOffloadFail;
    }
    return kOffloadSuccess;
}

int32_t Device::run_region_here(void *entry, void **args, ptrdiff_t *offsets, int32_t count,
                                __tgt_async_info *info) {
    RegionCall call(entry, args, offsets, count, 0); // 0: the thread's own team size
    if (!call.prepare(id_))
        return kOffloadFail;
    if (info_enabled(kInfoPluginKernel))
        report_info(kInfoPluginKernel, id_, "running region %s with %d arguments on the launching thread",
                    entry_name(entry), count);
    // The copies queued before it by this construct must have landed.
    if (info && info->Queue && kupl_queue_wait(static_cast<kupl_queue_h>(info->Queue)) != KUPL_OK) {
        report_error("device %d: the work queued before a target region failed", id_);
        return kOffloadFail;
    }
    call.run();
    return kOffloadSuccess;
}

int32_t Device::record_event(PluginEvent *event, __tgt_async_info *info) {
    return status(event->record(info ? static_cast<kupl_queue_h>(info->Queue) : nullptr));
}

int32_t Device::wait_event(PluginEvent *event, __tgt_async_info *info) {
    if (!info)
        return status(event->synchronize());
    return status(event->order_after([&] { return queue_of(info); }));
}

std::string Device::summary() const {
    char line[512];
    const uint64_t mib = topology_.local_memory(node_) >> 20;
    snprintf(line, sizeof line,
             "host NUMA node %d (OS index %d, cores %s, %llu MiB), KUPL queues and copy engine", node_,
             topology_.os_index(node_), topology_.cpuset_list(node_).c_str(),
             static_cast<unsigned long long>(mib));
    return line;
}

void Device::print_info(int num_devices) const {
#ifdef KUPLX_AVAILABLE
    kuplx_engine_info_t engine{};
    const bool have_engine = kuplx_get_engine_info(&engine) == KUPL_OK;
#endif
    printf("    kupl-omp device %d of %d (libomptarget " KUPL_OMP_ARCH " plugin over KUPL)\n", id_,
           num_devices);
    printf("    NUMA node:            %d (OS index %d)\n", node_, topology_.os_index(node_));
    printf("    Cores of the node:    %s\n", topology_.cpuset_list(node_).c_str());
    printf("    Node memory:          %llu MiB\n",
           static_cast<unsigned long long>(topology_.local_memory(node_) >> 20));
    printf("    CPU model:            %s\n", topology_.cpu_model().c_str());
#ifdef KUPLX_AVAILABLE
    if (have_engine) {
        printf("    KUPL copy engine:     %s, %d channels, %d executors\n", engine.backend,
               engine.num_channels, engine.num_executors);
    }
#else
    kupl_version_t version{};
    if (kupl_get_version(&version) == KUPL_OK && version.component_name && version.component_version)
        printf("    KUPL:                 %s %s (vendor API only)\n", version.component_name,
               version.component_version);
#endif
    printf("    Target regions run:   on KUPL executor threads, in queue order\n");
    printf("    Device memory:        bound to the node; host kind pinned; shared kind first-touch\n");
}

} // namespace kupl_omp
