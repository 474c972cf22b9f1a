// The fake client (fake_client.hpp) against a real memcached: every case runs on both, with
// the same expectations, so the fake cannot drift from the server it stands in for.
//
// Real: a private memcached per test, reached over ASCII. Fake: an in-memory store whose clock
// the test moves, so the one place time passes (pass()) sleeps only for the real server.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/fake_client.hpp"

#include "support/memcached_server.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <thread>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::StoreMode;

enum class Backend { fake, real };

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
    return info.param == Backend::fake ? "fake" : "real";
}

class FakeVsReal : public ::testing::TestWithParam<Backend> {
  protected:
    void SetUp() override {
        if (real()) {
            // -I 2m: a 1 MiB value fits with its item header, as the client's limit allows.
            server_ = std::make_unique<folsom::test::MemcachedServer>(
                std::vector<std::string>{"-I", "2m"});
        }
        client_ = std::make_unique<folsom::BlockingClient>(
            [this](asio::any_io_executor ex) { return make_client(std::move(ex)); });
    }

    bool real() const { return GetParam() == Backend::real; }

    /// A client of this test's backend on `ex`.
    folsom::Client make_client(asio::any_io_executor ex, std::size_t max_outstanding = 1000) {
        if (real()) {
            folsom::Options o;
            o.servers = {server_->address()};
            o.max_outstanding_requests = max_outstanding;
            return folsom::Client::connect(std::move(ex), o);
        }
        folsom::FakeOptions o;
        o.clock = clock_;
        o.max_outstanding_requests = max_outstanding;
        return folsom::make_fake_client(std::move(ex), o);
    }

    /// Lets `d` pass: memcached's clock ticks once a second, so the real server needs sleeps.
    void pass(std::chrono::milliseconds d) {
        if (real())
            std::this_thread::sleep_for(d);
        else
            clock_.advance(d);
    }

    /// The error a call throws ({} when it returns).
    template <class F>
    static std::error_code error_of(F&& f) {
        try {
            f();
        } catch (const std::system_error& e) {
            return e.code();
        }
        return {};
    }

    std::map<std::string, long long> counters() {
        auto s = client_->stats();
        std::map<std::string, long long> m;
        if (s.size() != 1) return m;
        for (auto& [name, value] : s[0].value)
            if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos)
                m[name] = std::stoll(value);
        return m;
    }

    folsom::BlockingClient& c() { return *client_; }

    folsom::ManualClock clock_;
    std::unique_ptr<folsom::test::MemcachedServer> server_;
    std::unique_ptr<folsom::BlockingClient> client_;
};

TEST_P(FakeVsReal, SetGetFlagsAndMiss) {
    EXPECT_EQ(c().set("greeting", "hello", 60s, 7), Status::stored);
    auto v = c().get("greeting");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "hello");
    EXPECT_EQ(v->flags, 7u);
    EXPECT_EQ(v->cas, 0u);  // get carries no cas over ASCII
    auto g = c().gets("greeting");
    ASSERT_TRUE(g);
    EXPECT_NE(g->cas, 0u);
    EXPECT_EQ(g->flags, 7u);
    EXPECT_FALSE(c().get("no-such-key"));
    EXPECT_FALSE(c().gets("no-such-key"));
    EXPECT_EQ(c().set("greeting", "again", 0s, 0xffffffffu), Status::stored);
    EXPECT_EQ(c().get("greeting")->flags, 0xffffffffu);
    EXPECT_EQ(c().get("greeting")->data, "again");
}

