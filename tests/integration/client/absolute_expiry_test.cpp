// Absolute expiry times (folsom::Expiry from a system_clock::time_point) and long ttls, over
// all three protocols against a real memcached. What memcached made of an exptime is read
// back exactly with the meta protocol's remaining-ttl flag (mg t), so no assertion waits on
// the clock except the one that watches an item expire, which allows many seconds.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Expiry;
using folsom::Status;
using Clock = std::chrono::system_clock;

class AbsoluteExpiry : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options(folsom::Protocol p) const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = p;
        return o;
    }
    /// The seconds memcached says `key` has left (-1: never expires), read over meta.
    std::optional<std::int64_t> remaining(std::string_view key) {
        auto r = reader_.meta_get(key, {.return_ttl = true});
        return r.hit() ? r.ttl : std::nullopt;
    }
    /// Sets and touches counted by the server: proof that nothing was sent.
    long long writes() const {
        const std::string stats = folsom::test::raw_request(server_, "stats\r\n", "END\r\n");
        return folsom::test::stat_value(stats, "cmd_set") +
               folsom::test::stat_value(stats, "cmd_touch");
    }

    folsom::test::MemcachedServer server_;
    folsom::BlockingClient c{options(GetParam())};
    folsom::BlockingClient reader_{options(folsom::Protocol::meta)};
};

// The remaining ttl of an item set to expire at now + `ahead` is `ahead`, give or take the
// seconds this test may be descheduled for (and memcached's one-second clock).
void expect_about(std::optional<std::int64_t> left, std::int64_t ahead) {
    ASSERT_TRUE(left) << "the item is missing";
    EXPECT_LE(*left, ahead + 1);
    EXPECT_GE(*left, ahead - 30);
}

TEST_P(AbsoluteExpiry, AFutureTimeIsSentAsThatTime) {
    ASSERT_EQ(c.set("future", "v", Clock::now() + 1000s), Status::stored);
    ASSERT_TRUE(c.get("future"));
    expect_about(remaining("future"), 1000);

    ASSERT_EQ(c.touch("future", Clock::now() + 5000s), Status::touched);
    expect_about(remaining("future"), 5000);
    ASSERT_TRUE(c.gat("future", Clock::now() + 7000s));
    expect_about(remaining("future"), 7000);
}

TEST_P(AbsoluteExpiry, ATtlOverThirtyDaysIsKept) {
    constexpr auto forty_days = std::chrono::hours(24 * 40);
    ASSERT_EQ(c.set("long", "v", forty_days), Status::stored);
    expect_about(remaining("long"), 40 * 24 * 3600);
    // Exactly 30 days is still relative; one second more becomes absolute: both are kept.
    ASSERT_EQ(c.set("edge", "v", 2592000s), Status::stored);
    expect_about(remaining("edge"), 2592000);
    ASSERT_EQ(c.set("edge1", "v", 2592001s), Status::stored);
    expect_about(remaining("edge1"), 2592001);
    // Past 2038-01-19 memcached cannot keep a time: an exptime over 2^31-1 reads as negative
    // there and expires the item at once. A ttl that long is capped to the last instant.
    ASSERT_EQ(c.set("decades", "v", std::chrono::hours(24 * 365 * 30)), Status::stored);
    const auto unix_now =
        std::chrono::floor<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
    expect_about(remaining("decades"), 0x7fffffffLL - unix_now);
}

TEST_P(AbsoluteExpiry, APastTimeExpiresAtOnce) {
    ASSERT_EQ(c.set("past", "v", 0s), Status::stored);
    ASSERT_TRUE(c.get("past"));
    ASSERT_EQ(c.touch("past", Clock::now() - 10s), Status::touched);
    EXPECT_FALSE(c.get("past"));

    // A time in January 1970 (and the epoch itself) is in the past too, not a relative ttl
    // nor "never".
    for (auto at : {Clock::time_point{} + 86400s, Clock::time_point{}}) {
        ASSERT_EQ(c.set("1970", "v", at), Status::stored);
        EXPECT_FALSE(c.get("1970"));
    }
}

