// Options::binary_keys against a real memcached (1.6.18 speaks meta 'b'): keys of every byte
// value, 0..255, stored, read one by one, by multi-get (owning and view) under their raw
// bytes, touched, counted and deleted; 186 bytes fit and 187 are refused before sending; the
// item is the one a text-key client sees (memcached stores the decoded bytes); placement
// hashes the raw bytes; the items are those raw binary-protocol keys name; key_prefix and
// routes; and the refusal over ascii and binary.
#include "folsom/blocking_client.hpp"
#include "folsom/cache_recipes.hpp"
#include "folsom/cluster/continuum.hpp"
#include "folsom/protocol/base64.hpp"

#include "support/memcached_server.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;

folsom::Options binary_options(const folsom::test::MemcachedServer& server) {
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = folsom::Protocol::meta;
    o.binary_keys = true;
    return o;
}

/// One key per byte value: the byte alone.
std::vector<std::string> one_byte_keys() {
    std::vector<std::string> keys;
    for (int b = 0; b < 256; ++b)
        keys.emplace_back(1, static_cast<char>(b));
    return keys;
}

std::string value_of(std::size_t i) {
    return "value of " + std::to_string(i);
}

std::vector<std::string_view> views(const std::vector<std::string>& keys) {
    return {keys.begin(), keys.end()};
}

class BinaryKeys : public ::testing::Test {
  protected:
    folsom::test::MemcachedServer server_;
};

TEST_F(BinaryKeys, KeysOfEveryByteValueRoundTripOneByOneAndByMultiGet) {
    folsom::BlockingClient c(binary_options(server_));
    const auto keys = one_byte_keys();
    for (std::size_t i = 0; i < keys.size(); ++i)
        ASSERT_EQ(c.set(keys[i], value_of(i), 60s, static_cast<std::uint32_t>(i)), Status::stored)
            << i;
    // 256 distinct items (none collapsed into another), each with its own value.
    for (std::size_t i = 0; i < keys.size(); ++i) {
        auto v = c.get(keys[i]);
        ASSERT_TRUE(v) << i;
        EXPECT_EQ(v->data, value_of(i));
        EXPECT_EQ(v->flags, i);
    }
    // The same bytes also as longer keys: the byte between text, and keys of 186 bytes.
    std::vector<std::string> mixed = keys;
    for (int b = 0; b < 256; ++b)
        mixed.push_back("k" + std::string(1, static_cast<char>(b)) + "\r\n end");
    mixed.push_back(std::string(186, '\0'));
    mixed.push_back(std::string(186, '\xff'));
    mixed.push_back(std::string(186, ' '));
    for (std::size_t i = keys.size(); i < mixed.size(); ++i)
        ASSERT_EQ(c.set(mixed[i], value_of(i)), Status::stored) << i;
    // Misses between the hits, which must not shift anything.
    mixed.push_back(std::string("never\0set", 9));
    mixed.push_back(std::string(185, '\n'));

    const auto kv = views(mixed);
    const folsom::MultiGetResult r = c.get_multi(kv);
    ASSERT_TRUE(r.complete());
    ASSERT_EQ(r.values.size(), mixed.size());
    for (std::size_t i = 0; i < mixed.size(); ++i) {
        if (i + 2 >= mixed.size()) {
            EXPECT_FALSE(r.values[i]) << i;
            continue;
        }
        ASSERT_TRUE(r.values[i]) << i;
        EXPECT_EQ(r.values[i]->data, value_of(i)) << i;
    }
    // Keyed by the caller's raw bytes.
    const auto map = r.to_map(kv);
    EXPECT_EQ(map.size(), mixed.size() - 2);
    EXPECT_EQ(map.at(std::string(1, '\0')).data, value_of(0));
    EXPECT_EQ(map.at(std::string(1, '\n')).data, value_of('\n'));
}

