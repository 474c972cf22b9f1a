// Route trees (Options::routes) against real memcached processes: replicated writes checked on
// the servers themselves, replicas killed (SIGKILL) and frozen (SIGSTOP) by PID, failover with
// its exptime cap read back with `mg <key> t`, warm-up fills, shadows, selection by prefix and
// by operation with multi-gets whose keys span routes, per-route counters, and every request
// answered exactly once whatever its children do.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/routes.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/weighted_ch3.hpp"
#include "support/cluster_support.hpp"
#include "support/memcached_server.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::BlockingClient;
using folsom::errc;
using folsom::RouteConfig;
using folsom::Status;
using folsom::test::CompletionLedger;
using folsom::test::MemcachedServer;
using folsom::test::raw_request;
using folsom::test::wait_for;

/// `{"servers": ["127.0.0.1:<port>", ...]}`
std::string pool_json(const std::vector<const MemcachedServer*>& servers) {
    std::string s = R"({"servers": [)";
    for (std::size_t i = 0; i < servers.size(); ++i)
        s += (i ? ", \"" : "\"") + servers[i]->address() + "\"";
    return s + "]}";
}

folsom::Options options_for(const std::string& json) {
    folsom::Options o;
    o.routes = RouteConfig::parse(json);
    o.request_timeout = 3s;
    o.connect_timeout = 1s;
    o.reconnect_initial_delay = 10ms;
    o.reconnect_max_delay = 100ms;
    return o;
}

bool server_has(const MemcachedServer& s, const std::string& key, const std::string& value) {
    return raw_request(s, "get " + key + "\r\n", "END\r\n")
               .find("VALUE " + key + " 0 " + std::to_string(value.size()) + "\r\n" + value +
                     "\r\n") != std::string::npos;
}

/// The remaining ttl the server reports for `key` (`mg <key> t`): -1 for none, -2 if missing.
long long server_ttl(const MemcachedServer& s, const std::string& key) {
    const std::string r = raw_request(s, "mg " + key + " t\r\n", "\r\n");
    if (r.rfind("HD", 0) != 0) return -2;
    const auto t = r.find(" t");
    return std::stoll(r.substr(t + 2));
}

std::vector<std::string> make_keys(std::size_t n, const std::string& prefix) {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < n; ++i)
        keys.push_back(prefix + std::to_string(i));
    return keys;
}

const folsom::RouteStats* stats_of(const std::vector<folsom::RouteStats>& all,
                                   const std::string& name) {
    for (const auto& s : all)
        if (s.name == name) return &s;
    return nullptr;
}

/// A copy of the counters of route `name` (all zero when there is no such route).
folsom::RouteStats route_named(folsom::Client& c, const std::string& name) {
    const auto all = c.route_stats();
    const auto* s = stats_of(all, name);
    return s ? *s : folsom::RouteStats{};
}

// ---- replication ---------------------------------------------------------------------------

TEST(Routes, AllSyncWritesLandOnEveryReplicaAndReadsSeeThem) {
    MemcachedServer a1, a2, b1;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&a1, &a2}) + R"(, "B": )" +
                                 pool_json({&b1}) +
                                 R"(}, "route": {"type": "AllSyncRoute", "name": "replicated",
                                    "children": ["PoolRoute|A", "PoolRoute|B"]}})"));
    for (const auto& k : make_keys(50, "rep:")) {
        ASSERT_EQ(c.set(k, "v-" + k), Status::stored);
        // On B's one server, and on exactly one of A's two.
        EXPECT_TRUE(server_has(b1, k, "v-" + k)) << k;
        EXPECT_NE(server_has(a1, k, "v-" + k), server_has(a2, k, "v-" + k)) << k;
        auto v = c.get(k);
        ASSERT_TRUE(v) << k;
        EXPECT_EQ(v->data, "v-" + k);
    }
    // The worst reply wins: a key only one replica has reads as a miss, as mcrouter's does.
    ASSERT_EQ(raw_request(b1, "set only-b 0 0 1\r\nx\r\n", "\r\n"), "STORED\r\n");
    EXPECT_FALSE(c.get("only-b"));
    // A delete reaches both; the second delete is not_found everywhere.
    EXPECT_EQ(c.del("rep:0"), Status::deleted);
    EXPECT_FALSE(server_has(b1, "rep:0", "v-rep:0"));
    EXPECT_EQ(c.del("rep:0"), Status::not_found);
    const auto st = c.async().route_stats();
    const auto* r = stats_of(st, "replicated");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->type, folsom::RouteType::all_sync);
    EXPECT_EQ(r->requests, 50u * 2 + 1 + 2);
    const auto* pa = stats_of(st, "route.children[0]");
    ASSERT_NE(pa, nullptr);
    EXPECT_EQ(pa->requests, r->requests);
}

