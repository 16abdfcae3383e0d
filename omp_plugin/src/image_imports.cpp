#include "image_imports.h"

#include "elf_sections.h"

#include <cstdint>
#include <cstring>
#include <elf.h>

namespace kupl_omp {
namespace {

/// Libraries every image may need without reaching libomp through them: the C/C++ runtime (and
/// libomp itself, which clang always lists; what the image calls in it is checked by symbol).
constexpr const char *kRuntimeLibraries[] = {"libc.",       "libm.",  "libmvec.", "libgcc_s.", "libstdc++.",
                                             "libpthread.", "libdl.", "librt.",   "libomp.",   "ld-linux-"};

/// Name prefixes of libomp's entry points (its own, OMPT/OMPD, GNU and offload compatibility).
constexpr const char *kOpenMpPrefixes[] = {"__kmp", "kmp_",  "KMP",   "omp_",   "ompt_",
                                           "ompd_", "ompc_", "GOMP_", "__tgt_", "__omp"};

/// libomp functions that do not depend on the calling thread's OpenMP context.
constexpr const char *kContextFreeFunctions[] = {"omp_get_wtime", "omp_get_wtick"};

bool starts_with(const char *text, const char *prefix) {
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

bool is_openmp_function(const char *name) {
    for (const char *pure : kContextFreeFunctions)
        if (strcmp(name, pure) == 0)
            return false;
    for (const char *prefix : kOpenMpPrefixes)
        if (starts_with(name, prefix))
            return true;
    return false;
}

bool is_runtime_library(const char *name) {
    for (const char *library : kRuntimeLibraries)
        if (starts_with(name, library))
            return true;
    return false;
}

/// -1: unreadable; 0: no import from libomp; 1: some import from libomp.
int scan_symbols(const ElfSections &elf, const Elf64_Shdr &table) {
    const char *base = elf.contents(table);
    if (!base || table.sh_entsize != sizeof(Elf64_Sym))
        return -1;
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table.sh_size; offset += sizeof(Elf64_Sym)) {
        Elf64_Sym symbol;
        memcpy(&symbol, base + offset, sizeof symbol);
        if (symbol.st_shndx != SHN_UNDEF || symbol.st_name == 0)
            continue;
        const char *name = elf.string(table.sh_link, symbol.st_name);
        if (!name)
            return -1;
        if (is_openmp_function(name))
            return 1;
    }
    return 0;
}

/// -1: unreadable; 0: only runtime libraries needed; 1: some other library needed.
int scan_needed(const ElfSections &elf, const Elf64_Shdr &dynamic) {
    const char *base = elf.contents(dynamic);
    if (!base)
        return -1;
    for (uint64_t offset = 0; offset + sizeof(Elf64_Dyn) <= dynamic.sh_size; offset += sizeof(Elf64_Dyn)) {
        Elf64_Dyn entry;
        memcpy(&entry, base + offset, sizeof entry);
        if (entry.d_tag == DT_NULL)
            break;
        if (entry.d_tag != DT_NEEDED)
            continue;
        const char *name = elf.string(dynamic.sh_link, entry.d_un.d_val);
        if (!name)
            return -1;
        if (!is_runtime_library(name))
            return 1;
    }
    return 0;
}

} // namespace

bool image_may_enter_openmp(const char *bytes, size_t size) {
    const ElfSections elf(bytes, size);
    if (!elf.ok())
        return true;
    bool symbols_seen = false;
    for (unsigned index = 0; index < elf.count(); ++index) {
        const Elf64_Shdr section = elf.at(index);
        int verdict = 0;
        if (section.sh_type == SHT_DYNSYM) {
            symbols_seen = true;
            verdict = scan_symbols(elf, section);
        } else if (section.sh_type == SHT_DYNAMIC) {
            verdict = scan_needed(elf, section);
        }
        if (verdict != 0)
            return true;
    }
    return !symbols_seen;
}

} // namespace kupl_omp
