// Issue 13: which copies a thread waits for at once, predicted per call site of the copy
// (core/support/prompt_waits.h, used by Engine::waits_at_once): streaks, what ends them, and
// that one site's waits say nothing of another's.
#include "support/prompt_waits.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using kupl::support::PromptWaits;

// Stand-ins for two lines of a program that call kupl_memcpy_async (any distinct addresses).
const char kSiteA = 0, kSiteB = 0;

// A probe copy from `site` returning at `at`, waited for `gap` ns later.
void copy_and_wait(PromptWaits &waits, const void *site, std::uint64_t at, std::uint64_t gap) {
    waits.call_from(site);
    waits.probe_returned(at);
    waits.waited(at + gap);
}

// kStreak probe copies from `site` from `now` on, 10 us apart, each waited for at once; returns the
// time after the last.
std::uint64_t waits_at_once_in_a_row(PromptWaits &waits, const void *site, std::uint64_t now) {
    for (unsigned i = 0; i < PromptWaits::kStreak; ++i, now += 10'000)
        copy_and_wait(waits, site, now, 100);
    return now;
}

TEST(PromptWaits, AStreakOfWaitsAtOncePredictsTheSitesNextCopy) {
    PromptWaits waits{};
    std::uint64_t now = 1'000'000;
    for (unsigned i = 0; i < PromptWaits::kStreak; ++i) {
        waits.call_from(&kSiteA);
        EXPECT_FALSE(waits.predicts()) << "after " << i << " waits at once";
        waits.probe_returned(now);
        waits.waited(now + 200);
        now += 10'000;
    }
    EXPECT_EQ(waits.streak(&kSiteA), PromptWaits::kStreak);
    waits.call_from(&kSiteA);
    EXPECT_TRUE(waits.predicts());
}

TEST(PromptWaits, ALateWaitEndsOnlyItsSitesStreak) {
    PromptWaits waits{};
    std::uint64_t now = 1'000'000;
    for (unsigned i = 0; i < PromptWaits::kStreak; ++i, now += 10'000) {
        copy_and_wait(waits, &kSiteA, now, 100);
        copy_and_wait(waits, &kSiteB, now + 5'000, 100);
    }
    // B's copy is waited for after compute: B's streak ends, A's stands.
    copy_and_wait(waits, &kSiteB, now, PromptWaits::kGapNs + 1);
    EXPECT_EQ(waits.streak(&kSiteB), 0u);
    EXPECT_EQ(waits.streak(&kSiteA), PromptWaits::kStreak);
    waits.call_from(&kSiteA);
    EXPECT_TRUE(waits.predicts());
    waits.call_from(&kSiteB);
    EXPECT_FALSE(waits.predicts());
}

TEST(PromptWaits, SitesThatAlternateKeepTheirOwnPredictions) {
    // The sweep's pattern: one line waits at once, another computes before its wait, in turn.
    PromptWaits waits{};
    std::uint64_t now = 1'000'000;
    for (int i = 0; i < 10; ++i, now += 100'000) {
        copy_and_wait(waits, &kSiteA, now, 150);
        copy_and_wait(waits, &kSiteB, now + 50'000, 20'000);
    }
    waits.call_from(&kSiteA);
    EXPECT_TRUE(waits.predicts());
    waits.call_from(&kSiteB);
    EXPECT_FALSE(waits.predicts());
}

TEST(PromptWaits, ACopyNotWaitedForBeforeTheNextEndsItsSitesStreak) {
    PromptWaits waits{};
    const std::uint64_t now = waits_at_once_in_a_row(waits, &kSiteA, 1'000'000);
    // Two copies back to back: the first was not waited for at once.
    waits.call_from(&kSiteA);
    waits.probe_returned(now);
    EXPECT_TRUE(waits.probe_pending());
    waits.call_from(&kSiteA);
    EXPECT_FALSE(waits.predicts()) << "a probe still awaits its wait";
    waits.probe_returned(now + 100);
    EXPECT_EQ(waits.streak(&kSiteA), 0u);
    waits.waited(now + 200); // the second's wait, at once: a streak of one
    EXPECT_EQ(waits.streak(&kSiteA), 1u);
    EXPECT_FALSE(waits.probe_pending());
}

TEST(PromptWaits, AsManySitesAsKeptHoldTheirStreaksWhateverTheirAddresses) {
    // Addresses 4 bytes apart: under a hash of the address (until 2026-12-07) they all shared one
    // place, and each one's waits ended the others' streaks.
    alignas(64) static const char lines[4 * PromptWaits::kSites] = {};
    PromptWaits waits{};
    std::uint64_t now = 1'000'000;
    for (unsigned round = 0; round < PromptWaits::kStreak; ++round)
        for (std::size_t site = 0; site < PromptWaits::kSites; ++site, now += 10'000)
            copy_and_wait(waits, &lines[4 * site], now, 100);
    for (std::size_t site = 0; site < PromptWaits::kSites; ++site) {
        EXPECT_EQ(waits.streak(&lines[4 * site]), PromptWaits::kStreak) << "site " << site;
        waits.call_from(&lines[4 * site]);
        EXPECT_TRUE(waits.predicts()) << "site " << site;
    }
}

TEST(PromptWaits, ANewSiteTakesThePlaceOfTheOneWaitedForLongestAgo) {
    static const char lines[PromptWaits::kSites + 1] = {};
    PromptWaits waits{};
    std::uint64_t now = 1'000'000;
    for (std::size_t site = 0; site < PromptWaits::kSites; ++site)
        now = waits_at_once_in_a_row(waits, &lines[site], now);
    // The first site waits again: the second is now the one waited for longest ago.
    copy_and_wait(waits, &lines[0], now, 100);
    copy_and_wait(waits, &lines[PromptWaits::kSites], now + 10'000, 100);
    EXPECT_EQ(waits.streak(&lines[PromptWaits::kSites]), 1u);
    EXPECT_EQ(waits.streak(&lines[1]), 0u) << "its place went to the new site";
    EXPECT_EQ(waits.streak(&lines[0]), PromptWaits::kStreak + 1);
    for (std::size_t site = 2; site < PromptWaits::kSites; ++site)
        EXPECT_EQ(waits.streak(&lines[site]), PromptWaits::kStreak) << "site " << site;
    // The evicted site starts from nothing: kStreak waits at once again before a prediction.
    now = waits_at_once_in_a_row(waits, &lines[1], now + 20'000);
    waits.call_from(&lines[1]);
    EXPECT_TRUE(waits.predicts());
}

} // namespace