TEST(Routes, AllMajorityOverThreeSurvivesOneDeadReplicaNotTwo) {
    MemcachedServer s1, s2, s3;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&s1}) + R"(, "B": )" +
                                 pool_json({&s2}) + R"(, "C": )" + pool_json({&s3}) +
                                 R"(}, "route": {"type": "AllMajorityRoute",
                                    "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]}})"));
    ASSERT_EQ(c.set("m", "1"), Status::stored);
    // Answered once two agreed; the third replica stores it too, maybe a moment later.
    EXPECT_TRUE(wait_for(
        [&] {
            return server_has(s1, "m", "1") && server_has(s2, "m", "1") && server_has(s3, "m", "1");
        },
        2s));
    s3.kill();
    ASSERT_EQ(c.set("m", "2"), Status::stored);
    EXPECT_TRUE(server_has(s1, "m", "2"));
    EXPECT_TRUE(server_has(s2, "m", "2"));
    s2.kill();
    // One of three stored it: no majority, the worst reply (an error) is the answer.
    EXPECT_THROW(c.set("m", "3"), std::system_error);
    EXPECT_TRUE(server_has(s1, "m", "3"));  // the live replica still got the write
}

TEST(Routes, AFrozenReplicaDoesNotHoldUpAllFastestOrAllMajority) {
    MemcachedServer s1, s2, s3;
    const std::string pools = R"({"pools": {"A": )" + pool_json({&s1}) + R"(, "B": )" +
                              pool_json({&s2}) + R"(, "C": )" + pool_json({&s3}) + "}";
    for (const char* type : {"AllFastestRoute", "AllMajorityRoute"}) {
        SCOPED_TRACE(type);
        auto o = options_for(pools + R"(, "route": {"type": ")" + type +
                             R"(", "children": ["PoolRoute|C", "PoolRoute|A", "PoolRoute|B"]}})");
        o.request_timeout = 10s;  // the frozen replica's reply would take this long
        BlockingClient c(o);
        ASSERT_EQ(c.set("warm", "x"), Status::stored);  // every connection is up
        s3.freeze();
        auto f = c.async().set("fz", "v", folsom::Ttl{0}, asio::use_future);
        // Answered by the live replicas, long before the frozen one could time out.
        ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
        EXPECT_EQ(f.get(), Status::stored);
        auto g = c.async().get("fz", asio::use_future);
        ASSERT_EQ(g.wait_for(5s), std::future_status::ready);
        auto v = g.get();
        ASSERT_TRUE(v);
        EXPECT_EQ(v->data, "v");
        s3.thaw();
    }
}

// ---- failover --------------------------------------------------------------------------------

TEST(Routes, FailoverGoesToTheNextChildWhenThePrimaryIsDeadAndCapsTheExptime) {
    MemcachedServer primary, backup;
    BlockingClient c(options_for(R"({"pools": {"P": )" + pool_json({&primary}) + R"(, "B": )" +
                                 pool_json({&backup}) +
                                 R"(}, "route": {"type": "FailoverRoute", "failover_exptime": 60,
                                    "children": ["PoolRoute|P", "PoolRoute|B"]}})"));
    ASSERT_EQ(c.set("k", "on-primary", folsom::Ttl{3600}), Status::stored);
    EXPECT_TRUE(server_has(primary, "k", "on-primary"));
    EXPECT_FALSE(server_has(backup, "k", "on-primary"));
    primary.kill();
    // Writes fail over with their exptime capped at 60 s (and a ttl of 0, no expiry, too).
    ASSERT_EQ(c.set("k", "on-backup", folsom::Ttl{3600}), Status::stored);
    ASSERT_EQ(c.set("forever", "x"), Status::stored);
    EXPECT_TRUE(server_has(backup, "k", "on-backup"));
    const long long ttl = server_ttl(backup, "k");
    EXPECT_GT(ttl, 50);
    EXPECT_LE(ttl, 60);
    EXPECT_GT(server_ttl(backup, "forever"), 50);
    EXPECT_LE(server_ttl(backup, "forever"), 60);
    // A shorter ttl is kept as it is.
    ASSERT_EQ(c.set("short", "x", folsom::Ttl{30}), Status::stored);
    EXPECT_LE(server_ttl(backup, "short"), 30);
    auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "on-backup");
    const auto st = c.async().route_stats();
    ASSERT_NE(stats_of(st, "route"), nullptr);
    EXPECT_GE(stats_of(st, "route")->failovers, 4u);
}

