// The environment reader shared by libkupl, the OpenMP plugin and the MPI interposer
// (core/support/env_config.h): what each form parses to, and the one warning line.
#include "support/env_config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using namespace kupl::env;

std::uint64_t size_of(const char *text) {
    std::uint64_t value = 12345;
    EXPECT_TRUE(parse_size(text, value)) << text;
    return value;
}
bool size_rejected(const char *text) {
    std::uint64_t value = 12345;
    const bool ok = parse_size(text, value);
    EXPECT_EQ(value, 12345u) << "a rejected text must leave the value alone: " << text;
    return !ok;
}

TEST(EnvParse, Sizes) {
    EXPECT_EQ(size_of("0"), 0u);
    EXPECT_EQ(size_of("4096"), 4096u);
    EXPECT_EQ(size_of("16K"), 16u << 10);
    EXPECT_EQ(size_of("16k"), 16u << 10);
    EXPECT_EQ(size_of("16KB"), 16u << 10);
    EXPECT_EQ(size_of("3M"), 3u << 20);
    EXPECT_EQ(size_of("3mb"), 3u << 20);
    EXPECT_EQ(size_of("2G"), std::uint64_t{2} << 30);
    EXPECT_EQ(size_of("100B"), 100u);
    EXPECT_EQ(size_of("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(size_of("17179869183G"), std::uint64_t{17179869183} << 30); // the largest G that fits
}

TEST(EnvParse, SizesRejected) {
    for (const char *text : {"",
                             "abc",
                             "-5",
                             "+5",
                             " 5",
                             "5 ",
                             "5K ",
                             "K",
                             "B",
                             "5KK",
                             "5T",
                             "5KiB",
                             "1.5M",
                             "0x10",
                             "5 K",
                             "1K2",
                             "18446744073709551616",
                             "17179869184G",
                             "99999999999999999G",
                             "18014398509481984K"})
        EXPECT_TRUE(size_rejected(text)) << text;
}

TEST(EnvParse, Integers) {
    std::int64_t value = 0;
    EXPECT_TRUE(parse_integer("0", value));
    EXPECT_EQ(value, 0);
    EXPECT_TRUE(parse_integer("-5", value));
    EXPECT_EQ(value, -5);
    EXPECT_TRUE(parse_integer("9223372036854775807", value));
    EXPECT_EQ(value, INT64_MAX);
    EXPECT_TRUE(parse_integer("-9223372036854775808", value));
    EXPECT_EQ(value, INT64_MIN);
    value = 7;
    for (const char *text : {"", "-", "--5", "+5", "5K", "abc", "9223372036854775808", "-9223372036854775809",
                             "4294967291x", " 1"})
        EXPECT_FALSE(parse_integer(text, value)) << text;
    EXPECT_EQ(value, 7);
}

TEST(EnvParse, Booleans) {
    for (const char *text : {"1", "true", "TRUE", "yes", "Yes", "on", "ON"}) {
        bool value = false;
        EXPECT_TRUE(parse_bool(text, value) && value) << text;
    }
    for (const char *text : {"0", "false", "False", "no", "NO", "off", "Off"}) {
        bool value = true;
        EXPECT_TRUE(parse_bool(text, value) && !value) << text;
    }
    for (const char *text : {"", "2", "-1", "y", "n", "enable", "truee", "00", " 1"}) {
        bool value = true;
        EXPECT_FALSE(parse_bool(text, value)) << text;
        EXPECT_TRUE(value);
    }
}

TEST(EnvParse, FormatSize) {
    EXPECT_EQ(format_size(0), "0");
    EXPECT_EQ(format_size(1000), "1000");
    EXPECT_EQ(format_size(1024), "1K");
    EXPECT_EQ(format_size(512 * 1024), "512K");
    EXPECT_EQ(format_size(1536 * 1024), "1536K");
    EXPECT_EQ(format_size(std::uint64_t{1} << 20), "1M");
    EXPECT_EQ(format_size(kMaxBytes), "1024G");
}

// The readers, on real environment variables (this process only; each test uses its own names,
// as a variable is warned about once per process).
class EnvRead : public ::testing::Test {
  protected:
    void TearDown() override {
        for (const char *name :
             {"KUPL_TEST_SIZE", "KUPL_TEST_INT", "KUPL_TEST_BOOL", "KUPL_TEST_ONCE", "KUPL_TEST_ALIAS_A",
              "KUPL_TEST_ALIAS_B", "KUPL_TEST_SILENT", "KUPL_LOG_LEVEL"})
            unsetenv(name);
    }
    // Runs read() and returns what it printed on stderr.
    template <typename Read> std::string stderr_of(Read read) {
        ::testing::internal::CaptureStderr();
        read();
        return ::testing::internal::GetCapturedStderr();
    }
};

TEST_F(EnvRead, UnsetAndEmptyGiveTheDefaultSilently) {
    unsetenv("KUPL_TEST_SIZE");
    EXPECT_EQ(stderr_of([] { EXPECT_EQ(read_size("KUPL_TEST_SIZE", 77), 77u); }), "");
    setenv("KUPL_TEST_SIZE", "", 1);
    EXPECT_EQ(stderr_of([] { EXPECT_EQ(read_size("KUPL_TEST_SIZE", 77), 77u); }), "");
}

TEST_F(EnvRead, GoodValuesAreTakenSilently) {
    setenv("KUPL_TEST_SIZE", "64K", 1);
    setenv("KUPL_TEST_INT", "-3", 1);
    setenv("KUPL_TEST_BOOL", "off", 1);
    const std::string out = stderr_of([] {
        EXPECT_EQ(read_size("KUPL_TEST_SIZE", 1), 65536u);
        EXPECT_EQ(read_integer("KUPL_TEST_INT", 0, -10, 10), -3);
        EXPECT_FALSE(read_bool("KUPL_TEST_BOOL", true));
    });
    EXPECT_EQ(out, "");
}

TEST_F(EnvRead, NegativeSpinIsRefusedWithOneLine) {
    setenv("KUPL_TEST_INT", "-5", 1);
    const std::string out =
        stderr_of([] { EXPECT_EQ(read_integer("KUPL_TEST_INT", 50, 0, 1000000, "microseconds"), 50); });
    EXPECT_EQ(
        out, "kupl: ignoring KUPL_TEST_INT=-5: expected an integer in 0..1000000 (microseconds); using 50\n");
}

TEST_F(EnvRead, SizeOutOfRangeAndOverflowAreRefused) {
    setenv("KUPL_TEST_SIZE", "2048G", 1);
    EXPECT_EQ(stderr_of([] { EXPECT_EQ(read_size("KUPL_TEST_SIZE", 16 << 10), 16u << 10); }),
              "kupl: ignoring KUPL_TEST_SIZE=2048G: expected a size in 0..1024G (bytes, suffixes K, M, G); "
              "using 16K\n");
    setenv("KUPL_TEST_ALIAS_A", "99999999999999999G", 1); // wraps a 64-bit shift
    EXPECT_EQ(
        stderr_of([] { EXPECT_EQ(read_size("KUPL_TEST_ALIAS_A", 5, 1, 100, "five"), 5u); }),
        "kupl: ignoring KUPL_TEST_ALIAS_A=99999999999999999G: expected a size in 1..100 (bytes, suffixes K, "
        "M, G); using five\n");
}

TEST_F(EnvRead, BadBooleanNamesTheForms) {
    setenv("KUPL_TEST_BOOL", "maybe", 1);
    EXPECT_EQ(stderr_of([] { EXPECT_TRUE(read_bool("KUPL_TEST_BOOL", true)); }),
              "kupl: ignoring KUPL_TEST_BOOL=maybe: expected 1/0, true/false, yes/no or on/off; using 1\n");
}

TEST_F(EnvRead, WarnedOncePerVariable) {
    setenv("KUPL_TEST_ONCE", "abc", 1);
    const std::string out = stderr_of([] {
        for (int i = 0; i < 3; ++i)
            EXPECT_EQ(read_integer("KUPL_TEST_ONCE", 4, 1, 8), 4);
    });
    EXPECT_EQ(out, "kupl: ignoring KUPL_TEST_ONCE=abc: expected an integer in 1..8; using 4\n");
}

TEST_F(EnvRead, LogLevelZeroSilencesTheWarningNotTheRule) {
    setenv("KUPL_TEST_SILENT", "abc", 1);
    setenv("KUPL_LOG_LEVEL", "0", 1);
    EXPECT_EQ(stderr_of([] { EXPECT_EQ(read_integer("KUPL_TEST_SILENT", 4, 1, 8), 4); }), "");
    for (const char *level : {"1", "2", "abc"}) {
        setenv("KUPL_LOG_LEVEL", level, 1);
        EXPECT_TRUE(warnings_enabled()) << level;
    }
    unsetenv("KUPL_LOG_LEVEL");
    EXPECT_TRUE(warnings_enabled());
}

TEST_F(EnvRead, FirstSetSpellingWins) {
    EXPECT_STREQ(first_set({"KUPL_TEST_ALIAS_A", "KUPL_TEST_ALIAS_B"}), "KUPL_TEST_ALIAS_A");
    setenv("KUPL_TEST_ALIAS_B", "1", 1);
    EXPECT_STREQ(first_set({"KUPL_TEST_ALIAS_A", "KUPL_TEST_ALIAS_B"}), "KUPL_TEST_ALIAS_B");
    setenv("KUPL_TEST_ALIAS_A", "1", 1);
    EXPECT_STREQ(first_set({"KUPL_TEST_ALIAS_A", "KUPL_TEST_ALIAS_B"}), "KUPL_TEST_ALIAS_A");
}

} // namespace
