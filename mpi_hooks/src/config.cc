#include "config.h"

#include <cstdlib>
#include <cstring>

namespace kupl_mpi {
namespace {

bool flag(const char *name) {
    const char *s = std::getenv(name);
    return s && *s && std::strcmp(s, "0") != 0;
}

size_t number(const char *name, size_t fallback) {
    const char *s = std::getenv(name);
    if (!s || !*s)
        return fallback;
    char *end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    return end && *end == '\0' ? static_cast<size_t>(v) : fallback;
}

} // namespace

const Config &config() {
    static const Config c = [] {
        Config k;
        k.disabled = flag("KUPL_MPI_DISABLE");
        k.force = flag("KUPL_MPI_FORCE");
        k.p2p = number("KUPL_MPI_P2P", 1) != 0;
        k.min_bytes = number("KUPL_MPI_MIN_BYTES", 1024);
        k.engine_bytes = number("KUPL_MPI_ENGINE_BYTES", size_t(1) << 20);
        return k;
    }();
    return c;
}

} // namespace kupl_mpi
