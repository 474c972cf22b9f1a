// End to end over the binary and meta protocols against a real memcached: every client
// operation, including what only these protocols can do (stores with a cas, counters created
// with an initial value), plus the one thing the text protocol refuses.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::StoreMode;

class ClientProtocols : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = GetParam();
        return o;
    }
    folsom::test::MemcachedServer server_;
};

TEST_P(ClientProtocols, StoresAndRetrievals) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "v1", 60s, 42), Status::stored);
    auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "v1");
    EXPECT_EQ(v->flags, 42u);
    EXPECT_FALSE(c.get("absent"));

    auto g = c.gets("k");
    ASSERT_TRUE(g);
    ASSERT_NE(g->cas, 0u);
    EXPECT_EQ(c.cas("k", "v2", g->cas), Status::stored);
    EXPECT_EQ(c.cas("k", "v3", g->cas), Status::exists);
    EXPECT_EQ(c.cas("absent", "v", 1), Status::not_found);
    EXPECT_FALSE(c.gets("absent"));

    EXPECT_EQ(c.store(StoreMode::add, "k", "x", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::add, "new", "x", 0s), Status::stored);
    EXPECT_EQ(c.store(StoreMode::replace, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::replace, "new", "y", 0s, {9, 0}), Status::stored);
    EXPECT_EQ(c.get("new")->flags, 9u);
    EXPECT_EQ(c.store(StoreMode::append, "new", ">", 0s), Status::stored);
    EXPECT_EQ(c.store(StoreMode::prepend, "new", "<", 0s), Status::stored);
    auto n = c.get("new");
    EXPECT_EQ(n->data, "<y>");
    EXPECT_EQ(n->flags, 9u);  // append/prepend keep the flags
    EXPECT_EQ(c.store(StoreMode::append, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::prepend, "absent", "x", 0s), Status::not_stored);

    // Over binary and meta every store can carry a cas.
    const auto cas = c.gets("new")->cas;
    EXPECT_EQ(c.store(StoreMode::set, "new", "z", 0s, {0, cas + 1000}), Status::exists);
    EXPECT_EQ(c.store(StoreMode::append, "new", "!", 0s, {0, cas}), Status::stored);
    EXPECT_EQ(c.get("new")->data, "<y>!");
    EXPECT_EQ(c.store(StoreMode::replace, "absent", "x", 0s, {0, 5}), Status::not_found);

    EXPECT_EQ(c.del("new"), Status::deleted);
    EXPECT_EQ(c.del("new"), Status::not_found);
}

TEST_P(ClientProtocols, CountersWithAndWithoutInitialValue) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.incr("counter", 1), std::nullopt);  // no initial: never created
    EXPECT_EQ(c.decr("counter", 1), std::nullopt);
    EXPECT_FALSE(c.get("counter"));
    EXPECT_EQ(c.incr("counter", 5, 100, 0s), 100u);  // created with the initial value
    EXPECT_EQ(c.incr("counter", 5, 100, 0s), 105u);  // then incremented
    EXPECT_EQ(c.incr("counter", 1), 106u);
    EXPECT_EQ(c.decr("counter", 200), 0u);
    EXPECT_EQ(c.decr("down", 3, 7, 0s), 7u);
    EXPECT_EQ(c.decr("down", 3), 4u);
    EXPECT_EQ(c.get("down")->data, "4");
    ASSERT_EQ(c.set("text", "abc"), Status::stored);
    try {
        c.incr("text", 1);
        ADD_FAILURE() << "incremented a non-number";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::client_error);
    }
}

TEST_P(ClientProtocols, TouchAndGat) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("t", "v", 100s, 3), Status::stored);
    EXPECT_EQ(c.touch("t", 200s), Status::touched);
    EXPECT_EQ(c.touch("absent", 200s), Status::not_found);
    auto v = c.gat("t", 300s);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "v");
    EXPECT_EQ(v->flags, 3u);
    EXPECT_FALSE(c.gat("absent", 300s));
    auto s = c.async().gats("t", 300s, asio::use_future).get();
    ASSERT_TRUE(s);
    EXPECT_NE(s->cas, 0u);
    // An expired-at-once touch makes the item go away.
    EXPECT_EQ(c.touch("t", folsom::Ttl{-1}), Status::touched);
    EXPECT_FALSE(c.get("t"));
}

TEST_P(ClientProtocols, MultiGetOfAHundredKeysWithMisses) {
    folsom::BlockingClient c(options());
    std::vector<std::string> keys;
    for (int i = 0; i < 100; ++i)
        keys.push_back("mk" + std::to_string(i));
    for (int i = 0; i < 100; ++i)
        if (i % 4 != 0) {
            ASSERT_EQ(c.set(keys[i], "val" + std::to_string(i), 0s, i), Status::stored);
        }
    std::vector<std::string_view> views(keys.begin(), keys.end());

    auto r = c.get_multi(views);
    ASSERT_EQ(r.values.size(), 100u);
    EXPECT_TRUE(r.complete());
    for (int i = 0; i < 100; ++i) {
        if (i % 4 == 0) {
            EXPECT_FALSE(r.values[i]) << keys[i];
        } else {
            ASSERT_TRUE(r.values[i]) << keys[i];
            EXPECT_EQ(r.values[i]->data, "val" + std::to_string(i));
            EXPECT_EQ(r.values[i]->flags, static_cast<std::uint32_t>(i));
        }
    }

    auto with_cas = c.async().gets_multi(views, asio::use_future).get();
    for (int i = 1; i < 100; i += 4) {
        ASSERT_TRUE(with_cas.values[i]);
        EXPECT_EQ(with_cas.values[i]->cas, c.gets(keys[i])->cas);
    }
    auto touched = c.async().gat_multi(views, 500s, asio::use_future).get();
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(touched.values[i].has_value(), i % 4 != 0);

    // Many multi-gets in flight at once on one connection stay apart.
    std::vector<std::future<folsom::MultiGetResult>> futures;
    for (int round = 0; round < 20; ++round)
        futures.push_back(c.async().get_multi(views, asio::use_future));
    for (auto& f : futures) {
        auto m = f.get();
        for (int i = 0; i < 100; ++i)
            EXPECT_EQ(m.values[i].has_value(), i % 4 != 0);
    }
}