TEST(Routes, FailoverPassesAFrozenPrimaryAfterItsTimeout) {
    MemcachedServer primary, backup;
    auto o = options_for(R"({"pools": {"P": )" + pool_json({&primary}) + R"(, "B": )" +
                         pool_json({&backup}) +
                         R"(}, "route": {"type": "FailoverRoute",
                            "children": ["PoolRoute|P", "PoolRoute|B"]}})");
    o.request_timeout = 300ms;
    BlockingClient c(o);
    ASSERT_EQ(raw_request(backup, "set fk 0 0 6\r\nbackup\r\n", "\r\n"), "STORED\r\n");
    ASSERT_FALSE(c.get("fk"));  // the primary answers: a miss is not an error
    primary.freeze();
    auto v = c.get("fk");  // the primary times out; the backup answers
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "backup");
    primary.thaw();
}

TEST(Routes, MissFailoverReadsTheNextChildOnAMissButWritesOnlyFailOverOnErrors) {
    MemcachedServer a, b;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&a}) + R"(, "B": )" +
                                 pool_json({&b}) +
                                 R"(}, "route": {"type": "MissFailoverRoute",
                                    "children": ["PoolRoute|A", "PoolRoute|B"]}})"));
    ASSERT_EQ(raw_request(b, "set only-b 0 0 1\r\nb\r\n", "\r\n"), "STORED\r\n");
    auto v = c.get("only-b");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "b");
    EXPECT_FALSE(c.get("nowhere"));
    // A write the primary takes stays there.
    ASSERT_EQ(c.set("w", "1"), Status::stored);
    EXPECT_TRUE(server_has(a, "w", "1"));
    EXPECT_FALSE(server_has(b, "w", "1"));
    // Multi-get: each key fails over alone.
    ASSERT_EQ(raw_request(a, "set only-a 0 0 1\r\na\r\n", "\r\n"), "STORED\r\n");
    std::vector<std::string_view> keys{"only-a", "only-b", "nowhere", "w"};
    auto r = c.get_multi(keys);
    ASSERT_TRUE(r.complete());
    ASSERT_TRUE(r.values[0] && r.values[1] && !r.values[2] && r.values[3]);
    EXPECT_EQ(r.take(0)->data, "a");
    EXPECT_EQ(r.take(1)->data, "b");
    EXPECT_EQ(r.take(3)->data, "1");
    // The primary dies: reads and writes go to B.
    a.kill();
    ASSERT_EQ(c.set("w", "2"), Status::stored);
    EXPECT_TRUE(server_has(b, "w", "2"));
}

// ---- warm-up ---------------------------------------------------------------------------------

