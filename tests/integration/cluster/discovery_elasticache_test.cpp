// ElastiCache auto-discovery against a stand-in configuration endpoint (tests/support; memcached
// has no `config get cluster`) whose node lists point at real memcached processes on loopback.
#include "folsom/blocking_client.hpp"
#include "folsom/cluster/discovery.hpp"

#include "support/cluster_support.hpp"
#include "support/elasticache_endpoint.hpp"
#include "support/memcached_server.hpp"
#include "support/private_network.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::ServerAddress;
using folsom::Status;
using folsom::test::ElastiCacheEndpoint;
using folsom::test::MemcachedServer;
using folsom::test::wait_for;

ServerAddress address_of(const MemcachedServer& s) {
    return {"127.0.0.1", s.port(), 1};
}

std::vector<std::string> entries(const std::vector<ServerAddress>& servers) {
    return ElastiCacheEndpoint::entries(servers);
}

std::vector<ServerAddress> resolve_once(folsom::cluster::Discovery& d, std::error_code& ec) {
    asio::io_context io;
    std::vector<ServerAddress> out;
    int calls = 0;
    d.resolve(io.get_executor(), [&](std::error_code e, std::vector<ServerAddress> s) {
        ec = e;
        out = std::move(s);
        ++calls;
    });
    io.run_for(10s);
    EXPECT_EQ(calls, 1);
    return out;
}

std::error_code resolve_error(folsom::cluster::Discovery& d) {
    std::error_code ec;
    EXPECT_TRUE(resolve_once(d, ec).empty());
    return ec;
}

std::uint16_t port_of(folsom::Client& c, const std::string& key) {
    const std::string& name = c.server_name(c.server_for(key));
    if (name.empty()) return 0;
    return static_cast<std::uint16_t>(std::stoi(name.substr(name.rfind(':') + 1)));
}

bool placement_matches(folsom::Client& c, const std::vector<ServerAddress>& servers,
                       const std::vector<std::string>& keys) {
    folsom::test::LibmemcachedPlacement lm(servers);
    for (const auto& k : keys)
        if (port_of(c, k) != lm.port_for(k)) return false;
    return true;
}

long long server_stat(const MemcachedServer& s, const std::string& name) {
    return folsom::test::stat_value(folsom::test::raw_request(s.port(), "stats\r\n", "END\r\n"),
                                    name);
}