TEST_F(BinaryKeys, MultiGetViewsGetsAndGatHandOverTheRawKey) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread t([&] { io.run(); });
    {
        folsom::Client c = folsom::Client::connect(io.get_executor(), binary_options(server_));
        const auto keys = one_byte_keys();
        for (std::size_t i = 0; i < keys.size(); ++i)
            ASSERT_EQ(c.set(keys[i], value_of(i), 60s, asio::use_future).get(), Status::stored);
        const auto kv = views(keys);
        // The view hands over the server's key decoded: the caller's bytes at the caller's index.
        std::vector<std::string> seen(keys.size());
        std::vector<int> calls(keys.size());
        const auto res = c.get_multi_view(
                              kv,
                              [&](std::size_t i, const folsom::ValueView& v) {
                                  ++calls.at(i);
                                  seen.at(i) = std::string(v.key) + "=" + std::string(v.data);
                              },
                              asio::use_future)
                             .get();
        EXPECT_EQ(res.hits, keys.size());
        for (std::size_t i = 0; i < keys.size(); ++i) {
            EXPECT_EQ(calls[i], 1) << i;
            EXPECT_EQ(seen[i], keys[i] + "=" + value_of(i)) << i;
        }
        // gets_multi: cas values that a cas then uses, on binary keys.
        const auto g = c.gets_multi(kv, asio::use_future).get();
        for (std::size_t i = 0; i < keys.size(); ++i) {
            ASSERT_TRUE(g.values[i]) << i;
            EXPECT_NE(g.values[i]->cas, 0u);
        }
        EXPECT_EQ(c.cas(keys[7], "new", g.values[7]->cas, 60s, asio::use_future).get(),
                  Status::stored);
        EXPECT_EQ(c.cas(keys[7], "newer", g.values[7]->cas, 60s, asio::use_future).get(),
                  Status::exists);
        // gat_multi and gat.
        const auto touched = c.gat_multi(kv, 120s, asio::use_future).get();
        for (std::size_t i = 0; i < keys.size(); ++i)
            ASSERT_TRUE(touched.values[i]) << i;
        auto one = c.gat(keys[255], 120s, asio::use_future).get();
        ASSERT_TRUE(one);
        EXPECT_EQ(one->data, value_of(255));
        // The stampede recipe (mg with N, ms with the win's cas) on a binary key.
        const std::string recipe_key("\0lease\r\n\xff", 10);
        auto fill = [](folsom::FillDone done) { done({}, "filled"); };
        const folsom::CacheResult first =
            folsom::get_or_fill(c, recipe_key, {}, fill, asio::use_future).get();
        EXPECT_EQ(first.source, folsom::CacheSource::filled);
        EXPECT_TRUE(first.stored);
        const folsom::CacheResult second =
            folsom::get_or_fill(c, recipe_key, {}, fill, asio::use_future).get();
        EXPECT_EQ(second.source, folsom::CacheSource::hit);
        ASSERT_TRUE(second.value);
        EXPECT_EQ(second.value->data, "filled");
    }
    work.reset();
    t.join();
}

TEST_F(BinaryKeys, TouchCountersAppendDeleteAndMetaCallsOnEveryByteValue) {
    folsom::BlockingClient c(binary_options(server_));
    const auto keys = one_byte_keys();
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::string& k = keys[i];
        ASSERT_EQ(c.set(k, "10"), Status::stored) << i;
        EXPECT_EQ(c.touch(k, 60s), Status::touched) << i;
        EXPECT_EQ(c.store(folsom::StoreMode::prepend, k, "1", {}), Status::stored) << i;
        // (From 110 up, so that no decr shortens the number: memcached pads it with spaces.)
        EXPECT_EQ(c.incr(k, i), 110 + i) << i;
        EXPECT_EQ(c.decr(k, 3), 107 + i) << i;
        EXPECT_EQ(c.store(folsom::StoreMode::append, k, "x", {}), Status::stored) << i;
        EXPECT_EQ(c.get(k)->data, std::to_string(107 + i) + "x") << i;
        EXPECT_EQ(c.del(k), Status::deleted) << i;
        EXPECT_FALSE(c.get(k)) << i;
        EXPECT_EQ(c.touch(k, 60s), Status::not_found) << i;
        EXPECT_EQ(c.del(k), Status::not_found) << i;
    }
    // A counter created by incr with an initial value, and the meta calls.
    const std::string counter("\0\r\n", 3);
    EXPECT_EQ(c.incr(counter, 1, 41, 60s), 41u);
    EXPECT_EQ(c.incr(counter, 1), 42u);
    const std::string k("\xfe\xff \x01", 4);
    EXPECT_EQ(c.meta_set(k, "m", 60s), Status::stored);
    const folsom::MetaGetResult m = c.meta_get(k);
    ASSERT_TRUE(m.hit());
    EXPECT_EQ(m.value->data, "m");
    folsom::MetaDeleteOptions stale;
    stale.invalidate = true;
    EXPECT_EQ(c.meta_delete(k, stale), Status::deleted);
    EXPECT_TRUE(c.meta_get(k).stale);
    // delete_all takes a binary key too.
    ASSERT_EQ(c.set(counter, "v"), Status::stored);
    const auto all = c.delete_all(counter);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].value, Status::deleted);
}

