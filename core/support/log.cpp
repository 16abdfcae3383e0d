#include "support/log.h"

#include "support/env_config.h"

#include <cstdarg>
#include <cstdio>

namespace kupl::support {

LogLevel log_level() {
    static const LogLevel level = static_cast<LogLevel>(
        env::read_integer("KUPL_LOG_LEVEL", 0, 0, 4, nullptr, "0 (configuration warnings only)"));
    return level;
}

bool log_enabled(LogLevel level) {
    return level != LogLevel::off && level <= log_level();
}

void log(LogLevel level, const char *format, ...) {
    if (!log_enabled(level))
        return;
    static const char *const names[] = {"", "ERROR", "WARN", "INFO", "DEBUG"};
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    // One fprintf per line so lines from several threads do not interleave.
    std::fprintf(stderr, "kupl %s: %s\n", names[static_cast<int>(level)], message);
}

} // namespace kupl::support

namespace kupl::support {

void notice(const char *format, ...) {
    const char *level = std::getenv("KUPL_LOG_LEVEL");
    if (level != nullptr && level[0] == '0' && level[1] == '\0')
        return;
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    std::fprintf(stderr, "kupl: %s\n", message);
}

} // namespace kupl::support