TEST(ElastiCacheDiscovery, ResolvesTheNodesInOrderWithTheirVersion) {
    ElastiCacheEndpoint endpoint;
    // The ip when given; the hostname when the ip is empty.
    endpoint.serve(7, {"cache-a.test|127.0.0.1|11311", "127.0.0.2||11312"});
    auto d = folsom::cluster::make_elasticache_discovery(endpoint.address());
    EXPECT_FALSE(d->cluster_version());
    std::error_code ec;
    const auto servers = resolve_once(*d, ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(servers.size(), 2u);
    EXPECT_EQ(servers[0], (ServerAddress{"127.0.0.1", 11311, 1}));
    EXPECT_EQ(servers[1], (ServerAddress{"127.0.0.2", 11312, 1}));
    EXPECT_EQ(d->cluster_version(), 7u);
    EXPECT_EQ(endpoint.requests(), 1u);
}

TEST(ElastiCacheDiscovery, LegacyEnginesAreAskedWithGet) {
    ElastiCacheEndpoint endpoint;
    endpoint.serve(3, {"a|127.0.0.1|11311"}, /*legacy=*/true);
    // Such an engine does not know `config get cluster`.
    auto modern = folsom::cluster::make_elasticache_discovery(endpoint.address());
    EXPECT_EQ(resolve_error(*modern), errc::server_error);
    auto legacy =
        folsom::cluster::make_elasticache_discovery(endpoint.address(), {.legacy_get = true});
    std::error_code ec;
    const auto servers = resolve_once(*legacy, ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(servers.size(), 1u);
    EXPECT_EQ(servers[0].port, 11311);
    EXPECT_EQ(legacy->cluster_version(), 3u);
}

TEST(ElastiCacheDiscovery, MalformedRepliesAreClearErrors) {
    ElastiCacheEndpoint endpoint;
    auto d = folsom::cluster::make_elasticache_discovery(endpoint.address(), {.timeout = 1000ms});
    const std::string good_data = "4\na|127.0.0.1|11311\n";
    const auto count = std::to_string(good_data.size());
    const struct {
        std::string reply;
        errc expected;
    } cases[] = {
        {"CONFIG cluster 0\r\n", errc::protocol_error},  // bad header
        {"CONFIG cluster 0 3\r\n" + good_data + "\r\nEND\r\n",
         errc::protocol_error},  // short count
        {"CONFIG cluster 0 40\r\n" + good_data + "\r\nEND\r\n",
         errc::protocol_error},  // long count
        {"CONFIG cluster 0 " + count + "\r\n" + good_data + "\r\nEDN\r\n", errc::protocol_error},
        {"CONFIG cluster 0 20\r\n4\na|127.0.0.1|99999\n\r\nEND\r\n", errc::protocol_error},  // port
        {"CONFIG cluster 0 16\r\n4\na-127.0.0.1-1\n\r\nEND\r\n", errc::protocol_error},  // entry
        {"CONFIG cluster 0 99999999\r\n", errc::protocol_error},  // over max_reply_bytes
        {"ERROR\r\n", errc::server_error},
        {"SERVER_ERROR busy\r\n", errc::server_error},
        {"CONFIG cluster 0 3\r\n4\n\n\r\nEND\r\n", errc::resolve_failed},   // no node
        {"CONFIG cluster 0 " + count + "\r\n" + good_data, errc::timeout},  // no END, stays open
    };
    for (const auto& c : cases) {
        endpoint.serve_raw(c.reply);
        EXPECT_EQ(resolve_error(*d), c.expected) << c.reply;
    }
    EXPECT_FALSE(d->cluster_version());
}

TEST(ElastiCacheDiscovery, UnreachableOrSilentEndpointsFailWithoutHanging) {
    // Nothing listens there: refused at once.
    auto refused = folsom::cluster::make_elasticache_discovery(
        "127.0.0.1:" + std::to_string(folsom::test::free_loopback_port()));
    EXPECT_EQ(resolve_error(*refused), errc::connect_failed);

    // Accepts, reads, never answers: the deadline ends it.
    ElastiCacheEndpoint endpoint;
    endpoint.go_silent();
    auto silent =
        folsom::cluster::make_elasticache_discovery(endpoint.address(), {.timeout = 200ms});
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(resolve_error(*silent), errc::timeout);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ElastiCacheDiscovery, AnEndpointConnectedToItselfIsRefused) {
    // See ClientFaults.AConnectionToItselfIsARefusedConnect: in a network namespace whose only
    // ephemeral ports are 40000 and 40001, a connect to 127.0.0.1:40000 is one to itself, which
    // would then read back its own "config get cluster" as the reply.
    if (const auto why = folsom::test::private_network_unavailable(); !why.empty())
        GTEST_SKIP() << why;
    const auto why = folsom::test::run_in_private_network([] {
        const auto narrowed = folsom::test::narrow_ephemeral_ports(40000, 40001);
        ASSERT_TRUE(narrowed.empty()) << narrowed;
        auto d =
            folsom::cluster::make_elasticache_discovery("127.0.0.1:40000", {.timeout = 1000ms});
        EXPECT_EQ(resolve_error(*d), errc::connect_failed);
    });
    if (!why.empty()) GTEST_SKIP() << "no private network namespace: " << why;
}

TEST(ElastiCacheDiscovery, AnEndpointClosingMidReplyIsConnectionLost) {
    // A server that sends half a reply and closes (a FakeServer of its own).
    folsom::test::FakeServer half([](folsom::test::FakeConnection& c) {
        c.read_line();
        c.write("CONFIG cluster 0 20\r\n4\na|127");
        c.close();
    });
    auto d = folsom::cluster::make_elasticache_discovery(half.address());
    EXPECT_EQ(resolve_error(*d), errc::connection_lost);
}

TEST(ElastiCacheDiscovery, CancelEndsAPendingResolution) {
    ElastiCacheEndpoint endpoint;
    endpoint.go_silent();
    auto d = folsom::cluster::make_elasticache_discovery(endpoint.address(), {.timeout = 30s});
    asio::io_context io;
    std::error_code ec;
    int calls = 0;
    auto cancel = d->resolve(io.get_executor(), [&](std::error_code e, std::vector<ServerAddress>) {
        ec = e;
        ++calls;
    });
    ASSERT_TRUE(wait_for(
        [&] {
            io.poll();
            return endpoint.requests() == 1;
        },
        5s));
    cancel();
    io.run_for(5s);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(ec, errc::cancelled);
}

TEST(ElastiCacheDiscovery, AMalformedEndpointAddressIsRefusedAtOnce) {
    EXPECT_THROW(folsom::cluster::make_elasticache_discovery("host:notaport"), std::system_error);
    EXPECT_THROW(folsom::cluster::make_elasticache_discovery(""), std::system_error);
}

TEST(ElastiCacheDiscovery, TheClientFollowsTheClusterVersion) {
    MemcachedServer a, b, c;
    std::optional<ElastiCacheEndpoint> endpoint(std::in_place);
    endpoint->serve(1, entries({address_of(a), address_of(b)}));
    auto discovery =
        folsom::cluster::make_elasticache_discovery(endpoint->address(), {.timeout = 1000ms});
    folsom::Options o;
    o.discovery = discovery;
    o.discovery_interval = 100ms;
    o.discovery_drain_delay = 200ms;
    folsom::BlockingClient client(o);
    std::vector<std::string> keys;
    for (int i = 0; i < 100; ++i)
        keys.push_back("ec:" + std::to_string(i));

    // Version 1: a and b. Keys go where libmemcached, given the same list, puts them.
    const std::vector<ServerAddress> ab = {address_of(a), address_of(b)};
    ASSERT_TRUE(wait_for([&] { return placement_matches(client.async(), ab, keys); }, 5s));
    EXPECT_EQ(discovery->cluster_version(), 1u);
    folsom::test::LibmemcachedPlacement lm_ab(ab);
    for (const auto& k : keys) {
        ASSERT_EQ(client.set(k, "v1"), Status::stored);
        EXPECT_NE(folsom::test::raw_request(lm_ab.port_for(k), "get " + k + "\r\n", "END\r\n")
                      .find("VALUE " + k + " 0 2"),
                  std::string::npos);
    }
    const long long b_connections = server_stat(b, "curr_connections");

    // Version 2: b leaves, c joins. Keys land on the new set; b is drained and closed.
    endpoint->serve(2, entries({address_of(a), address_of(c)}));
    const std::vector<ServerAddress> ac = {address_of(a), address_of(c)};
    ASSERT_TRUE(wait_for([&] { return placement_matches(client.async(), ac, keys); }, 5s));
    EXPECT_EQ(discovery->cluster_version(), 2u);
    folsom::test::LibmemcachedPlacement lm_ac(ac);
    const long long b_sets = server_stat(b, "cmd_set");
    std::size_t on_c = 0;
    for (const auto& k : keys) {
        ASSERT_EQ(client.set(k, "v2"), Status::stored);
        const auto port = lm_ac.port_for(k);
        on_c += port == c.port();
        EXPECT_NE(folsom::test::raw_request(port, "get " + k + "\r\n", "END\r\n")
                      .find("VALUE " + k + " 0 2"),
                  std::string::npos);
    }
    EXPECT_GT(on_c, 0u);
    EXPECT_EQ(server_stat(b, "cmd_set"), b_sets);  // nothing more reached b
    // After the drain delay the client's connection to b is closed.
    EXPECT_TRUE(wait_for([&] { return server_stat(b, "curr_connections") < b_connections; }, 5s));

    // A malformed reply, an empty node list, then no endpoint at all: the client keeps
    // version 2's set through each (and sees each resolution fail a few times).
    auto still_ac = [&] {
        return placement_matches(client.async(), ac, keys) &&
               client.set(keys[0], "x") == Status::stored;
    };
    std::size_t asked = endpoint->requests();
    endpoint->serve_raw("CONFIG cluster 0 15\r\n9\nbroken entry\n\r\nEND\r\n");
    ASSERT_TRUE(wait_for([&] { return endpoint->requests() >= asked + 3; }, 5s));
    EXPECT_TRUE(still_ac());
    asked = endpoint->requests();
    endpoint->serve(3, {});
    ASSERT_TRUE(wait_for([&] { return endpoint->requests() >= asked + 3; }, 5s));
    EXPECT_TRUE(still_ac());
    EXPECT_EQ(discovery->cluster_version(), 2u);
    endpoint.reset();                    // connection refused from now on
    std::this_thread::sleep_for(500ms);  // about five resolutions
    EXPECT_TRUE(still_ac());
    EXPECT_EQ(discovery->cluster_version(), 2u);
}

}  // namespace
