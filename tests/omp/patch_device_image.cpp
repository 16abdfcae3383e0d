// patch_device_image IN OUT MODE: copies the OpenMP program IN to OUT with its embedded
// device image damaged, to check that a foreign or broken image is refused cleanly:
//   machine   - the image claims to be for another processor: AArch64 on x86-64, x86-64 on
//               AArch64 (is_valid_binary must say no);
//   sections  - its section header table points past its end (is_valid_binary must say no);
//   segments  - its first loadable segment points past its end (is_valid_binary must say no:
//               dlopen would map it and fault on first touch);
//   symbol    - it needs a function no library defines (its headers are fine, so the plugin
//               accepts it; loading must then fail with a message, not a crash).
// The image is found through the program's symbol `.omp_offloading.device_image` (clang-14).
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

template <class T> T read_at(const std::vector<char> &file, size_t offset) {
    T value;
    memcpy(&value, file.data() + offset, sizeof value);
    return value;
}
template <class T> void write_at(std::vector<char> &file, size_t offset, const T &value) {
    memcpy(file.data() + offset, &value, sizeof value);
}

/// File offset of the embedded device image, or 0 if not found.
size_t find_image(const std::vector<char> &file) {
    const auto header = read_at<Elf64_Ehdr>(file, 0);
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        const auto symtab = read_at<Elf64_Shdr>(file, header.e_shoff + i * sizeof(Elf64_Shdr));
        if (symtab.sh_type != SHT_SYMTAB)
            continue;
        const auto strtab = read_at<Elf64_Shdr>(file, header.e_shoff + symtab.sh_link * sizeof(Elf64_Shdr));
        for (size_t at = symtab.sh_offset; at + sizeof(Elf64_Sym) <= symtab.sh_offset + symtab.sh_size;
             at += sizeof(Elf64_Sym)) {
            const auto sym = read_at<Elf64_Sym>(file, at);
            if (strcmp(file.data() + strtab.sh_offset + sym.st_name, ".omp_offloading.device_image") != 0)
                continue;
            const auto home = read_at<Elf64_Shdr>(file, header.e_shoff + sym.st_shndx * sizeof(Elf64_Shdr));
            return home.sh_offset + (sym.st_value - home.sh_addr);
        }
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s IN OUT machine|sections|segments|symbol\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (file.size() < sizeof(Elf64_Ehdr) || memcmp(file.data(), ELFMAG, SELFMAG) != 0) {
        fprintf(stderr, "%s: not an ELF file\n", argv[1]);
        return 1;
    }
    const size_t image = find_image(file);
    if (image == 0 || memcmp(file.data() + image, ELFMAG, SELFMAG) != 0) {
        fprintf(stderr, "%s: no embedded device image found\n", argv[1]);
        return 1;
    }
    const std::string mode = argv[3];
    if (mode == "machine") {
#if defined(__aarch64__)
        write_at<uint16_t>(file, image + offsetof(Elf64_Ehdr, e_machine), EM_X86_64);
#else
        write_at<uint16_t>(file, image + offsetof(Elf64_Ehdr, e_machine), EM_AARCH64);
#endif
    } else if (mode == "sections") {
        write_at<uint64_t>(file, image + offsetof(Elf64_Ehdr, e_shoff), uint64_t{1} << 40);
    } else if (mode == "segments") {
        const auto header = read_at<Elf64_Ehdr>(file, image);
        for (unsigned i = 0; i < header.e_phnum; ++i) {
            const size_t at = image + header.e_phoff + i * sizeof(Elf64_Phdr);
            auto phdr = read_at<Elf64_Phdr>(file, at);
            if (phdr.p_type == PT_LOAD) {
                phdr.p_offset += uint64_t{1} << 32; // past the end of the image file
                write_at(file, at, phdr);
                break;
            }
        }
    } else if (mode == "symbol") {
        // Rename the first libomp function the image imports: __kmpc_... -> __kmpX_...
        const auto header = read_at<Elf64_Ehdr>(file, image);
        bool renamed = false;
        for (unsigned i = 0; i < header.e_shnum && !renamed; ++i) {
            const auto shdr = read_at<Elf64_Shdr>(file, image + header.e_shoff + i * sizeof(Elf64_Shdr));
            if (shdr.sh_type != SHT_STRTAB)
                continue;
            char *names = file.data() + image + shdr.sh_offset;
            for (size_t at = 0; at + 7 <= shdr.sh_size && !renamed; ++at)
                if (memcmp(names + at, "__kmpc_", 7) == 0)
                    names[at + 5] = 'X', renamed = true;
        }
        if (!renamed) {
            fprintf(stderr, "no __kmpc_ import to rename\n");
            return 1;
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[3]);
        return 2;
    }
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    out.close();
    chmod(argv[2], 0755);
    return out ? 0 : 1;
}