TEST_F(BinaryKeys, KeysOutside1To186BytesAreRefusedBeforeSending) {
    folsom::BlockingClient c(binary_options(server_));
    const std::string longest(186, '\x80');
    const std::string too_long(187, '\x80');
    EXPECT_EQ(c.set(longest, "fits"), Status::stored);
    EXPECT_EQ(c.get(longest)->data, "fits");
    auto refused = [](auto&& call) {
        try {
            call();
        } catch (const std::system_error& e) {
            return e.code() == errc::invalid_key;
        }
        return false;
    };
    EXPECT_TRUE(refused([&] { c.set(too_long, "no"); }));
    EXPECT_TRUE(refused([&] { c.get(too_long); }));
    EXPECT_TRUE(refused([&] { c.del(""); }));
    EXPECT_TRUE(refused([&] { c.incr(too_long, 1); }));
    EXPECT_TRUE(refused([&] { c.delete_all(too_long); }));
    // The multi-get's one part fails as a whole, so the call does.
    const std::vector<std::string_view> keys{longest, too_long};
    EXPECT_TRUE(refused([&] { c.get_multi(keys); }));
    // Nothing of it reached the server: it still answers in step.
    EXPECT_EQ(c.get(longest)->data, "fits");
}

TEST_F(BinaryKeys, ATextKeyNamesTheSameItemWithOrWithoutBinaryKeys) {
    // memcached stores the decoded bytes: what one client writes under "plain" the other reads,
    // over meta and over ascii. (A check of the base64 form independent of our decoder.)
    folsom::BlockingClient binary(binary_options(server_));
    folsom::Options text_options;
    text_options.servers = {server_.address()};
    folsom::BlockingClient text(text_options);
    ASSERT_EQ(binary.set("plain", "from binary"), Status::stored);
    EXPECT_EQ(text.get("plain")->data, "from binary");
    ASSERT_EQ(text.set("other", "from text"), Status::stored);
    EXPECT_EQ(binary.get("other")->data, "from text");
    // A multi-get over an item stored with and one without b (keys returned differently).
    const std::vector<std::string_view> keys{"plain", "other"};
    const auto r = binary.get_multi(keys);
    ASSERT_TRUE(r.values[0] && r.values[1]);
    EXPECT_EQ(r.values[0]->data, "from binary");
    EXPECT_EQ(r.values[1]->data, "from text");
}

TEST_F(BinaryKeys, TheSameItemsAsRawKeysOverTheBinaryProtocol) {
    // memcached stores the raw bytes whether they came in base64 (meta b) or as they are
    // (binary protocol, Options::raw_binary_protocol_keys): each client reads what the other
    // wrote, for keys of every byte value.
    folsom::BlockingClient meta(binary_options(server_));
    folsom::Options raw_options;
    raw_options.servers = {server_.address()};
    raw_options.protocol = folsom::Protocol::binary;
    raw_options.raw_binary_protocol_keys = true;
    folsom::BlockingClient raw(raw_options);
    const auto keys = one_byte_keys();
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::string k = keys[i] + "\r\n";
        ASSERT_EQ(meta.set(k, "meta " + value_of(i)), Status::stored) << i;
        auto v = raw.get(k);
        ASSERT_TRUE(v) << i;
        EXPECT_EQ(v->data, "meta " + value_of(i));
        ASSERT_EQ(raw.set(k, "raw " + value_of(i)), Status::stored) << i;
        EXPECT_EQ(meta.get(k)->data, "raw " + value_of(i)) << i;
    }
}

TEST(BinaryKeysPlacement, PlacementHashesTheRawBytes) {
    asio::io_context io;  // never run: placement needs no connection
    folsom::Options o;
    o.protocol = folsom::Protocol::meta;
    o.binary_keys = true;
    o.servers = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"};
    o.connect_timeout = 100ms;
    folsom::Client c = folsom::Client::connect(io.get_executor(), o);
    std::vector<folsom::ServerAddress> addrs(3);
    for (int i = 0; i < 3; ++i)
        addrs[i] = folsom::ServerAddress{"127.0.0.1", static_cast<std::uint16_t>(i + 1), 1};
    const folsom::cluster::Continuum ring(addrs, o.distribution);
    int differs_from_base64 = 0;
    for (const std::string& k : one_byte_keys()) {
        EXPECT_EQ(c.server_for(k), ring.server_index(k));
        char b64[4];
        const std::size_t n = folsom::protocol::base64_encode(k, b64);
        differs_from_base64 += ring.server_index(std::string_view(b64, n)) != ring.server_index(k);
    }
    EXPECT_GT(differs_from_base64, 0);  // so the check above tells raw from base64 hashing
    c.shutdown();
    io.run_for(200ms);
}