TEST_P(FakeVsReal, AddReplaceAppendPrepend) {
    EXPECT_EQ(c().store(StoreMode::add, "k", "mid", 0s, {3, 0}), Status::stored);
    EXPECT_EQ(c().store(StoreMode::add, "k", "again", 0s), Status::not_stored);
    EXPECT_EQ(c().store(StoreMode::append, "k", ">>", 0s, {9, 0}), Status::stored);
    EXPECT_EQ(c().store(StoreMode::prepend, "k", "<<", 0s, {9, 0}), Status::stored);
    auto v = c().get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "<<mid>>");
    EXPECT_EQ(v->flags, 3u);  // append and prepend keep the item's flags
    EXPECT_EQ(c().store(StoreMode::replace, "k", "new", 0s, {4, 0}), Status::stored);
    EXPECT_EQ(c().get("k")->data, "new");
    EXPECT_EQ(c().get("k")->flags, 4u);
    EXPECT_EQ(c().store(StoreMode::replace, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c().store(StoreMode::append, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c().store(StoreMode::prepend, "absent", "x", 0s), Status::not_stored);
    EXPECT_FALSE(c().get("absent"));
    EXPECT_EQ(c().store(StoreMode::append, "k", "", 0s), Status::stored);  // empty append
    EXPECT_EQ(c().get("k")->data, "new");
}

TEST_P(FakeVsReal, CasFlows) {
    ASSERT_EQ(c().set("k", "v1"), Status::stored);
    ASSERT_EQ(c().set("other", "o"), Status::stored);
    const auto first = c().gets("k")->cas;
    EXPECT_NE(first, 0u);
    EXPECT_NE(c().gets("other")->cas, first);  // unique across keys
    EXPECT_EQ(c().gets("k")->cas, first);      // reading is no modification

    // touch and gat change the ttl, not the cas.
    EXPECT_EQ(c().touch("k", 100s), Status::touched);
    EXPECT_EQ(c().gets("k")->cas, first);
    EXPECT_EQ(c().async().gats("k", 100s, asio::use_future).get()->cas, first);
    EXPECT_EQ(c().gat("k", 100s)->cas, 0u);  // gat carries no cas over ASCII

    EXPECT_EQ(c().cas("k", "v2", first), Status::stored);
    const auto second = c().gets("k")->cas;
    EXPECT_NE(second, first);
    EXPECT_EQ(c().cas("k", "v3", first), Status::exists);  // changed since
    EXPECT_EQ(c().get("k")->data, "v2");
    EXPECT_EQ(c().cas("k", "v3", 0), Status::exists);  // no item has cas 0
    EXPECT_EQ(c().cas("missing", "v", 12345), Status::not_found);

    // Every kind of modification gives a new cas.
    std::uint64_t last = second;
    auto changed = [&] {
        const auto now = c().gets("k")->cas;
        const bool differs = now != last;
        last = now;
        return differs;
    };
    ASSERT_EQ(c().store(StoreMode::append, "k", "a", 0s), Status::stored);
    EXPECT_TRUE(changed());
    ASSERT_EQ(c().store(StoreMode::prepend, "k", "p", 0s), Status::stored);
    EXPECT_TRUE(changed());
    ASSERT_EQ(c().store(StoreMode::replace, "k", "7", 0s), Status::stored);
    EXPECT_TRUE(changed());
    ASSERT_EQ(c().incr("k", 1), 8u);
    EXPECT_TRUE(changed());
    ASSERT_EQ(c().set("k", "x"), Status::stored);
    EXPECT_TRUE(changed());
    // A failed cas changes nothing.
    EXPECT_EQ(c().cas("k", "y", last + 1000), Status::exists);
    EXPECT_FALSE(changed());
    EXPECT_EQ(c().get("k")->data, "x");
    // The cas of a deleted and re-added item is new.
    ASSERT_EQ(c().del("k"), Status::deleted);
    EXPECT_EQ(c().cas("k", "z", last), Status::not_found);
    ASSERT_EQ(c().store(StoreMode::add, "k", "z", 0s), Status::stored);
    EXPECT_TRUE(changed());
}

TEST_P(FakeVsReal, IncrDecrEdgeCases) {
    ASSERT_EQ(c().set("n", "10", 0s, 5), Status::stored);
    EXPECT_EQ(c().incr("n", 5), 15u);
    EXPECT_EQ(c().decr("n", 3), 12u);
    EXPECT_EQ(c().decr("n", 100), 0u);   // floors at zero
    EXPECT_EQ(c().get("n")->flags, 5u);  // flags survive arithmetic
    EXPECT_EQ(c().incr("absent", 1), std::nullopt);
    EXPECT_EQ(c().decr("absent", 1), std::nullopt);

    // Wraps at 2^64.
    ASSERT_EQ(c().set("max", "18446744073709551615"), Status::stored);
    EXPECT_EQ(c().incr("max", 1), 0u);
    ASSERT_EQ(c().set("w", "10"), Status::stored);
    EXPECT_EQ(c().incr("w", 18446744073709551615ull), 9u);
    EXPECT_EQ(c().decr("w", 18446744073709551615ull), 0u);

    // A shorter result is rewritten in place and padded with spaces; a longer one grows.
    ASSERT_EQ(c().set("pad", "100"), Status::stored);
    EXPECT_EQ(c().decr("pad", 95), 5u);
    EXPECT_EQ(c().get("pad")->data, "5  ");
    ASSERT_EQ(c().set("grow", "9"), Status::stored);
    EXPECT_EQ(c().incr("grow", 1), 10u);
    EXPECT_EQ(c().get("grow")->data, "10");
    EXPECT_EQ(c().incr("pad", 2), 7u);  // the padding still reads as a number
    EXPECT_EQ(c().get("pad")->data, "7  ");

    // What memcached's strtoull reads as a number, and what it refuses. (Not here: a value of
    // only blanks, which memcached's strtoull reads past, into whatever memory follows the
    // item; the fake refuses it.)
    const std::pair<std::string, std::optional<std::uint64_t>> cases[] = {
        {"abc", std::nullopt},
        {"", std::nullopt},
        {"12abc", std::nullopt},
        {"-5", std::nullopt},
        {"0x10", std::nullopt},
        {"18446744073709551616", std::nullopt},  // over 2^64 - 1
        {"-0", 1},
        {"+5", 6},
        {" 5 ", 6},
        {"\t7", 8},
        {"5 6", 6},
        {std::string("5\0ab", 4), 6},  // the C string ends at the NUL
        {"00000000000000000000000000042", 43},
    };
    for (const auto& [text, expected] : cases) {
        ASSERT_EQ(c().set("c", text), Status::stored);
        if (expected) {
            EXPECT_EQ(c().incr("c", 1), expected) << '"' << text << '"';
        } else {
            EXPECT_EQ(error_of([&] { c().incr("c", 1); }), errc::client_error)
                << '"' << text << '"';
            EXPECT_EQ(error_of([&] { c().decr("c", 1); }), errc::client_error)
                << '"' << text << '"';
            EXPECT_EQ(c().get("c")->data, text);  // unchanged
        }
    }
    ASSERT_EQ(c().set("lead", std::string("\t7")), Status::stored);
    EXPECT_EQ(c().incr("lead", 1), 8u);
    EXPECT_EQ(c().get("lead")->data, "8 ");
}

TEST_P(FakeVsReal, DeleteAndTouch) {
    ASSERT_EQ(c().set("k", "v"), Status::stored);
    EXPECT_EQ(c().touch("k", 100s), Status::touched);
    EXPECT_EQ(c().touch("absent", 100s), Status::not_found);
    EXPECT_EQ(c().del("k"), Status::deleted);
    EXPECT_EQ(c().del("k"), Status::not_found);
    EXPECT_FALSE(c().get("k"));
    EXPECT_EQ(c().touch("k", 100s), Status::not_found);
    EXPECT_FALSE(c().gat("k", 100s));
}

TEST_P(FakeVsReal, DeleteAll) {
    // One server each: one result, named after it, with del's statuses.
    ASSERT_EQ(c().set("k", "v"), Status::stored);
    auto first = c().delete_all("k");
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].server, c().async().server_name(0));
    EXPECT_FALSE(first[0].error);
    EXPECT_EQ(first[0].value, Status::deleted);
    EXPECT_FALSE(c().get("k"));
    auto again = c().delete_all("k");
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].value, Status::not_found);
}

