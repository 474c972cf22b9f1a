// Options::key_prefix against real memcached, over every protocol: what the server stores is
// the prefixed key (checked with raw requests, not through the client), the caller only ever
// sees its own keys, the prefix counts toward the key limit, and bad prefixes are refused at
// connect. Across three servers, keys land where libmemcached with the same namespace puts
// them (with and without MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY), and libmemcached itself
// reads every value back.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::MemcachedServer;
using folsom::test::raw_request;

bool server_has(std::uint16_t port, const std::string& key, const std::string& value = {}) {
    const std::string reply = raw_request(port, "get " + key + "\r\n", "END\r\n");
    if (reply.find("VALUE " + key + " ") == std::string::npos) return false;
    return value.empty() || reply.find("\r\n" + value + "\r\n") != std::string::npos;
}

class KeyPrefix : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options(std::string prefix = "app:") const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = GetParam();
        o.key_prefix = std::move(prefix);
        return o;
    }
    MemcachedServer server_;
};

TEST_P(KeyPrefix, TheServerStoresThePrefixedKey) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("user:1", "alice"), Status::stored);
    EXPECT_TRUE(server_has(server_.port(), "app:user:1", "alice"));
    EXPECT_FALSE(server_has(server_.port(), "user:1"));
    auto v = c.get("user:1");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "alice");

    // A client without the prefix sees the raw key, and the prefixed client cannot see its.
    folsom::BlockingClient plain(options(""));
    ASSERT_EQ(plain.set("user:1", "unprefixed"), Status::stored);
    EXPECT_EQ(plain.get("app:user:1")->data, "alice");
    EXPECT_EQ(c.get("user:1")->data, "alice");
    // Two namespaces on one server do not collide.
    folsom::BlockingClient other(options("other:"));
    EXPECT_FALSE(other.get("user:1"));
}

TEST_P(KeyPrefix, EveryKeyedOperationIsPrefixed) {
    folsom::BlockingClient c(options());
    const auto port = server_.port();
    EXPECT_EQ(c.store(folsom::StoreMode::add, "k", "a", 0s), Status::stored);
    EXPECT_TRUE(server_has(port, "app:k", "a"));
    EXPECT_EQ(c.store(folsom::StoreMode::replace, "k", "b", 0s), Status::stored);
    EXPECT_EQ(c.store(folsom::StoreMode::append, "k", ">", 0s), Status::stored);
    EXPECT_EQ(c.store(folsom::StoreMode::prepend, "k", "<", 0s), Status::stored);
    EXPECT_TRUE(server_has(port, "app:k", "<b>"));
    auto g = c.gets("k");
    ASSERT_TRUE(g);
    EXPECT_EQ(c.cas("k", "c", g->cas), Status::stored);
    EXPECT_TRUE(server_has(port, "app:k", "c"));
    EXPECT_EQ(c.gat("k", 100s)->data, "c");
    EXPECT_EQ(c.async().touch("k", 100s, asio::use_future).get(), Status::touched);
    EXPECT_EQ(c.set("n", "5"), Status::stored);
    EXPECT_EQ(c.incr("n", 2), 7u);
    EXPECT_EQ(c.decr("n", 1), 6u);
    EXPECT_TRUE(server_has(port, "app:n", "6"));
    EXPECT_EQ(c.del("k"), Status::deleted);
    EXPECT_FALSE(server_has(port, "app:k"));
    EXPECT_EQ(c.del("k"), Status::not_found);
}