TEST_P(AbsoluteExpiry, ItemExistsBeforeTheTimeAndIsGoneAfter) {
    const auto at = Clock::now() + 3s;
    ASSERT_EQ(c.set("soon", "v", at), Status::stored);
    // Read at once: memcached keeps it for 2 to 3 more seconds.
    const bool seen_before = c.get("soon").has_value() || Clock::now() >= at - 1s;
    EXPECT_TRUE(seen_before);
    // Then it goes: polled up to 20 s past the time (memcached's clock ticks once a second).
    bool gone = false;
    while (!gone && Clock::now() < at + 20s) {
        gone = !c.get("soon");
        if (!gone) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(gone);
    EXPECT_GE(Clock::now(), at - 1s);  // not gone before its time (whole seconds)
}

TEST_P(AbsoluteExpiry, RawExptimeIsPassedThroughUnchanged) {
    const auto unix_now =
        std::chrono::floor<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
    ASSERT_EQ(c.set("raw_abs", "v", Expiry::from_exptime(unix_now + 1000)), Status::stored);
    expect_about(remaining("raw_abs"), 1000);
    ASSERT_EQ(c.set("raw_rel", "v", Expiry::from_exptime(600)), Status::stored);
    expect_about(remaining("raw_rel"), 600);
    ASSERT_EQ(c.set("raw_never", "v", Expiry::from_exptime(0)), Status::stored);
    EXPECT_EQ(remaining("raw_never"), -1);
    ASSERT_EQ(c.set("raw_gone", "v", Expiry::from_exptime(-1)), Status::stored);
    EXPECT_FALSE(c.get("raw_gone"));
}

TEST_P(AbsoluteExpiry, MultiKeyWritesTakeATime) {
    const std::vector<folsom::KeyValue> items = {{"m1", "a"}, {"m2", "b"}};
    auto& async = c.async();
    auto r = async
                 .set_multi(std::span<const folsom::KeyValue>(items), Clock::now() + 2000s,
                            asio::use_future)
                 .get();
    ASSERT_EQ(r.results.size(), 2u);
    EXPECT_EQ(r.results[0].status, Status::stored);
    expect_about(remaining("m1"), 2000);
    const std::vector<std::string_view> keys = {"m1", "m2"};
    auto t = async
                 .touch_multi(std::span<const std::string_view>(keys), Clock::now() + 3000s,
                              asio::use_future)
                 .get();
    EXPECT_EQ(t.results[1].status, Status::touched);
    expect_about(remaining("m2"), 3000);
}

// A time that memcached cannot be sent (before the epoch, past 2038-01-19) fails the request
// with invalid_argument, and the server sees nothing.
TEST_P(AbsoluteExpiry, AnUnsendableTimeIsRefusedAndNothingIsSent) {
    ASSERT_EQ(c.set("kept", "v", 0s), Status::stored);
    const long long before = writes();
    const auto pre_epoch = Clock::time_point{} - 1s;
    const auto after_2038 = Clock::time_point{} + std::chrono::seconds(0x80000000LL);
    for (auto at : {pre_epoch, after_2038}) {
        try {
            c.set("kept", "x", at);
            ADD_FAILURE() << "set was not refused";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
        }
        try {
            c.touch("kept", at);
            ADD_FAILURE() << "touch was not refused";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
        }
        try {
            c.gat("kept", at);
            ADD_FAILURE() << "gat was not refused";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
        }
    }
    try {
        c.set("kept", "x", Expiry::from_exptime(0x80000000LL));
        ADD_FAILURE() << "an exptime over 2^31-1 was not refused";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    const std::vector<folsom::KeyValue> items = {{"kept", "y"}};
    try {  // every key failed: the future throws the error
        c.async()
            .set_multi(std::span<const folsom::KeyValue>(items), pre_epoch, asio::use_future)
            .get();
        ADD_FAILURE() << "set_multi was not refused";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    EXPECT_EQ(writes(), before);
    EXPECT_EQ(c.get("kept")->data, "v");
}

INSTANTIATE_TEST_SUITE_P(AllProtocols, AbsoluteExpiry, folsom::test::all_protocols,
                         folsom::test::protocol_name);

// Counters created with an initial value (binary and meta) and the meta calls take a time too.
TEST(AbsoluteExpiryMeta, CountersAndMetaCallsTakeATime) {
    folsom::test::MemcachedServer server;
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = folsom::Protocol::meta;
    folsom::BlockingClient c(o);
    auto left = [&](std::string_view key) {
        auto r = c.meta_get(key, {.return_ttl = true});
        return r.hit() ? r.ttl : std::nullopt;
    };
    ASSERT_EQ(c.incr("n", 1, 5, Clock::now() + 1500s), 5u);
    expect_about(left("n"), 1500);
    ASSERT_EQ(c.meta_set("ms", "v", Clock::now() + 2500s), Status::stored);
    expect_about(left("ms"), 2500);
    folsom::MetaGetOptions touch;
    touch.touch = Clock::now() + 3500s;
    ASSERT_TRUE(c.meta_get("ms", touch).hit());
    expect_about(left("ms"), 3500);
    folsom::MetaGetOptions bad;
    bad.touch = Clock::time_point{} - 1s;
    EXPECT_THROW(c.meta_get("ms", bad), std::system_error);
}

}  // namespace