TEST_P(FakeVsReal, TtlRelativeAbsoluteNegativeAndExpiry) {
    ASSERT_EQ(c().set("short", "x", 1s), Status::stored);
    ASSERT_EQ(c().set("kept", "y", 100s), Status::stored);
    ASSERT_EQ(c().set("forever", "z"), Status::stored);
    ASSERT_EQ(c().set("gat-refreshed", "g", 1s), Status::stored);
    ASSERT_EQ(c().set("touch-refreshed", "t", 1s), Status::stored);
    ASSERT_EQ(c().set("touch-shortened", "s", 0s), Status::stored);
    ASSERT_EQ(c().set("far", "f", folsom::Ttl{std::chrono::hours(24 * 31)}), Status::stored);
    ASSERT_EQ(c().set("far-gat", "f", 1s), Status::stored);
    EXPECT_EQ(c().gat("gat-refreshed", 100s)->data, "g");
    EXPECT_EQ(c().touch("touch-refreshed", 100s), Status::touched);
    EXPECT_EQ(c().touch("touch-shortened", 1s), Status::touched);
    EXPECT_TRUE(c().gat("far-gat", folsom::Ttl{std::chrono::hours(24 * 365)}));
    EXPECT_TRUE(c().get("far"));  // over 30 days goes out as an absolute time

    // A negative ttl stores an item that is already gone; on an existing one it expires it.
    EXPECT_EQ(c().set("gone", "z", folsom::Ttl{-1}), Status::stored);
    EXPECT_FALSE(c().get("gone"));
    ASSERT_EQ(c().set("touch-gone", "t"), Status::stored);
    EXPECT_EQ(c().touch("touch-gone", folsom::Ttl{-1}), Status::touched);
    EXPECT_FALSE(c().get("touch-gone"));
    ASSERT_EQ(c().set("gat-gone", "g"), Status::stored);
    EXPECT_EQ(c().gat("gat-gone", folsom::Ttl{-1})->data, "g");  // read, then expired
    EXPECT_FALSE(c().get("gat-gone"));
    EXPECT_EQ(c().store(StoreMode::add, "gone", "again", 0s), Status::stored);  // expired = absent

    pass(2100ms);  // memcached's clock ticks once a second: 1 s items are surely gone
    EXPECT_FALSE(c().get("short"));
    EXPECT_EQ(c().touch("short", 100s), Status::not_found);
    EXPECT_EQ(c().incr("short", 1), std::nullopt);
    EXPECT_EQ(c().store(StoreMode::append, "short", "x", 0s), Status::not_stored);
    EXPECT_FALSE(c().get("touch-shortened"));
    EXPECT_EQ(c().get("kept")->data, "y");
    EXPECT_EQ(c().get("forever")->data, "z");
    EXPECT_EQ(c().get("gat-refreshed")->data, "g");
    EXPECT_EQ(c().get("touch-refreshed")->data, "t");
    EXPECT_EQ(c().get("far")->data, "f");
    EXPECT_EQ(c().get("far-gat")->data, "f");
    EXPECT_EQ(c().get("gone")->data, "again");
}