TEST_P(ClientProtocols, StatsVersionFlush) {
    folsom::BlockingClient c(options());
    auto stats = c.stats();
    ASSERT_EQ(stats.size(), 1u);
    bool saw_pid = false;
    for (auto& [name, value] : stats[0].value)
        if (name == "pid") saw_pid = value == std::to_string(server_.pid());
    EXPECT_TRUE(saw_pid);
    auto settings = c.stats("settings");
    ASSERT_EQ(settings.size(), 1u);
    EXPECT_FALSE(settings[0].error);
    EXPECT_FALSE(settings[0].value.empty());

    auto versions = c.version();
    ASSERT_EQ(versions.size(), 1u);
    EXPECT_FALSE(versions[0].error);
    EXPECT_EQ(versions[0].value.rfind("1.", 0), 0u) << versions[0].value;

    ASSERT_EQ(c.set("f", "v"), Status::stored);
    auto flushed = c.flush_all();
    ASSERT_EQ(flushed.size(), 1u);
    EXPECT_FALSE(flushed[0].error);
    EXPECT_EQ(flushed[0].value, Status::ok);
    EXPECT_FALSE(c.get("f"));
    // The connection is still in step after the classic commands (meta) / STAT stream (binary).
    EXPECT_EQ(c.set("after", "ok"), Status::stored);
    EXPECT_EQ(c.get("after")->data, "ok");
}

INSTANTIATE_TEST_SUITE_P(Protocols, ClientProtocols,
                         ::testing::Values(folsom::Protocol::binary, folsom::Protocol::meta),
                         folsom::test::protocol_name);

// The text protocol cannot create a counter: refused before sending, the connection unharmed.
TEST(ClientAsciiLimits, CounterWithInitialValueIsUnsupported) {
    folsom::test::MemcachedServer server;
    folsom::Options o;
    o.servers = {server.address()};
    folsom::BlockingClient c(o);
    try {
        c.incr("counter", 1, 10, 0s);
        ADD_FAILURE() << "ascii accepted an initial value";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::unsupported);
    }
    EXPECT_EQ(c.set("k", "v"), Status::stored);
}

// Options::raw_binary_protocol_keys: over binary, keys of any bytes (what libmemcached sends
// there) reach memcached and come back as they were; the length limits still hold, and the
// default and the other protocols keep the text rules.
TEST(ClientBinaryRawKeys, KeysOfAnyBytesRoundTripOnlyWhenAsked) {
    folsom::test::MemcachedServer server;
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = folsom::Protocol::binary;
    const auto refused = [](auto&& call, std::error_code want) {
        try {
            call();
            return false;
        } catch (const std::system_error& e) {
            return e.code() == want;
        }
    };
    {
        folsom::BlockingClient checked(o);
        EXPECT_TRUE(refused([&] { checked.set("a key with spaces", "v"); },
                            folsom::make_error_code(errc::invalid_key)));
    }
    o.raw_binary_protocol_keys = true;
    folsom::BlockingClient c(o);
    const std::vector<std::string> keys = {
        "a key with spaces", std::string("\0\x01", 2), "tab\tand\r\nnewline",
        "replacement \xef\xbf\xbd and \xf0\x9f\x92\xa3", std::string(250, ' ')};
    for (std::size_t i = 0; i < keys.size(); ++i)
        ASSERT_EQ(c.set(keys[i], "v" + std::to_string(i)), Status::stored) << i;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        auto v = c.get(keys[i]);
        ASSERT_TRUE(v) << i;
        EXPECT_EQ(v->data, "v" + std::to_string(i));
    }
    std::vector<std::string_view> views(keys.begin(), keys.end());
    views.push_back("absent key");
    auto r = c.get_multi(views);
    ASSERT_EQ(r.values.size(), keys.size() + 1);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        ASSERT_TRUE(r.values[i]) << i;
        EXPECT_EQ(r.values[i]->data, "v" + std::to_string(i));
    }
    EXPECT_FALSE(r.values.back());
    EXPECT_EQ(c.del(keys[0]), Status::deleted);
    EXPECT_FALSE(c.get(keys[0]));
    // Lengths are still checked before anything is sent.
    EXPECT_TRUE(refused([&] { c.set(std::string(251, 'k'), "v"); },
                        folsom::make_error_code(errc::invalid_key)));
    EXPECT_TRUE(refused([&] { c.get(""); }, folsom::make_error_code(errc::invalid_key)));
    EXPECT_EQ(c.get(keys[1])->data, "v1");  // the connection is unharmed
    // Only the binary protocol carries such keys.
    for (folsom::Protocol p : {folsom::Protocol::ascii, folsom::Protocol::meta}) {
        o.protocol = p;
        EXPECT_TRUE(refused([&] { folsom::BlockingClient other(o); },
                            folsom::make_error_code(errc::invalid_argument)))
            << static_cast<int>(p);
    }
}

}  // namespace
