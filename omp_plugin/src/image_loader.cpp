#include "image_loader.h"

#include "elf_sections.h"
#include "image_imports.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace kupl_omp {
namespace {

constexpr const char *kEntriesSection = "omp_offloading_entries";

// Images are dlopened into this process, so they must be built for the processor it runs on.
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostMachineName = "x86-64 (62)";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostMachineName = "AArch64 (183)";
#else
#error "kupl-omp serves the host offload targets of x86-64 and AArch64 only"
#endif

ImageLayout invalid(std::string reason) {
    ImageLayout layout;
    layout.reason = std::move(reason);
    return layout;
}

/// Writes the whole buffer to fd; false on a short or failed write.
bool write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t written = write(fd, data, size);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        data += written;
        size -= static_cast<size_t>(written);
    }
    return true;
}

/// An anonymous file holding the image; a temporary file if memfd is unavailable.
/// Returns the path dlopen should use; the caller closes fd (and unlinks when told to).
bool write_image_file(const char *data, size_t size, int *fd, std::string *path, bool *unlink_after,
                      std::string *error) {
    *unlink_after = false;
    *fd = memfd_create("kupl-omp-image", MFD_CLOEXEC);
    if (*fd >= 0) {
        *path = "/proc/self/fd/" + std::to_string(*fd);
    } else {
        const char *dir = getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/kupl-omp-image-XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        *fd = mkstemp(name.data());
        if (*fd < 0) {
            *error = std::string("cannot create a file for the image: ") + strerror(errno);
            return false;
        }
        *path = name.data();
        *unlink_after = true;
    }
    if (!write_all(*fd, data, size)) {
        *error = std::string("cannot write the image: ") + strerror(errno);
        close(*fd);
        if (*unlink_after)
            unlink(path->c_str());
        return false;
    }
    return true;
}

} // namespace

ImageLayout inspect_image(const __tgt_device_image *image) {
    if (!image || !image->ImageStart || !image->ImageEnd)
        return invalid("null image");
    const char *bytes = static_cast<const char *>(image->ImageStart);
    const char *end = static_cast<const char *>(image->ImageEnd);
    if (end <= bytes)
        return invalid("empty image");
    const uint64_t size = static_cast<uint64_t>(end - bytes);
    if (size < sizeof(Elf64_Ehdr))
        return invalid("image smaller than an ELF header");

    Elf64_Ehdr header;
    memcpy(&header, bytes, sizeof header);
    if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
        return invalid("not an ELF file");
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
        return invalid("not a 64-bit little-endian ELF file");
    if (header.e_machine != kHostMachine)
        return invalid("ELF machine " + std::to_string(header.e_machine) + " is not " + kHostMachineName);
    if (header.e_type != ET_DYN)
        return invalid("not an ELF shared object");
    if (header.e_phnum == 0 || header.e_phentsize != sizeof(Elf64_Phdr) ||
        !range_ok(header.e_phoff, uint64_t{header.e_phnum} * sizeof(Elf64_Phdr), size))
        return invalid("program headers missing or outside the image");
    // dlopen maps segments straight from the file: one reaching past the image's end would
    // fault (SIGBUS) on first touch instead of failing the load.
    for (unsigned index = 0; index < header.e_phnum; ++index) {
        Elf64_Phdr segment;
        memcpy(&segment, bytes + header.e_phoff + uint64_t{index} * sizeof(Elf64_Phdr), sizeof segment);
        if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC)
            continue;
        if (!range_ok(segment.p_offset, segment.p_filesz, size) || segment.p_filesz > segment.p_memsz)
            return invalid("segment " + std::to_string(index) + " lies outside the image");
    }
    if (header.e_shnum == 0 || header.e_shentsize != sizeof(Elf64_Shdr) ||
        !range_ok(header.e_shoff, uint64_t{header.e_shnum} * sizeof(Elf64_Shdr), size))
        return invalid("section headers missing or outside the image");
    if (header.e_shstrndx >= header.e_shnum)
        return invalid("section name table index out of range");

    const ElfSections elf(bytes, size); // the section header table was checked just above
    const Elf64_Shdr names = elf.at(header.e_shstrndx);
    if (names.sh_type != SHT_STRTAB || !range_ok(names.sh_offset, names.sh_size, size))
        return invalid("section name table outside the image");
    const char *name_table = bytes + names.sh_offset;
    const size_t wanted = strlen(kEntriesSection) + 1;

    for (unsigned index = 0; index < header.e_shnum; ++index) {
        const Elf64_Shdr shdr = elf.at(index);
        if (shdr.sh_name >= names.sh_size || names.sh_size - shdr.sh_name < wanted)
            continue;
        if (memcmp(name_table + shdr.sh_name, kEntriesSection, wanted) != 0)
            continue;
        if (shdr.sh_addr == 0 || shdr.sh_size % sizeof(__tgt_offload_entry) != 0)
            return invalid("malformed omp_offloading_entries section");
        ImageLayout layout;
        layout.valid = true;
        layout.entries_vaddr = shdr.sh_addr;
        layout.entries_count = shdr.sh_size / sizeof(__tgt_offload_entry);
        return layout;
    }
    // An image without offloaded functions or globals has no entries section; it is still ours.
    ImageLayout layout;
    layout.valid = true;
    return layout;
}

