// Bounded reading of a 64-bit ELF image held in memory: every offset is checked against the
// image's size before it is used (device images come from the program, and may be damaged).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <elf.h>

namespace kupl_omp {

/// True if [offset, offset + length) lies within [0, limit), without overflow.
inline bool range_ok(uint64_t offset, uint64_t length, uint64_t limit) {
    return offset <= limit && length <= limit - offset;
}

/// Bounded view of an ELF image's sections.
class ElfSections {
  public:
    ElfSections(const char *bytes, size_t size) : bytes_(bytes), size_(size) {
        if (size_ < sizeof header_)
            return;
        memcpy(&header_, bytes_, sizeof header_);
        ok_ = header_.e_shentsize == sizeof(Elf64_Shdr) &&
              range_ok(header_.e_shoff, uint64_t{header_.e_shnum} * sizeof(Elf64_Shdr), size_);
    }
    bool ok() const { return ok_; }
    unsigned count() const { return ok_ ? header_.e_shnum : 0; }
    /// Section header `index`: below count(), or checked against e_shnum by the caller.
    Elf64_Shdr at(unsigned index) const {
        Elf64_Shdr section;
        memcpy(&section, bytes_ + header_.e_shoff + uint64_t{index} * sizeof section, sizeof section);
        return section;
    }
    /// The section's bytes, or null if it lies outside the image.
    const char *contents(const Elf64_Shdr &section) const {
        return range_ok(section.sh_offset, section.sh_size, size_) ? bytes_ + section.sh_offset : nullptr;
    }
    /// The NUL-terminated string at offset in the string table `table` (a section index), or
    /// null if any of it lies outside that table.
    const char *string(unsigned table, uint64_t offset) const {
        if (table >= count())
            return nullptr;
        const Elf64_Shdr strings = at(table);
        const char *base = contents(strings);
        if (!base || strings.sh_type != SHT_STRTAB || offset >= strings.sh_size)
            return nullptr;
        const size_t room = static_cast<size_t>(strings.sh_size - offset);
        return memchr(base + offset, '\0', room) ? base + offset : nullptr;
    }

  private:
    const char *bytes_;
    size_t size_;
    Elf64_Ehdr header_{};
    bool ok_ = false;
};

} // namespace kupl_omp