TEST_P(FakeVsReal, FlushAllNowAndWithDelay) {
    ASSERT_EQ(c().set("a", "1"), Status::stored);
    auto flushed = c().flush_all();
    ASSERT_EQ(flushed.size(), 1u);
    EXPECT_FALSE(flushed[0].error);
    EXPECT_EQ(flushed[0].value, Status::ok);
    EXPECT_FALSE(c().get("a"));
    EXPECT_EQ(c().store(StoreMode::add, "a", "2", 0s), Status::stored);
    EXPECT_EQ(c().get("a")->data, "2");

    // A delayed flush keeps items until it is due. memcached's one-second clock makes it bite
    // up to two ticks early (measured: 1.2 to 1.8 s into a 3 s delay), so 3 s leaves a full
    // second for the check that "b" is still there.
    ASSERT_EQ(c().set("b", "1"), Status::stored);
    ASSERT_EQ(c().flush_all(3s)[0].value, Status::ok);
    EXPECT_TRUE(c().get("b"));
    ASSERT_EQ(c().set("during", "d"), Status::stored);  // also flushed when the delay is up
    pass(3100ms);
    EXPECT_FALSE(c().get("a"));
    EXPECT_FALSE(c().get("b"));
    EXPECT_FALSE(c().get("during"));
    ASSERT_EQ(c().set("after", "x"), Status::stored);
    EXPECT_EQ(c().get("after")->data, "x");
}