TEST(Routes, WarmUpServesWarmOnlyKeysAndFillsTheColdPoolWithTheExptime) {
    MemcachedServer cold, warm;
    BlockingClient c(options_for(R"({"pools": {"cold": )" + pool_json({&cold}) + R"(, "warm": )" +
                                 pool_json({&warm}) +
                                 R"(}, "route": {"type": "WarmUpRoute", "exptime": 120,
                                    "cold": "PoolRoute|cold", "warm": "PoolRoute|warm"}})"));
    const auto keys = make_keys(20, "wu:");
    for (const auto& k : keys)
        ASSERT_EQ(raw_request(warm, "set " + k + " 0 0 2\r\nw!\r\n", "\r\n"), "STORED\r\n");
    for (const auto& k : keys) {
        auto v = c.get(k);
        ASSERT_TRUE(v) << k;
        EXPECT_EQ(v->data, "w!");
    }
    // The fills are asynchronous: wait until the cold pool has every key, then read its ttl.
    for (const auto& k : keys) {
        ASSERT_TRUE(wait_for([&] { return server_has(cold, k, "w!"); }, 2s)) << k;
        const long long ttl = server_ttl(cold, k);
        EXPECT_GT(ttl, 110) << k;
        EXPECT_LE(ttl, 120) << k;
    }
    // Writes go to the cold pool only.
    ASSERT_EQ(c.set("fresh", "c"), Status::stored);
    EXPECT_TRUE(server_has(cold, "fresh", "c"));
    EXPECT_FALSE(server_has(warm, "fresh", "c"));
    // A multi-get over keys on cold, on warm only, and nowhere.
    ASSERT_EQ(raw_request(warm, "set late 0 0 1\r\nL\r\n", "\r\n"), "STORED\r\n");
    std::vector<std::string_view> mk{"fresh", "late", "missing"};
    auto r = c.get_multi(mk);
    ASSERT_TRUE(r.complete());
    ASSERT_TRUE(r.values[0] && r.values[1] && !r.values[2]);
    EXPECT_EQ(r.take(1)->data, "L");
    EXPECT_TRUE(wait_for([&] { return server_has(cold, "late", "L"); }, 2s));
}

// ---- shadows -------------------------------------------------------------------------------

TEST(Routes, AboutTheConfiguredFractionOfKeysReachTheShadowAndADeadShadowFailsNobody) {
    MemcachedServer main, shadow;
    BlockingClient c(options_for(R"({"pools": {"M": )" + pool_json({&main}) + R"(, "S": )" +
                                 pool_json({&shadow}) +
                                 R"(}, "route": {"type": "PoolRoute", "pool": "M", "name": "main",
                                    "shadows": [{"target": "PoolRoute|S",
                                                 "key_fraction_range": [0, 0.25]}]}})"));
    const auto keys = make_keys(1000, "sh:");
    for (const auto& k : keys)
        ASSERT_EQ(c.set(k, "v"), Status::stored);
    // The shadow's copies are answered after the callers are: wait until the shadow server
    // holds as many keys as copies were sent.
    const std::uint64_t sent = route_named(c.async(), "main").shadow_requests;
    auto on_shadow = [&] {
        std::size_t n = 0;
        for (const auto& k : keys)
            n += server_has(shadow, k, "v") ? 1 : 0;
        return n;
    };
    ASSERT_TRUE(wait_for([&] { return on_shadow() == sent; }, 3s)) << on_shadow() << " of " << sent;
    const std::size_t shadowed = on_shadow();
    // A quarter of the key hash space: 250 expected; murmur3 spreads 1,000 keys within ±60.
    EXPECT_GT(shadowed, 190u);
    EXPECT_LT(shadowed, 310u);
    EXPECT_EQ(route_named(c.async(), "main").shadow_errors, 0u);
    // The shadow dies: every caller is still answered from the main pool.
    shadow.kill();
    for (const auto& k : keys) {
        ASSERT_EQ(c.set(k, "w"), Status::stored) << k;
        ASSERT_TRUE(c.get(k)) << k;
    }
    EXPECT_TRUE(
        wait_for([&] { return route_named(c.async(), "main").shadow_errors >= shadowed; }, 2s));
}

// ---- selection -----------------------------------------------------------------------------