TEST_P(KeyPrefix, MultiGetResultsAreKeyedWithoutThePrefix) {
    folsom::BlockingClient c(options());
    std::vector<std::string> keys;
    for (int i = 0; i < 30; ++i) {
        keys.push_back("item:" + std::to_string(i));
        if (i % 2 == 0) {
            ASSERT_EQ(c.set(keys.back(), "value " + std::to_string(i)), Status::stored);
        }
    }
    // Decoys under the unprefixed names must not be picked up.
    folsom::BlockingClient plain(options(""));
    ASSERT_EQ(plain.set("item:1", "decoy"), Status::stored);
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    auto r = c.get_multi(views);
    ASSERT_TRUE(r.complete());
    for (int i = 0; i < 30; ++i) {
        if (i % 2 == 0) {
            ASSERT_TRUE(r.values[i]) << i;
            EXPECT_EQ(r.values[i]->data, "value " + std::to_string(i));
        } else {
            EXPECT_FALSE(r.values[i]) << i;
        }
    }
    const auto m = r.to_map(views);
    EXPECT_EQ(m.size(), 15u);
    EXPECT_TRUE(m.contains("item:0"));
    EXPECT_FALSE(m.contains("app:item:0"));

    // The zero-copy view names the caller's key too.
    std::promise<std::string> seen;
    c.async().get_view("item:4", [&](std::error_code ec, const folsom::ValueView* v) {
        seen.set_value(ec || !v ? "none" : std::string(v->key) + "=" + std::string(v->data));
    });
    // (A single meta get does not ask the server to echo the key: the view's key is empty.)
    EXPECT_EQ(seen.get_future().get(),
              GetParam() == folsom::Protocol::meta ? "=value 4" : "item:4=value 4");
}

TEST_P(KeyPrefix, LongPrefixesKeepMultiGetLinesWithinTheServersLimits) {
    // memcached refuses text command lines over 2048 bytes other than get/gets: a gat of many
    // keys must be cut into parts by the length of the keys as sent, prefix included.
    const std::string prefix(200, 'p');
    folsom::BlockingClient c(options(prefix));
    std::vector<std::string> keys;
    for (int i = 0; i < 400; ++i) {
        keys.push_back("k" + std::to_string(i));
        ASSERT_EQ(c.set(keys.back(), "v" + std::to_string(i)), Status::stored);
    }
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    for (bool touch : {false, true}) {
        auto r = touch ? c.async().gat_multi(views, 100s, asio::use_future).get()
                       : c.async().get_multi(views, asio::use_future).get();
        ASSERT_TRUE(r.complete()) << (touch ? "gat: " : "get: ") << r.errors.front().message();
        for (int i = 0; i < 400; ++i) {
            ASSERT_TRUE(r.values[i]) << i;
            EXPECT_EQ(r.values[i]->data, "v" + std::to_string(i));
        }
    }
}

TEST_P(KeyPrefix, ThePrefixCountsTowardTheKeyLimit) {
    folsom::BlockingClient c(options());  // "app:" is 4 bytes
    const std::string fits(246, 'k');     // 250 with the prefix
    const std::string too_long(247, 'k');
    EXPECT_EQ(c.set(fits, "v"), Status::stored);
    EXPECT_TRUE(server_has(server_.port(), "app:" + fits, "v"));
    try {
        c.set(too_long, "v");
        ADD_FAILURE() << "a 251-byte key was sent";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);
    }
    try {
        c.get(too_long);
        ADD_FAILURE() << "a 251-byte key was sent";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);
    }
    const std::string_view keys[] = {"short", too_long};
    auto r = c.async().get_multi(keys, asio::use_future);
    try {
        auto res = r.get();
        ASSERT_EQ(res.errors.size(), 2u);
        EXPECT_EQ(res.errors[1], errc::invalid_key);
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);  // one server: the whole multi-get failed
    }
    // The connection is still in step.
    EXPECT_EQ(c.get(fits)->data, "v");
}

TEST_P(KeyPrefix, InvalidPrefixesAreRefusedAtConnect) {
    for (const std::string& bad : {std::string("has space"), std::string("ctl\x01"),
                                   std::string("nl\n"), std::string(250, 'p')}) {
        try {
            folsom::BlockingClient c(options(bad));
            ADD_FAILURE() << "accepted prefix of " << bad.size() << " bytes";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find("key_prefix"), std::string::npos) << e.what();
        }
    }
    // 249 bytes is allowed (a one-byte key still fits).
    folsom::BlockingClient c(options(std::string(249, 'p')));
    EXPECT_EQ(c.set("x", "y"), Status::stored);
    EXPECT_TRUE(server_has(server_.port(), std::string(249, 'p') + "x", "y"));
}

