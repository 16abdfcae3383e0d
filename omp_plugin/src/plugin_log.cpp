#include "plugin_log.h"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "support/env_config.h"

namespace kupl_omp {
namespace {

void vprint(const char *prefix, int device, const char *format, va_list args) {
    char line[1024];
    vsnprintf(line, sizeof line, format, args);
    if (device >= 0)
        fprintf(stderr, "kupl-omp device %d %s: %s\n", device, prefix, line);
    else
        fprintf(stderr, "kupl-omp: %s: %s\n", prefix, line);
}
} // namespace

void init_info_level_from_env() {
    const char *text = getenv("LIBOMPTARGET_INFO");
    if (!text || !*text)
        return;
    // libomptarget's own variable: a bit mask, also in hex (0x10), so not env::read_integer; the
    // warning is the common one.
    char *end = nullptr;
    errno = 0;
    long long value = strtoll(text, &end, 0);
    if (*end != '\0' || errno != 0 || value < INT32_MIN || value > UINT32_MAX) {
        kupl::env::warn_ignored("LIBOMPTARGET_INFO", text, "a bit mask (decimal, or hex as 0x10; -1 for all)",
                                "0");
        return;
    }
    g_info_level.store(static_cast<uint32_t>(value));
}

void set_info_level(uint32_t level) {
    g_info_level.store(level);
}

void report_error(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vprint("error", -1, format, args);
    va_end(args);
}

void report_info(uint32_t bits, int device, const char *format, ...) {
    if (!info_enabled(bits))
        return;
    va_list args;
    va_start(args, format);
    vprint("info", device, format, args);
    va_end(args);
}

} // namespace kupl_omp
