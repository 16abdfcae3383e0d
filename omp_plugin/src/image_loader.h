// Device images: an image is an ELF shared object for the host's processor (x86-64 or AArch64)
// carrying an `omp_offloading_entries` section. Checking reads only the bytes; loading writes them
// to an anonymous file, dlopens it (one private copy per device, so each device has its own
// globals) and locates the entries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llvm14_abi.h"

namespace kupl_omp {

/// Where the entries table sits in a valid image, or why the image is not ours.
struct ImageLayout {
    bool valid = false;
    std::string reason;         ///< set when !valid
    uint64_t entries_vaddr = 0; ///< sh_addr of omp_offloading_entries
    uint64_t entries_count = 0; ///< entries in that section
};

/// Checks every header and offset the loader relies on; never reads outside the image.
ImageLayout inspect_image(const __tgt_device_image *image);

/// An image loaded into this process for one device.
class LoadedImage {
  public:
    ~LoadedImage() = default; // the library stays mapped until exit: regions may still run
    const __tgt_target_table *table() const { return &table_; }
    /// The name of the entry whose address is addr, or "?" (for LIBOMPTARGET_INFO).
    const char *entry_name(const void *addr) const;
    /// True if addr is the address of one of this image's entries.
    bool holds(const void *addr) const;
    /// False only if the image's code provably never enters libomp (image_imports.h): its
    /// regions then do not depend on the OpenMP context of the thread that runs them.
    bool may_enter_openmp() const { return may_enter_openmp_; }

  private:
    friend std::unique_ptr<LoadedImage> load_image(const __tgt_device_image *, std::string *);
    LoadedImage() = default;
    /// The entry at addr, copied out of the table, or false.
    bool find_entry(const void *addr, __tgt_offload_entry *found) const;

    void *handle_ = nullptr;
    bool may_enter_openmp_ = true;
    __tgt_target_table table_{nullptr, nullptr};
};

/// Loads a valid image; on failure returns null and says why in *error.
std::unique_ptr<LoadedImage> load_image(const __tgt_device_image *image, std::string *error);

} // namespace kupl_omp
