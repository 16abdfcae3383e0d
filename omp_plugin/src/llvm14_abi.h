// The LLVM 14 libomptarget plugin ABI: the structs libomptarget hands to a plugin and the
// constants it expects back. Layouts are fixed by libomptarget 14 (omptarget.h); only the
// names of our own declarations are ours.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// One offloaded function (size 0) or global variable (size > 0).
struct __tgt_offload_entry {
    void *addr;
    char *name;
    size_t size;
    int32_t flags;
    int32_t reserved;
};

/// A device image: the bytes of an ELF shared object and the host-side entry table.
struct __tgt_device_image {
    void *ImageStart;
    void *ImageEnd;
    __tgt_offload_entry *EntriesBegin;
    __tgt_offload_entry *EntriesEnd;
};

/// The device-side entry table a plugin returns from load_binary.
struct __tgt_target_table {
    __tgt_offload_entry *EntriesBegin;
    __tgt_offload_entry *EntriesEnd;
};

/// Per-construct asynchronous state; Queue is the plugin's (null = nothing outstanding).
struct __tgt_async_info {
    void *Queue;
};

} // extern "C"

namespace kupl_omp {

constexpr int32_t kOffloadSuccess = 0;
constexpr int32_t kOffloadFail = ~0;

/// Allocation kinds of data_alloc (omp_target_alloc and llvm_omp_target_alloc_*).
enum TargetAllocKind : int32_t {
    kAllocDevice = 0,
    kAllocHost = 1,
    kAllocShared = 2,
    kAllocDefault = 3,
};

/// Bits of `#pragma omp requires` passed to init_requires.
constexpr int64_t kRequiresUnifiedSharedMemory = 0x008;

/// LIBOMPTARGET_INFO bits this plugin reports on.
constexpr uint32_t kInfoPluginKernel = 0x0010;
constexpr uint32_t kInfoDataTransfer = 0x0020;

} // namespace kupl_omp