TEST(Routes, PrefixSelectionTakesTheLongestPrefixAndMultiGetsSpanRoutes) {
    MemcachedServer a, ab, other;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&a}) + R"(, "AB": )" +
                                 pool_json({&ab}) + R"(, "O": )" + pool_json({&other}) +
                                 R"(}, "route": {"type": "PrefixSelectorRoute",
              "policies": {"a:": "PoolRoute|A", "a:b:": "PoolRoute|AB"},
              "wildcard": "PoolRoute|O"}})"));
    ASSERT_EQ(c.set("a:1", "A"), Status::stored);
    ASSERT_EQ(c.set("a:b:1", "AB"), Status::stored);
    ASSERT_EQ(c.set("zz", "O"), Status::stored);
    EXPECT_TRUE(server_has(a, "a:1", "A"));
    EXPECT_TRUE(server_has(ab, "a:b:1", "AB"));
    EXPECT_TRUE(server_has(other, "zz", "O"));
    EXPECT_FALSE(server_has(a, "a:b:1", "AB"));
    std::vector<std::string_view> keys{"zz", "a:b:1", "a:1", "a:missing", "a:b:1"};
    auto r = c.get_multi(keys);
    ASSERT_TRUE(r.complete());
    EXPECT_EQ(r.take(0)->data, "O");
    EXPECT_EQ(r.take(1)->data, "AB");
    EXPECT_EQ(r.take(2)->data, "A");
    EXPECT_FALSE(r.values[3]);
    EXPECT_EQ(r.take(4)->data, "AB");
    // Client::server_for names where the key goes.
    EXPECT_EQ(c.async().server_name(c.async().server_for("a:b:x")), ab.address());
    // One route's server dies: only its keys fail, each with its own error.
    ab.kill();
    auto r2 = c.get_multi(keys);
    ASSERT_FALSE(r2.complete());
    EXPECT_FALSE(r2.errors[0]);
    EXPECT_TRUE(r2.errors[1]);
    EXPECT_FALSE(r2.errors[2]);
    EXPECT_FALSE(r2.errors[3]);
    EXPECT_TRUE(r2.errors[4]);
    EXPECT_EQ(r2.take(0)->data, "O");
    EXPECT_EQ(r2.take(2)->data, "A");
}

TEST(Routes, TheIssuesExampleSelectsByOperation) {
    MemcachedServer a1, a2, b1;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&a1, &a2}) + R"(, "B": )" +
                                 pool_json({&b1}) +
                                 R"(}, "route": {"type": "OperationSelectorRoute",
             "operation_policies": {"get": {"type": "MissFailoverRoute",
                                            "children": ["PoolRoute|A", "PoolRoute|B"]}},
             "default_policy": {"type": "AllSyncRoute",
                                "children": ["PoolRoute|A", "PoolRoute|B"]}}})"));
    // Writes (the default policy) are replicated on A and B.
    for (const auto& k : make_keys(20, "op:")) {
        ASSERT_EQ(c.set(k, "x"), Status::stored);
        EXPECT_TRUE(server_has(b1, k, "x"));
        EXPECT_TRUE(server_has(a1, k, "x") || server_has(a2, k, "x"));
    }
    // Gets fail over on a miss: a key only B has is found.
    ASSERT_EQ(raw_request(b1, "set b-only 0 0 1\r\nb\r\n", "\r\n"), "STORED\r\n");
    auto v = c.get("b-only");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "b");
    std::vector<std::string_view> keys{"op:1", "b-only", "none"};
    auto r = c.get_multi(keys);
    ASSERT_TRUE(r.complete());
    EXPECT_TRUE(r.values[0] && r.values[1] && !r.values[2]);
    // incr is not a get: replicated too.
    ASSERT_EQ(c.set("n", "5"), Status::stored);
    EXPECT_EQ(c.incr("n", 2), 7u);
    EXPECT_TRUE(server_has(b1, "n", "7"));
    // Stats reach every server once.
    EXPECT_EQ(c.stats().size(), 3u);
}

TEST(Routes, NullErrorAndHashRoutes) {
    MemcachedServer a, b;
    BlockingClient c(options_for(R"({"pools": {"A": )" + pool_json({&a}) + R"(, "B": )" +
                                 pool_json({&b}) +
                                 R"(}, "route": {"type": "PrefixSelectorRoute",
             "policies": {"null:": "NullRoute", "err:": "ErrorRoute|go away",
                          "h:": {"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"]}}}})"));
    EXPECT_EQ(c.set("null:k", "v"), Status::not_stored);
    EXPECT_FALSE(c.get("null:k"));
    EXPECT_EQ(c.del("null:k"), Status::not_found);
    try {
        c.set("err:k", "v");
        ADD_FAILURE() << "ErrorRoute answered without an error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::server_error);
    }
    // No prefix matches and there is no wildcard: an error, nothing sent.
    EXPECT_THROW(c.set("elsewhere", "v"), std::system_error);
    // HashRoute spreads keys over both children, each key always to the same one.
    std::size_t on_a = 0;
    for (const auto& k : make_keys(200, "h:")) {
        ASSERT_EQ(c.set(k, "v"), Status::stored);
        const bool in_a = server_has(a, k, "v");
        EXPECT_NE(in_a, server_has(b, k, "v")) << k;
        on_a += in_a ? 1 : 0;
    }
    EXPECT_GT(on_a, 60u);
    EXPECT_LT(on_a, 140u);
}