bool LoadedImage::find_entry(const void *addr, __tgt_offload_entry *found) const {
    // The table sits in the image as the linker placed it (clang 14: 1-byte aligned), so each
    // entry is copied out before it is read.
    const char *bytes = reinterpret_cast<const char *>(table_.EntriesBegin);
    const size_t count = static_cast<size_t>(table_.EntriesEnd - table_.EntriesBegin);
    for (size_t i = 0; i < count; ++i) {
        memcpy(found, bytes + i * sizeof *found, sizeof *found);
        if (found->addr == addr)
            return true;
    }
    return false;
}

const char *LoadedImage::entry_name(const void *addr) const {
    __tgt_offload_entry entry;
    return find_entry(addr, &entry) && entry.name ? entry.name : "?";
}

bool LoadedImage::holds(const void *addr) const {
    __tgt_offload_entry entry;
    return find_entry(addr, &entry);
}

std::unique_ptr<LoadedImage> load_image(const __tgt_device_image *image, std::string *error) {
    const ImageLayout layout = inspect_image(image);
    if (!layout.valid) {
        *error = layout.reason;
        return nullptr;
    }
    const uint64_t host_entries = static_cast<uint64_t>(image->EntriesEnd - image->EntriesBegin);
    if (host_entries != layout.entries_count) {
        *error = "image has " + std::to_string(layout.entries_count) + " entries, the host table " +
                 std::to_string(host_entries);
        return nullptr;
    }

    if (layout.entries_count == 0)
        return std::unique_ptr<LoadedImage>(new LoadedImage()); // nothing to load: an empty table

    const char *bytes = static_cast<const char *>(image->ImageStart);
    const size_t size = static_cast<size_t>(static_cast<const char *>(image->ImageEnd) - bytes);
    int fd = -1;
    std::string path;
    bool unlink_after = false;
    if (!write_image_file(bytes, size, &fd, &path, &unlink_after, error))
        return nullptr;
    // RTLD_NOW: an unresolved symbol fails here, cleanly, rather than in the middle of a region.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char *dl_error = handle ? nullptr : dlerror();
    // dlopen recognises an already-loaded library by its path: the memfd stays open so that its
    // /proc/self/fd/N name is never reused and every device gets its own copy of the image.
    if (!handle || unlink_after)
        close(fd);
    if (unlink_after)
        unlink(path.c_str());
    if (!handle) {
        *error = std::string("dlopen of the image failed: ") + (dl_error ? dl_error : "unknown error");
        return nullptr;
    }
    struct link_map *map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) {
        *error = "cannot find where the image was loaded";
        dlclose(handle);
        return nullptr;
    }

    std::unique_ptr<LoadedImage> loaded(new LoadedImage());
    loaded->handle_ = handle;
    loaded->may_enter_openmp_ = image_may_enter_openmp(bytes, size);
    auto *entries = reinterpret_cast<__tgt_offload_entry *>(map->l_addr + layout.entries_vaddr);
    loaded->table_.EntriesBegin = entries;
    loaded->table_.EntriesEnd = entries + layout.entries_count;
    return loaded;
}

} // namespace kupl_omp
