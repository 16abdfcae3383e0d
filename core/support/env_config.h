// One way to read configuration from the environment, for libkupl, the OpenMP plugin and the MPI
// interposer alike. Header-only on purpose: the plugin and the interposer must not link core
// internals (they also run over the vendor's libkupl), so each component compiles its own copy.
//
// The rule: a value is never misread. A variable that is set but does not parse, or lies outside
// its range, is ignored with ONE line on stderr naming the variable, the value, what is accepted
// and the default used instead, worded the same in every component:
//
//   kupl: ignoring KUPL_SPIN_US=-5: expected an integer in 0..1000000 (microseconds); using 50
//
// These lines are printed whatever KUPL_LOG_LEVEL asks for, except when it is set to 0, which
// silences everything. An empty value counts as unset. Each variable is warned about at most once
// per process and component, however often it is read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <set>
#include <string>

namespace kupl::env {

// The largest byte count any size variable accepts: 1024G. Far above any copy, so "never" can
// still be spelled, yet K/M/G arithmetic cannot wrap.
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 40;

// ---- Parsers: pure functions, no environment.

// Decimal digits only: no sign, no spaces, no base prefix. False on overflow.
inline bool parse_unsigned(const char *text, std::uint64_t &out) {
    if (text == nullptr || *text == '\0')
        return false;
    std::uint64_t value = 0;
    for (const char *p = text; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9')
            return false;
        const std::uint64_t digit = static_cast<std::uint64_t>(*p - '0');
        if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    out = value;
    return true;
}

// parse_unsigned with an optional leading '-'.
inline bool parse_integer(const char *text, std::int64_t &out) {
    if (text == nullptr)
        return false;
    const bool negative = *text == '-';
    std::uint64_t magnitude = 0;
    if (!parse_unsigned(negative ? text + 1 : text, magnitude))
        return false;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    if (magnitude > limit)
        return false;
    out = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
    return true;
}

// A byte count: digits with an optional K, M or G suffix (powers of 1024, either case), which may
// be followed by B; or digits followed by B. False on overflow of the suffix's multiplication.
inline bool parse_size(const char *text, std::uint64_t &out) {
    if (text == nullptr)
        return false;
    const std::size_t length = std::strlen(text);
    std::size_t digits = length;
    while (digits > 0 && (text[digits - 1] < '0' || text[digits - 1] > '9'))
        --digits;
    const std::string suffix(text + digits);
    unsigned shift = 0;
    if (suffix.empty() || suffix == "B" || suffix == "b")
        shift = 0;
    else if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "kB" || suffix == "kb")
        shift = 10;
    else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "mb")
        shift = 20;
    else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "gb")
        shift = 30;
    else
        return false;
    std::uint64_t value = 0;
    if (digits == 0 || !parse_unsigned(std::string(text, digits).c_str(), value))
        return false;
    if (value > (std::numeric_limits<std::uint64_t>::max() >> shift))
        return false;
    out = value << shift;
    return true;
}

// 1/0, true/false, yes/no, on/off, in any case.
inline bool parse_bool(const char *text, bool &out) {
    if (text == nullptr)
        return false;
    std::string word(text);
    for (char &c : word)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    if (word == "1" || word == "true" || word == "yes" || word == "on") {
        out = true;
        return true;
    }
    if (word == "0" || word == "false" || word == "no" || word == "off") {
        out = false;
        return true;
    }
    return false;
}

// 524288 -> "512K", 3 -> "3": the largest suffix that divides exactly.
inline std::string format_size(std::uint64_t bytes) {
    static const char suffixes[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; ++i) {
        const unsigned shift = 30 - 10 * static_cast<unsigned>(i);
        const std::uint64_t unit = std::uint64_t{1} << shift;
        if (bytes != 0 && bytes % unit == 0)
            return std::to_string(bytes >> shift) + suffixes[i];
    }
    return std::to_string(bytes);
}

// ---- Warnings.

// False only when KUPL_LOG_LEVEL is set to 0 (a user who silenced everything).
inline bool warnings_enabled() {
    std::int64_t level = 0;
    return !(parse_integer(std::getenv("KUPL_LOG_LEVEL"), level) && level == 0);
}

// The one line for an ignored value; at most once per variable (per process and component).
inline void warn_ignored(const char *name, const char *value, const std::string &expected,
                         const std::string &used) {
    static std::mutex *mutex = new std::mutex;                        // leaked: warnings may come at exit
    static std::set<std::string> *warned = new std::set<std::string>; // likewise
    {
        std::lock_guard<std::mutex> lock(*mutex);
        if (!warned->insert(name).second)
            return;
    }
    if (warnings_enabled())
        std::fprintf(stderr, "kupl: ignoring %s=%.200s: expected %s; using %s\n", name, value,
                     expected.c_str(), used.c_str());
}

// ---- Readers: the value of the variable, or `fallback` (with a warning if it was set but bad).
// `fallback_text` describes the default in the warning when the fallback value itself is only a
// placeholder (e.g. 0 for "derived from the machine").

// The value of `name`, or nullptr when unset or empty.
inline const char *value_of(const char *name) {
    const char *text = std::getenv(name);
    return text != nullptr && *text != '\0' ? text : nullptr;
}

// Of several spellings of one setting, the first one that is set (else the first).
inline const char *first_set(std::initializer_list<const char *> names) {
    for (const char *name : names)
        if (value_of(name) != nullptr)
            return name;
    return *names.begin();
}

inline std::uint64_t read_size(const char *name, std::uint64_t fallback, std::uint64_t min = 0,
                               std::uint64_t max = kMaxBytes, const char *fallback_text = nullptr) {
    const char *text = value_of(name);
    std::uint64_t value = 0;
    if (text == nullptr)
        return fallback;
    if (parse_size(text, value) && value >= min && value <= max)
        return value;
    warn_ignored(name, text,
                 "a size in " + format_size(min) + ".." + format_size(max) + " (bytes, suffixes K, M, G)",
                 fallback_text ? fallback_text : format_size(fallback));
    return fallback;
}

inline std::int64_t read_integer(const char *name, std::int64_t fallback, std::int64_t min, std::int64_t max,
                                 const char *unit = nullptr, const char *fallback_text = nullptr) {
    const char *text = value_of(name);
    std::int64_t value = 0;
    if (text == nullptr)
        return fallback;
    if (parse_integer(text, value) && value >= min && value <= max)
        return value;
    std::string expected = "an integer in " + std::to_string(min) + ".." + std::to_string(max);
    if (unit != nullptr)
        expected += std::string(" (") + unit + ")";
    warn_ignored(name, text, expected, fallback_text ? fallback_text : std::to_string(fallback));
    return fallback;
}

inline bool read_bool(const char *name, bool fallback) {
    const char *text = value_of(name);
    bool value = false;
    if (text == nullptr)
        return fallback;
    if (parse_bool(text, value))
        return value;
    warn_ignored(name, text, "1/0, true/false, yes/no or on/off", fallback ? "1" : "0");
    return fallback;
}

} // namespace kupl::env