TEST(BinaryKeysRefusal, AsciiAndBinaryProtocolsAreRefusedAtConnect) {
    asio::io_context io;
    for (auto p : {folsom::Protocol::ascii, folsom::Protocol::binary}) {
        folsom::Options o;
        o.servers = {"127.0.0.1:1"};
        o.protocol = p;
        o.binary_keys = true;
        try {
            folsom::Client::connect(io.get_executor(), o);
            ADD_FAILURE() << "connected with binary_keys over protocol " << int(p);
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::unsupported);
            EXPECT_NE(std::string(e.what()).find("binary_keys needs the meta protocol"),
                      std::string::npos)
                << e.what();
        }
    }
    // A route pool whose protocol is not meta, named by its JSON path.
    folsom::Options o;
    o.protocol = folsom::Protocol::meta;
    o.binary_keys = true;
    o.routes = folsom::RouteConfig{
        {folsom::PoolSpec{"A", {"127.0.0.1:1"}},
         [] {
             folsom::PoolSpec b{"B", {"127.0.0.1:2"}};
             b.protocol = folsom::Protocol::ascii;
             return b;
         }()},
        folsom::routes::all_sync({folsom::routes::pool("A"), folsom::routes::pool("B")})};
    try {
        folsom::Client::connect(io.get_executor(), o);
        ADD_FAILURE() << "connected with an ascii pool";
    } catch (const folsom::RouteConfigError& e) {
        EXPECT_EQ(e.path(), "pools.B.protocol");
    }
    // The key prefix follows the binary rules: any bytes, up to 185.
    folsom::Options p;
    p.servers = {"127.0.0.1:1"};
    p.protocol = folsom::Protocol::meta;
    p.binary_keys = true;
    p.key_prefix = std::string(186, '\0');
    EXPECT_THROW(folsom::Client::connect(io.get_executor(), p), std::system_error);
}

TEST(BinaryKeysRoutes, KeyPrefixAndPrefixSelectorWorkOnRawBytes) {
    folsom::test::MemcachedServer a;
    folsom::test::MemcachedServer b;
    folsom::Options o;
    o.protocol = folsom::Protocol::meta;
    o.binary_keys = true;
    const std::string ns("\x01ns \xff", 5);
    o.key_prefix = ns;
    const std::string selector("\x00\x01", 2);
    o.routes = folsom::RouteConfig{
        {folsom::PoolSpec{"A", {a.address()}}, folsom::PoolSpec{"B", {b.address()}}},
        folsom::routes::prefix_selector({{selector, folsom::routes::pool("A")}},
                                        folsom::routes::pool("B"))};
    folsom::BlockingClient routed(o);
    const std::string to_a = selector + "\r\nkey";
    const std::string to_b("\x02 key", 5);
    ASSERT_EQ(routed.set(to_a, "in A"), Status::stored);
    ASSERT_EQ(routed.set(to_b, "in B"), Status::stored);
    const std::vector<std::string_view> keys{to_a, to_b};
    const auto r = routed.get_multi(keys);
    ASSERT_TRUE(r.values[0] && r.values[1]);
    EXPECT_EQ(r.values[0]->data, "in A");
    EXPECT_EQ(r.values[1]->data, "in B");
    // On the servers: prefix + key, as one binary key, each in the pool its key selects.
    folsom::BlockingClient direct_a(binary_options(a));
    folsom::BlockingClient direct_b(binary_options(b));
    EXPECT_EQ(direct_a.get(ns + to_a)->data, "in A");
    EXPECT_FALSE(direct_a.get(ns + to_b));
    EXPECT_EQ(direct_b.get(ns + to_b)->data, "in B");
    // 180 + 5 bytes of prefix fit; 182 + 5 do not.
    EXPECT_EQ(routed.set(std::string(181, '\n'), "fits"), Status::stored);
    EXPECT_THROW(routed.set(std::string(182, '\n'), "no"), std::system_error);
}

}  // namespace