TEST_P(FakeVsReal, MultiGetOrderDuplicatesCasAndTouch) {
    ASSERT_EQ(c().set("a", "1", 0s, 1), Status::stored);
    ASSERT_EQ(c().set("c", "3", 0s, 3), Status::stored);
    std::vector<std::string_view> keys = {"a", "b", "c", "a", "missing"};
    auto r = c().get_multi(keys);
    ASSERT_EQ(r.values.size(), keys.size());
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.values[0], (folsom::Value{"1", 1, 0}));
    EXPECT_FALSE(r.values[1]);
    EXPECT_EQ(r.values[2], (folsom::Value{"3", 3, 0}));
    EXPECT_EQ(r.values[3], (folsom::Value{"1", 1, 0}));
    EXPECT_FALSE(r.values[4]);
    EXPECT_EQ(r.to_map(keys).size(), 2u);

    auto s = c().async().gets_multi(keys, asio::use_future).get();
    ASSERT_EQ(s.values.size(), keys.size());
    ASSERT_TRUE(s.values[0] && s.values[2] && s.values[3]);
    EXPECT_NE(s.values[0]->cas, 0u);
    EXPECT_EQ(s.values[0]->cas, s.values[3]->cas);
    EXPECT_NE(s.values[0]->cas, s.values[2]->cas);

    auto t = c().async().gat_multi(keys, folsom::Ttl{-1}, asio::use_future).get();
    ASSERT_EQ(t.values.size(), keys.size());
    EXPECT_TRUE(t.values[0] && t.values[2]);
    EXPECT_FALSE(t.values[3]);  // the first "a" expired it
    EXPECT_FALSE(c().get("a"));
    EXPECT_FALSE(c().get("c"));

    // Many keys (several parts of one server) keep their order.
    std::vector<std::string> many;
    for (int i = 0; i < 3000; ++i)
        many.push_back("key-with-a-longish-name-" + std::to_string(i));
    for (int i = 0; i < 3000; i += 2)
        ASSERT_EQ(c().set(many[i], std::to_string(i)), Status::stored);
    std::vector<std::string_view> views(many.begin(), many.end());
    auto big = c().get_multi(views);
    ASSERT_EQ(big.values.size(), many.size());
    for (int i = 0; i < 3000; ++i) {
        if (i % 2 == 0) {
            ASSERT_TRUE(big.values[i]) << i;
            EXPECT_EQ(big.values[i]->data, std::to_string(i));
        } else {
            EXPECT_FALSE(big.values[i]) << i;
        }
    }
    EXPECT_TRUE(c().get_multi({}).values.empty());
}

