// Logging controlled by KUPL_LOG_LEVEL: 1 errors, 2 warnings, 3 info, 4 debug. Unset: nothing but
// the configuration warnings of support/env_config.h; set to 0: nothing at all.
#pragma once

namespace kupl::support {

enum class LogLevel : int { off = 0, error = 1, warn = 2, info = 3, debug = 4 };

// The level in force, read from KUPL_LOG_LEVEL once.
LogLevel log_level();

bool log_enabled(LogLevel level);

// Prints "kupl <LEVEL>: <message>" on stderr when `level` is enabled.
void log(LogLevel level, const char *format, ...) __attribute__((format(printf, 2, 3)));

} // namespace kupl::support

namespace kupl::support {

// Prints "kupl: <message>" on stderr whatever KUPL_LOG_LEVEL says, unless it is set to 0: for
// the few conditions a user must hear about without asking (the runtime runs with fewer threads
// than it was configured for).
void notice(const char *format, ...) __attribute__((format(printf, 1, 2)));

} // namespace kupl::support