// mcrouter's placement: a pool with "hash": "Ch3" puts key k on server furc_hash(k, n) of its
// list, and a HashRoute (Ch3 unless told otherwise, as in mcrouter) on child furc_hash(k, n),
// so a service moving from mcrouter finds its keys where mcrouter left them.
TEST(Routes, Ch3PlacesKeysWhereMcrouterDoes) {
    MemcachedServer a0, a1, a2, b0, b1, b2;
    const std::vector<const MemcachedServer*> a = {&a0, &a1, &a2}, b = {&b0, &b1, &b2};
    const std::string pools = R"({"pools": {"A": )" + pool_json(a) + R"(, "B0": )" +
                              pool_json({&b0}) + R"(, "B1": )" + pool_json({&b1}) + R"(, "B2": )" +
                              pool_json({&b2}) + "}";
    // Through the tree (a prefix selector over a Ch3 pool and a HashRoute of one-server pools),
    // and as the whole client (a lone PoolRoute is served by the pool's own core).
    BlockingClient tree(options_for(pools + R"(, "route": {"type": "PrefixSelectorRoute",
        "policies": {"a:": {"type": "PoolRoute", "pool": "A", "hash": "Ch3"},
                     "h:": {"type": "HashRoute", "children": ["PoolRoute|B0", "PoolRoute|B1", "PoolRoute|B2"]},
                     "w:": {"type": "HashRoute", "hash_func": "WeightedCh3", "weights": [1, 0, 1],
                            "children": ["PoolRoute|B0", "PoolRoute|B1", "PoolRoute|B2"]}}}})"));
    BlockingClient lone(options_for(pools + R"(, "route": {"type": "PoolRoute", "pool": "A",
                                                           "hash": {"hash_func": "Ch3"}}})"));
    std::vector<int> per_server(3);
    for (const auto& k : make_keys(120, "a:")) {
        const auto owner = folsom::cluster::furc_hash(k, 3);
        ++per_server[owner];
        ASSERT_EQ(tree.set(k, "t"), Status::stored);
        for (std::uint32_t i = 0; i < 3; ++i)
            EXPECT_EQ(server_has(*a[i], k, "t"), i == owner) << k << " on A[" << i << "]";
        ASSERT_EQ(lone.set(k, "l"), Status::stored);
        for (std::uint32_t i = 0; i < 3; ++i)
            EXPECT_EQ(server_has(*a[i], k, "l"), i == owner) << k << " on A[" << i << "]";
    }
    for (int n : per_server)
        EXPECT_GT(n, 20);
    for (const auto& k : make_keys(60, "h:")) {
        ASSERT_EQ(tree.set(k, "h"), Status::stored);
        const auto child = folsom::cluster::furc_hash(k, 3);
        for (std::uint32_t i = 0; i < 3; ++i)
            EXPECT_EQ(server_has(*b[i], k, "h"), i == child) << k << " on B" << i;
    }
    for (const auto& k : make_keys(60, "w:")) {
        ASSERT_EQ(tree.set(k, "w"), Status::stored);
        const std::vector<double> weights = {1, 0, 1};
        const auto child = folsom::cluster::weighted_ch3(k, weights);
        EXPECT_NE(child, 1u);  // weight 0: no key
        for (std::uint32_t i = 0; i < 3; ++i)
            EXPECT_EQ(server_has(*b[i], k, "w"), i == child) << k << " on B" << i;
    }
}

// ---- exactly once ----------------------------------------------------------------------------

