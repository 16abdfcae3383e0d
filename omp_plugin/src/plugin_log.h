// Messages of the plugin: errors always (one line on stderr), information when the
// LIBOMPTARGET_INFO bits ask for it (libomptarget forwards changes via set_info_flag).
#pragma once

#include <atomic>
#include <cstdint>

namespace kupl_omp {

/// Reads LIBOMPTARGET_INFO once (a number; -1 means everything).
void init_info_level_from_env();
void set_info_level(uint32_t level);
inline std::atomic<uint32_t> g_info_level{0};
inline bool info_enabled(uint32_t bits) {
    return (g_info_level.load(std::memory_order_relaxed) & bits) != 0;
}

/// "kupl-omp: error: ..." on stderr.
void report_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// "kupl-omp device N info: ..." on stderr when any of bits is enabled.
void report_info(uint32_t bits, int device, const char *format, ...) __attribute__((format(printf, 3, 4)));

} // namespace kupl_omp
