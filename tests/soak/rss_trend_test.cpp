// The soak's memory verdict: a plateau passes, spikes pass, steady growth fails.
#include "soak/rss_trend.hpp"

#include <gtest/gtest.h>

namespace {

using folsom::soak::RssTrend;
constexpr std::uint64_t MiB = 1 << 20;

TEST(SoakRssTrend, WarmUpThenPlateauIsNotGrowth) {
    RssTrend t;
    for (int i = 0; i < 30; ++i)
        t.add(i < 10 ? (10 + 4 * static_cast<std::uint64_t>(i)) * MiB : 50 * MiB);
    EXPECT_EQ(t.middle_median(), 50 * MiB);
    EXPECT_EQ(t.end_median(), 50 * MiB);
    EXPECT_FALSE(t.grew());
}

TEST(SoakRssTrend, SpikesInEitherThirdAreNotGrowth) {
    RssTrend t;
    for (int i = 0; i < 30; ++i)
        t.add((i == 15 || i == 25 || i == 28 ? 90 : 40) * MiB);
    EXPECT_FALSE(t.grew());
}

TEST(SoakRssTrend, SteadyGrowthIsGrowth) {
    RssTrend t;
    for (int i = 0; i < 30; ++i)
        t.add((20 + 3 * static_cast<std::uint64_t>(i)) * MiB);  // +3 MiB per sample, forever
    EXPECT_EQ(t.middle_median(), (20 + 3 * 15) * MiB);
    EXPECT_EQ(t.end_median(), (20 + 3 * 25) * MiB);
    EXPECT_TRUE(t.grew());
}

TEST(SoakRssTrend, SlowGrowthWithinTheSlackIsNotGrowth) {
    RssTrend t;
    for (int i = 0; i < 30; ++i)
        t.add(200 * MiB + static_cast<std::uint64_t>(i) * 512 * 1024);  // 5 MiB per third
    EXPECT_GT(t.allowance(), 20 * MiB);  // 10% of the 207.5 MiB plateau, not 8 MiB
    EXPECT_LT(t.allowance(), 21 * MiB);
    EXPECT_FALSE(t.grew());
}

TEST(SoakRssTrend, TooFewSamplesGiveNoVerdict) {
    RssTrend t;
    for (int i = 0; i < 8; ++i)
        t.add(static_cast<std::uint64_t>(1 + 100 * i) * MiB);
    EXPECT_FALSE(t.grew());
    EXPECT_EQ(t.middle_median(), 0u);
}

TEST(SoakRssTrend, ReadsThisProcessesResidentMemory) {
    EXPECT_GT(folsom::soak::resident_bytes(), 0u);
}

}  // namespace
