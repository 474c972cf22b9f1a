// mcrouter's pool options in a route configuration, against real memcached processes: pools
// that speak different protocols, a pool's own request timeout (server_timeout), WeightedCh3
// placement from a pool's weights, TLS on one pool and not another (security_mech), and
// keep_routing_prefix.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"
#include "support/tls_files.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::MemcachedServer;

std::string quoted(const MemcachedServer& s) {
    return "\"" + s.address() + "\"";
}

folsom::Options routed(const std::string& json) {
    folsom::Options o;
    o.routes = folsom::RouteConfig::parse(json);
    o.connect_timeout = 2s;
    o.reconnect_initial_delay = 50ms;
    return o;
}

/// The server's item count (what it holds), from `stats`.
long long items(const MemcachedServer& s) {
    return folsom::test::stat_value(folsom::test::raw_request(s, "stats\r\n", "END\r\n"),
                                    "curr_items");
}

// Pool "a" speaks ascii, pool "m" meta: what only meta (and binary) can do works on "m:" keys
// and is refused as unsupported on "a:" keys, in one client.
TEST(RoutePoolOptions, PoolsSpeakTheirOwnProtocol) {
    MemcachedServer a, m, b;
    folsom::BlockingClient c(routed(R"({"pools": {
        "a": {"servers": [)" + quoted(a) +
                                    R"(], "protocol": "ascii"},
        "m": {"servers": [)" + quoted(m) +
                                    R"(], "protocol": "meta"},
        "b": {"servers": [)" + quoted(b) +
                                    R"(], "protocol": "binary"}},
        "route": {"type": "PrefixSelectorRoute",
                  "policies": {"a:": "PoolRoute|a", "m:": "PoolRoute|m", "b:": "PoolRoute|b"}}})"));
    EXPECT_EQ(c.incr("m:n", 1, 5, 0s), 5u);  // created with an initial value: meta
    EXPECT_EQ(c.incr("b:n", 1, 7, 0s), 7u);  // and binary
    try {
        c.incr("a:n", 1, 5, 0s);
        ADD_FAILURE() << "an ascii pool created a counter";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::unsupported);
    }
    EXPECT_TRUE(c.meta_get("m:n").hit());
    EXPECT_THROW(c.meta_get("a:n"), std::system_error);
    EXPECT_EQ(c.set("a:k", "v"), Status::stored);
    EXPECT_EQ(items(a), 1);
    EXPECT_EQ(items(m), 1);
    EXPECT_EQ(items(b), 1);
}

// A pool's server_timeout is its request timeout: a frozen server fails its requests after
// it, long before the client's own (one minute here).
TEST(RoutePoolOptions, ServerTimeoutIsThePoolsRequestTimeout) {
    MemcachedServer fast, frozen;
    auto o = routed(R"({"pools": {"f": {"servers": [)" + quoted(fast) + R"(]},
        "z": {"servers": [)" +
                    quoted(frozen) + R"(], "server_timeout": 200}},
        "route": {"type": "PrefixSelectorRoute",
                  "policies": {"f:": "PoolRoute|f", "z:": "PoolRoute|z"}}})");
    o.request_timeout = 60s;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("z:k", "v"), Status::stored);  // connected before the freeze
    frozen.freeze();
    const auto start = std::chrono::steady_clock::now();
    try {
        c.get("z:k");
        ADD_FAILURE() << "a frozen server answered";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
    frozen.thaw();
    EXPECT_EQ(c.set("f:k", "v"), Status::stored);  // the other pool was never affected
}

// A pool's weights place keys by WeightedCh3: a server of weight 0 is given no key, and the
// others share them all.
TEST(RoutePoolOptions, WeightsPlaceKeysByWeightedCh3) {
    MemcachedServer s0, s1, s2;
    folsom::BlockingClient c(routed(R"({"pools": {"w": {
        "servers": [)" + quoted(s0) +
                                    "," + quoted(s1) + "," + quoted(s2) + R"(],
        "weights": [1, 0, 0.5]}}, "route": "PoolRoute|w"})"));
    for (int i = 0; i < 200; ++i)
        ASSERT_EQ(c.set("key" + std::to_string(i), "v"), Status::stored);
    EXPECT_EQ(items(s1), 0);
    EXPECT_EQ(items(s0) + items(s2), 200);
    EXPECT_GT(items(s0), items(s2));  // weight 1 keeps more than weight 0.5 (of 200 keys)
    for (int i = 0; i < 200; ++i)
        ASSERT_TRUE(c.get("key" + std::to_string(i)));
}

// security_mech: one pool over TLS (with the client's TLS options), one in plain TCP.
TEST(RoutePoolOptions, SecurityMechChoosesTlsPerPool) {
    folsom::test::TlsFiles files;
    MemcachedServer secure(files.memcached_args());
    MemcachedServer plain;
    auto o = routed(R"({"pools": {
        "s": {"servers": [)" +
                    quoted(secure) + R"(], "security_mech": "tls"},
        "p": {"servers": [)" +
                    quoted(plain) + R"(], "security_mech": "plain"}},
        "route": {"type": "AllSyncRoute", "children": ["PoolRoute|s", "PoolRoute|p"]}})");
    folsom::TlsOptions tls;
    tls.ca_file = files.p("ca.pem");
    o.tls = tls;
    folsom::BlockingClient c(o);
    EXPECT_EQ(c.set("k", "both"), Status::stored);
    EXPECT_EQ(items(plain), 1);
    EXPECT_EQ(c.get("k")->data, "both");
    // Without the pool's "plain", the plain server would be spoken TLS to and fail.
    auto all_tls = routed(R"({"pools": {"p": {"servers": [)" + quoted(plain) + R"(]}},
                                "route": "PoolRoute|p"})");
    all_tls.tls = tls;
    all_tls.connect_timeout = 500ms;
    folsom::BlockingClient refused(all_tls);
    EXPECT_THROW(refused.set("k", "v"), std::system_error);
}

// folsom sends keys as given: a routing-prefix-like key reaches the server whole.
TEST(RoutePoolOptions, KeepRoutingPrefixKeepsTheKey) {
    MemcachedServer s;
    folsom::BlockingClient c(
        routed(R"({"pools": {"a": {"servers": [)" + quoted(s) +
               R"(], "keep_routing_prefix": true}}, "route": "PoolRoute|a"})"));
    EXPECT_EQ(c.set("/region/cluster/k", "v"), Status::stored);
    EXPECT_NE(folsom::test::raw_request(s, "get /region/cluster/k\r\n", "END\r\n").find("VALUE"),
              std::string::npos);
}

}  // namespace