INSTANTIATE_TEST_SUITE_P(AllProtocols, KeyPrefix, folsom::test::all_protocols,
                         folsom::test::protocol_name);

// ---- three servers: placement and libmemcached interop -----------------------------------

/// A libmemcached client of the same servers, with the namespace.
class LibmemcachedClient {
  public:
    LibmemcachedClient(const std::vector<std::unique_ptr<MemcachedServer>>& servers,
                       const std::string& prefix, bool hash_with_prefix)
        : memc_(memcached_create(nullptr)) {
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
        for (const auto& s : servers)
            EXPECT_EQ(memcached_server_add(memc_, "127.0.0.1", s->port()), MEMCACHED_SUCCESS);
        EXPECT_EQ(memcached_callback_set(memc_, MEMCACHED_CALLBACK_PREFIX_KEY, prefix.c_str()),
                  MEMCACHED_SUCCESS);
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY,
                                         hash_with_prefix ? 1 : 0),
                  MEMCACHED_SUCCESS);
    }
    ~LibmemcachedClient() { memcached_free(memc_); }
    LibmemcachedClient(const LibmemcachedClient&) = delete;
    LibmemcachedClient& operator=(const LibmemcachedClient&) = delete;

    std::uint16_t port_for(const std::string& key) const {
        const std::uint32_t i = memcached_generate_hash(memc_, key.data(), key.size());
        return static_cast<std::uint16_t>(
            memcached_server_port(memcached_server_instance_by_position(memc_, i)));
    }
    /// libmemcached's own get (it adds the namespace itself).
    std::optional<std::string> get(const std::string& key) {
        std::size_t length = 0;
        std::uint32_t flags = 0;
        memcached_return_t rc;
        char* v = memcached_get(memc_, key.data(), key.size(), &length, &flags, &rc);
        if (!v) return std::nullopt;
        std::string out(v, length);
        std::free(v);
        return out;
    }

  private:
    memcached_st* memc_;
};

void expect_libmemcached_agrees(bool hash_with_prefix) {
    std::vector<std::unique_ptr<MemcachedServer>> servers;
    for (int i = 0; i < 3; ++i)
        servers.push_back(std::make_unique<MemcachedServer>());
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.key_prefix = "ns/";
    o.hash_with_key_prefix = hash_with_prefix;
    folsom::BlockingClient c(o);
    LibmemcachedClient lm(servers, "ns/", hash_with_prefix);

    std::map<std::uint16_t, int> per_server;
    std::size_t not_where_unprefixed_hash_puts_it = 0;
    LibmemcachedClient unprefixed_hash(servers, "ns/", false);
    for (int i = 0; i < 120; ++i) {
        const std::string key = "key:" + std::to_string(i);
        const std::string value = "value of " + key;
        ASSERT_EQ(c.set(key, value), Status::stored);
        const std::uint16_t expected = lm.port_for(key);
        ++per_server[expected];
        if (expected != unprefixed_hash.port_for(key)) ++not_where_unprefixed_hash_puts_it;
        for (const auto& s : servers)
            EXPECT_EQ(server_has(s->port(), "ns/" + key, value), s->port() == expected)
                << key << " on " << s->port() << ", libmemcached says " << expected;
        EXPECT_EQ(lm.get(key), value) << key;
    }
    EXPECT_EQ(per_server.size(), 3u) << "some server got no key";
    // The two modes really differ (or this test would not tell them apart).
    if (hash_with_prefix)
        EXPECT_GT(not_where_unprefixed_hash_puts_it, 20u);
    else
        EXPECT_EQ(not_where_unprefixed_hash_puts_it, 0u);
}

TEST(KeyPrefixCluster, PlacedAndReadLikeLibmemcachedHashingWithThePrefix) {
    expect_libmemcached_agrees(true);
}

TEST(KeyPrefixCluster, PlacedAndReadLikeLibmemcachedHashingWithoutThePrefix) {
    expect_libmemcached_agrees(false);
}

}  // namespace
