// How an Expiry becomes memcached's exptime: durations, absolute times and raw exptimes,
// including the edges (30 days, the epoch, 2038) and what cannot be sent.
#include "folsom/expiry.hpp"

#include "folsom/client.hpp"
#include "folsom/fake_client.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <system_error>

namespace {

using namespace std::chrono_literals;
using folsom::Expiry;
using folsom::detail::expired_exptime;
using folsom::detail::invalid_exptime;
using folsom::detail::to_exptime;
using Clock = std::chrono::system_clock;

constexpr std::int64_t now = 1800000000;  // 2027-01-15, the request's time in these tests
constexpr std::int64_t thirty_days = 2592000;

constexpr Clock::time_point at(std::int64_t unix_seconds) {
    return Clock::time_point{} + std::chrono::seconds(unix_seconds);
}

TEST(Expiry, DurationsUpToThirtyDaysAreSentAsTheyAre) {
    EXPECT_EQ(to_exptime(Expiry{}, now), 0u);
    EXPECT_EQ(to_exptime(0s, now), 0u);
    EXPECT_EQ(to_exptime(1s, now), 1u);
    EXPECT_EQ(to_exptime(5min, now), 300u);
    EXPECT_EQ(to_exptime(std::chrono::seconds(thirty_days), now), thirty_days);
}

TEST(Expiry, NegativeDurationsAreAlreadyExpired) {
    EXPECT_EQ(to_exptime(-1s, now), expired_exptime);
    EXPECT_EQ(expired_exptime, thirty_days + 1);  // memcached's own encoding of a negative one
}

TEST(Expiry, LongerDurationsBecomeAbsoluteTimes) {
    EXPECT_EQ(to_exptime(std::chrono::seconds(thirty_days + 1), now), now + thirty_days + 1);
    EXPECT_EQ(to_exptime(std::chrono::hours(24 * 365), now), now + 365 * 86400);
    // Past what memcached can be sent: the last representable instant.
    EXPECT_EQ(to_exptime(std::chrono::hours(24 * 365 * 50), now), 0x7fffffffu);
    EXPECT_EQ(to_exptime(std::chrono::seconds::max(), now), 0x7fffffffu);
}

TEST(Expiry, AbsoluteTimesAreSentAsUnixTimes) {
    EXPECT_EQ(to_exptime(at(now + 10), now), now + 10);
    EXPECT_EQ(to_exptime(at(now - 10), now), now - 10);  // in the past: memcached expires it
    EXPECT_EQ(to_exptime(at(0x7fffffff), now), 0x7fffffffu);
    // Sub-second precision is rounded down.
    EXPECT_EQ(to_exptime(at(now + 10) + 999ms, now), now + 10);
    EXPECT_EQ(to_exptime(Clock::time_point(at(now + 10) + 1ns), now), now + 10);
}

TEST(Expiry, TimesInJanuary1970AreExpiredNotRelative) {
    EXPECT_EQ(to_exptime(at(0), now), expired_exptime);  // the epoch is not "never"
    EXPECT_EQ(to_exptime(at(1), now), expired_exptime);
    EXPECT_EQ(to_exptime(at(thirty_days), now), expired_exptime);
    EXPECT_EQ(to_exptime(at(thirty_days + 1), now), thirty_days + 1u);
}

TEST(Expiry, TimesBeforeTheEpochOrAfter2038CannotBeSent) {
    EXPECT_EQ(to_exptime(at(-1), now), invalid_exptime);
    EXPECT_EQ(to_exptime(Clock::time_point{} - 1ns, now), invalid_exptime);
    EXPECT_EQ(to_exptime(at(0x80000000LL), now), invalid_exptime);
}

TEST(Expiry, RawExptimesPassThroughUnchanged) {
    EXPECT_EQ(to_exptime(Expiry::from_exptime(0), now), 0u);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(100), now), 100u);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(thirty_days), now), thirty_days);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(thirty_days + 1), now), thirty_days + 1u);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(now + 100), now), now + 100);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(-5), now), expired_exptime);
    EXPECT_EQ(to_exptime(Expiry::from_exptime(0x80000000LL), now), invalid_exptime);
}

TEST(Expiry, TheClockIsReadOnlyForLongDurations) {
    const auto before = std::chrono::floor<std::chrono::seconds>(Clock::now().time_since_epoch());
    const std::uint32_t e = to_exptime(Expiry(std::chrono::hours(24 * 40)));
    const auto after = std::chrono::floor<std::chrono::seconds>(Clock::now().time_since_epoch());
    EXPECT_GE(e, before.count() + 40 * 86400);
    EXPECT_LE(e, after.count() + 40 * 86400);
    EXPECT_EQ(to_exptime(Expiry(60s)), 60u);
}

// The client refuses an Expiry it cannot send before the request reaches a server (the fake
// server here; tests/integration/client/absolute_expiry_test.cpp shows memcached sees nothing).
TEST(Expiry, TheClientRefusesWhatCannotBeSent) {
    asio::io_context io;
    auto client = folsom::make_fake_client(io);
    std::optional<std::error_code> set_ec, touch_ec;
    std::optional<folsom::Status> set_status;
    client.set("k", "v", at(-1), [&](std::error_code ec, folsom::Status s) {
        set_ec = ec;
        set_status = s;
    });
    client.touch("k", at(0x80000000LL), [&](std::error_code ec, folsom::Status) { touch_ec = ec; });
    io.run();
    ASSERT_TRUE(set_ec && touch_ec);
    EXPECT_EQ(*set_ec, folsom::errc::invalid_argument);
    EXPECT_EQ(*touch_ec, folsom::errc::invalid_argument);
    std::optional<std::optional<folsom::Value>> got;
    client.get("k", [&](std::error_code, std::optional<folsom::Value> v) { got = std::move(v); });
    io.restart();
    io.run();
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got);  // nothing was stored
}

static_assert(to_exptime(Expiry(at(now)), 0) == now, "usable at compile time");

}  // namespace