TEST(Routes, EveryRequestCompletesExactlyOnceWhileReplicasDie) {
    MemcachedServer s1, s2, s3;
    const std::string pools = R"({"pools": {"A": )" + pool_json({&s1}) + R"(, "B": )" +
                              pool_json({&s2}) + R"(, "C": )" + pool_json({&s3}) + "}";
    auto o = options_for(pools + R"(, "route": {"type": "OperationSelectorRoute",
        "operation_policies": {"get": {"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]},
                               "set": {"type": "AllMajorityRoute", "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]},
                               "delete": {"type": "AllFastestRoute", "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]}},
        "default_policy": {"type": "AllSyncRoute", "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]}}})");
    o.max_outstanding_requests = 100000;
    o.request_timeout = 1s;
    BlockingClient c(o);
    auto& client = c.async();
    constexpr std::size_t rounds = 4, per_round = 3000;
    CompletionLedger ledger(rounds * per_round);
    std::mt19937 rng(7);
    const std::vector<std::string> multi_key_text = make_keys(8, "once:");
    const std::vector<std::string_view> multi_keys(multi_key_text.begin(), multi_key_text.end());
    MemcachedServer* servers[] = {&s1, &s2, &s3};
    for (std::size_t round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < per_round; ++i) {
            const std::size_t id = round * per_round + i;
            const std::string key = "once:" + std::to_string(id % 500);
            auto done = [&ledger, id](auto...) { ledger.complete(id); };
            switch (id % 5) {
                case 3:  // a multi-get, split over the tree
                    client.get_multi(multi_keys, done);
                    break;
                case 0:
                    client.set(key, "v", folsom::Ttl{0}, done);
                    break;
                case 1:
                    client.get(key, done);
                    break;
                case 2:
                    client.del(key, done);
                    break;
                default:
                    client.touch(key, folsom::Ttl{100}, done);
                    break;
            }
            if (i == per_round / 2) {  // a replica dies (or comes back) mid-burst
                MemcachedServer& s = *servers[rng() % 3];
                if (s.running())
                    s.kill();
                else
                    s.restart();
            }
        }
        ASSERT_TRUE(wait_for([&] { return client.outstanding() == 0; }, 20s)) << round;
    }
    EXPECT_TRUE(wait_for([&] { return ledger.all_done(); }, 5s));
    EXPECT_EQ(ledger.never(), 0u);
    EXPECT_EQ(ledger.twice(), 0u);
}

TEST(Routes, MultiKeyWritesTakeEachKeysOwnPathAndEveryProtocolWorks) {
    MemcachedServer a, b;
    for (auto protocol :
         {folsom::Protocol::ascii, folsom::Protocol::binary, folsom::Protocol::meta}) {
        SCOPED_TRACE(static_cast<int>(protocol));
        auto o =
            options_for(R"({"pools": {"A": )" + pool_json({&a}) + R"(, "B": )" + pool_json({&b}) +
                        R"(}, "route": {"type": "PrefixSelectorRoute",
                                "policies": {"r:": {"type": "AllSyncRoute",
                                                    "children": ["PoolRoute|A", "PoolRoute|B"]}},
                                "wildcard": "PoolRoute|A"}})");
        o.protocol = protocol;
        BlockingClient c(o);
        const auto keys = make_keys(30, "r:");
        std::vector<folsom::KeyValue> items;
        for (const auto& k : keys)
            items.push_back({k, "mv", 0});
        items.push_back({"plain", "pv", 0});
        auto r = c.async().set_multi(items, folsom::Ttl{0}, asio::use_future).get();
        ASSERT_EQ(r.results.size(), items.size());
        for (const auto& w : r.results)
            EXPECT_TRUE(w.succeeded());
        for (const auto& k : keys) {  // replicated keys on both pools, the other on A alone
            EXPECT_TRUE(server_has(a, k, "mv")) << k;
            EXPECT_TRUE(server_has(b, k, "mv")) << k;
        }
        EXPECT_TRUE(server_has(a, "plain", "pv"));
        EXPECT_FALSE(server_has(b, "plain", "pv"));
        std::vector<std::string_view> views(keys.begin(), keys.end());
        views.push_back("plain");
        auto hits = c.get_multi(views);  // each key's answer back in its place, any protocol
        ASSERT_TRUE(hits.complete());
        for (std::size_t i = 0; i < keys.size(); ++i)
            EXPECT_EQ(hits.take(i)->data, "mv") << keys[i];
        EXPECT_EQ(hits.take(keys.size())->data, "pv");
        views.pop_back();
        auto d = c.async().delete_multi(views, asio::use_future).get();
        for (const auto& w : d.results)
            EXPECT_EQ(w.status, Status::deleted);
        EXPECT_FALSE(server_has(b, "r:0", "mv"));
        auto g = c.get_multi(views);
        ASSERT_TRUE(g.complete());
        for (const auto& v : g.values)
            EXPECT_FALSE(v);
    }
}

TEST(Routes, BackpressureCountsTheCallersRequestOnceNotItsChildren) {
    MemcachedServer s1, s2, s3;
    auto o = options_for(R"({"pools": {"A": )" + pool_json({&s1}) + R"(, "B": )" +
                         pool_json({&s2}) + R"(, "C": )" + pool_json({&s3}) +
                         R"(}, "route": {"type": "AllSyncRoute",
                            "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]}})");
    o.max_outstanding_requests = 2;
    BlockingClient c(o);
    auto& client = c.async();
    // Two callers fit, each with three children in flight.
    auto f1 = client.set("bp1", "v", folsom::Ttl{0}, asio::use_future);
    auto f2 = client.set("bp2", "v", folsom::Ttl{0}, asio::use_future);
    EXPECT_EQ(f1.get(), Status::stored);
    EXPECT_EQ(f2.get(), Status::stored);
    EXPECT_TRUE(wait_for([&] { return client.outstanding() == 0; }, 2s));
    // One at a time, every request fits, however many children it has.
    for (int i = 0; i < 50; ++i)
        ASSERT_EQ(c.set("bp", "v"), Status::stored);
    EXPECT_EQ(client.outstanding(), 0u);
}

TEST(Routes, AllAsyncAnswersAtOnceAndAllInitialWithTheFirstChild) {
    MemcachedServer s1, s2;
    const std::string pools =
        R"({"pools": {"A": )" + pool_json({&s1}) + R"(, "B": )" + pool_json({&s2}) + "}";
    {
        BlockingClient c(options_for(pools + R"(, "route": {"type": "AllAsyncRoute",
                                        "children": ["PoolRoute|A", "PoolRoute|B"]}})"));
        // Nobody waits for the replies: a write is `sent`, a get a miss; the writes land.
        EXPECT_EQ(c.set("aa", "v"), Status::sent);
        EXPECT_TRUE(
            wait_for([&] { return server_has(s1, "aa", "v") && server_has(s2, "aa", "v"); }, 2s));
        EXPECT_FALSE(c.get("aa"));
    }
    {
        BlockingClient c(options_for(pools + R"(, "route": {"type": "AllInitialRoute",
                                        "children": ["PoolRoute|A", "PoolRoute|B"]}})"));
        ASSERT_EQ(raw_request(s2, "set only-b 0 0 1\r\nb\r\n", "\r\n"), "STORED\r\n");
        EXPECT_FALSE(c.get("only-b"));  // the first child's miss, whatever B says
        EXPECT_EQ(c.set("ai", "v"), Status::stored);
        EXPECT_TRUE(wait_for([&] { return server_has(s2, "ai", "v"); }, 2s));
        s1.kill();
        // The first child is down: its error is the answer, though B stores the value.
        EXPECT_THROW(c.set("ai", "w"), std::system_error);
        EXPECT_TRUE(wait_for([&] { return server_has(s2, "ai", "w"); }, 2s));
    }
}

// ---- bad configuration -----------------------------------------------------------------------

TEST(Routes, AConfigurationThatNamesNoPoolIsRefusedAtConnect) {
    folsom::Options o;
    o.routes = RouteConfig{
        {{"A", {"127.0.0.1:1"}}},
        folsom::routes::all_sync({folsom::routes::pool("A"), folsom::routes::pool("C")})};
    try {
        BlockingClient c(o);
        ADD_FAILURE() << "connected with a route to a pool that does not exist";
    } catch (const folsom::RouteConfigError& e) {
        EXPECT_EQ(e.message(), "route.children[1].pool: unknown pool 'C'");
    }
}

}  // namespace