TEST_P(FakeVsReal, BinarySafeValuesAndSizes) {
    std::string all_bytes;
    for (int b = 0; b < 256; ++b)
        all_bytes.push_back(static_cast<char>(b));
    all_bytes += "\r\nEND\r\nVALUE x 0 1\r\n";  // framing look-alikes inside the value
    const std::string sizes[] = {std::string(), std::string(1, '\0'), all_bytes,
                                 std::string(100 * 1024, 'y'), std::string(1024 * 1024, 'z')};
    int i = 0;
    for (const auto& value : sizes) {
        const std::string key = "size" + std::to_string(i++);
        ASSERT_EQ(c().set(key, value), Status::stored) << value.size();
        auto v = c().get(key);
        ASSERT_TRUE(v) << value.size();
        EXPECT_EQ(v->data, value) << value.size();
    }
    ASSERT_EQ(c().store(StoreMode::append, "size2", all_bytes, 0s), Status::stored);
    EXPECT_EQ(c().get("size2")->data, all_bytes + all_bytes);
    EXPECT_EQ(error_of([&] { c().set("big", std::string(1024 * 1024 + 1, 'x')); }),
              errc::value_too_large);
    EXPECT_FALSE(c().get("big"));
    // A moved-in value (kept by the request, not copied) reads back the same.
    std::string moved(300 * 1024, 'q');
    ASSERT_EQ(c().set("moved", std::move(moved)), Status::stored);
    EXPECT_EQ(c().get("moved")->data, std::string(300 * 1024, 'q'));
}

TEST_P(FakeVsReal, BadInputIsRefused) {
    const std::string bad_keys[] = {"",         std::string(251, 'k'), "has space",
                                    "cr\rlf",   "new\nline",           std::string("nul\0b", 5),
                                    "tab\tkey", "inject\r\nflush_all", "del\x7f"};
    for (const auto& k : bad_keys) {
        SCOPED_TRACE(k.size());
        EXPECT_EQ(error_of([&] { c().set(k, "v"); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().get(k); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().gat(k, 1s); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().del(k); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().incr(k, 1); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().touch(k, 1s); }), errc::invalid_key);
        EXPECT_EQ(error_of([&] { c().delete_all(k); }), errc::invalid_key);
        std::vector<std::string_view> keys = {"fine", k};
        EXPECT_EQ(error_of([&] { c().get_multi(keys); }), errc::invalid_key);
    }
    EXPECT_EQ(c().set(std::string(250, 'k'), "longest"), Status::stored);
    EXPECT_EQ(c().get(std::string(250, 'k'))->data, "longest");
    EXPECT_EQ(c().set("utf8-\xc3\xa9", "high bytes are fine"), Status::stored);
    EXPECT_EQ(error_of([&] { c().stats("two  words"); }), errc::invalid_argument);
    EXPECT_EQ(c().async().outstanding(), 0u);
}

TEST_P(FakeVsReal, StatsCountersVersion) {
    const auto before = counters();
    ASSERT_EQ(c().set("a", "1"), Status::stored);
    ASSERT_EQ(c().set("b", "2"), Status::stored);
    ASSERT_EQ(c().store(StoreMode::add, "a", "x", 0s), Status::not_stored);
    EXPECT_TRUE(c().get("a"));
    EXPECT_FALSE(c().get("nope"));
    std::vector<std::string_view> keys = {"a", "b", "nope"};
    c().get_multi(keys);
    c().gat("a", 100s);
    c().gat("nope", 100s);
    c().touch("b", 100s);
    c().touch("nope", 100s);
    c().incr("nope", 1);
    ASSERT_EQ(c().set("n", "1"), Status::stored);
    c().incr("n", 1);
    c().decr("n", 1);
    c().decr("nope", 1);
    const auto cas = c().gets("a")->cas;
    c().cas("a", "y", cas + 100);
    c().cas("a", "y", cas);
    c().cas("nope", "y", cas);
    c().del("b");
    c().del("b");
    ASSERT_EQ(c().set("gone", "z", folsom::Ttl{-1}), Status::stored);
    EXPECT_FALSE(c().get("gone"));
    const auto after = counters();
    const std::map<std::string, long long> expected = {
        {"cmd_get", 7},     {"get_hits", 4},   {"get_misses", 3},   {"cmd_set", 8},
        {"cmd_touch", 4},   {"touch_hits", 2}, {"touch_misses", 2}, {"incr_hits", 1},
        {"incr_misses", 1}, {"decr_hits", 1},  {"decr_misses", 1},  {"cas_hits", 1},
        {"cas_misses", 1},  {"cas_badval", 1}, {"delete_hits", 1},  {"delete_misses", 1},
        {"curr_items", 2},  {"cmd_flush", 0},
    };
    for (const auto& [name, delta] : expected) {
        ASSERT_TRUE(before.count(name) && after.count(name)) << name;
        EXPECT_EQ(after.at(name) - before.at(name), delta) << name;
    }
    // The already-expired "gone" is a miss either way, but memcached counts it
    // as get_expired only if its LRU crawler has not reclaimed the item first,
    // a race a slow (sanitized) build loses now and then.
    ASSERT_TRUE(before.count("get_expired") && after.count("get_expired"));
    const auto expired = after.at("get_expired") - before.at("get_expired");
    EXPECT_TRUE(expired == 0 || expired == 1) << expired;

    auto settings = c().stats("settings");
    ASSERT_EQ(settings.size(), 1u);
    EXPECT_FALSE(settings[0].value.empty());
    EXPECT_EQ(error_of([&] { c().stats("no-such-group"); }), errc::unsupported);
    auto versions = c().version();
    ASSERT_EQ(versions.size(), 1u);
    EXPECT_FALSE(versions[0].error);
    EXPECT_FALSE(versions[0].value.empty());
    EXPECT_EQ(versions[0].value.find_first_of("\r\n "), std::string::npos);
    EXPECT_EQ(c().async().server_count(), 1u);
    EXPECT_EQ(c().async().server_name(0), real() ? server_->address() : "fake:0");
}

TEST_P(FakeVsReal, ZeroCopyViewGet) {
    ASSERT_EQ(c().set("view", "viewed", 0s, 3), Status::stored);
    std::promise<std::string> hit;
    c().async().get_view("view", [&](std::error_code ec, const folsom::ValueView* v) {
        EXPECT_FALSE(ec);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->flags, 3u);
        EXPECT_EQ(v->key, "view");
        hit.set_value(std::string(v->data));
    });
    EXPECT_EQ(hit.get_future().get(), "viewed");
    std::promise<bool> miss;
    c().async().get_view("absent", [&](std::error_code ec, const folsom::ValueView* v) {
        miss.set_value(!ec && v == nullptr);
    });
    EXPECT_TRUE(miss.get_future().get());
}

TEST_P(FakeVsReal, OverloadAndShutdown) {
    asio::io_context io;
    auto client = make_client(io.get_executor(), 2);
    // Nothing runs until io does, so the first two hold both slots and the third overflows.
    auto first = client.set("k", "v", 0s, asio::use_future);
    auto second = client.get("k", asio::use_future);
    auto third = client.get("k", asio::use_future);
    auto work = asio::make_work_guard(io);  // the closed completions below are posted later
    std::thread runner([&] { io.run_for(5s); });
    EXPECT_EQ(first.get(), Status::stored);
    EXPECT_EQ(second.get()->data, "v");
    EXPECT_EQ(error_of([&] { third.get(); }), errc::overloaded);
    client.shutdown();
    EXPECT_EQ(error_of([&] { client.get("k", asio::use_future).get(); }), errc::closed);
    EXPECT_EQ(error_of([&] { client.set("k", "v", 0s, asio::use_future).get(); }), errc::closed);
    work.reset();
    io.stop();
    runner.join();
    EXPECT_EQ(client.outstanding(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, FakeVsReal, ::testing::Values(Backend::fake, Backend::real),
                         backend_name);

}  // namespace
