// Many servers, against real memcached processes: placement (checked against libmemcached and
// against each server's own view), weights, connection pools, a server killed under load,
// retries, failover, the connection-state listener, and following a changing server set.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/discovery.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/weighted_ch3.hpp"
#include "support/cluster_support.hpp"
#include "support/memcached_server.hpp"
#include "support/tcp_proxy.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::ServerAddress;
using folsom::Status;
using folsom::test::CompletionLedger;
using folsom::test::LibmemcachedPlacement;
using folsom::test::MemcachedServer;
using folsom::test::wait_for;

using Servers = std::vector<std::unique_ptr<MemcachedServer>>;

Servers start_servers(std::size_t n) {
    Servers s;
    for (std::size_t i = 0; i < n; ++i)
        s.push_back(std::make_unique<MemcachedServer>());
    return s;
}

// Options for the failover tests: the servers in order, failover on, a dead server kept out
// until it reconnects (10 s dead time), and quick reconnects.
folsom::Options failover_options(const Servers& servers,
                                 folsom::cluster::Distribution distribution) {
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.distribution = distribution;
    o.failover.enabled = true;
    o.failover.dead_timeout = 10s;
    o.reconnect_initial_delay = 20ms;
    o.reconnect_max_delay = 50ms;
    return o;
}

ServerAddress address_of(const MemcachedServer& s, std::uint32_t weight = 1) {
    return {"127.0.0.1", s.port(), weight};
}

std::vector<ServerAddress> addresses_of(const std::vector<const MemcachedServer*>& servers) {
    std::vector<ServerAddress> out;
    for (auto* s : servers)
        out.push_back(address_of(*s));
    return out;
}

std::vector<std::string> make_keys(std::size_t n, const std::string& prefix = "key:") {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < n; ++i)
        keys.push_back(prefix + std::to_string(i));
    return keys;
}

bool server_has(std::uint16_t port, const std::string& key) {
    return folsom::test::raw_request(port, "get " + key + "\r\n", "END\r\n")
               .find("VALUE " + key + " ") != std::string::npos;
}

long long curr_connections(std::uint16_t port) {
    return folsom::test::stat_value(folsom::test::raw_request(port, "stats\r\n", "END\r\n"),
                                    "curr_connections");
}

std::uint16_t port_of(folsom::Client& c, const std::string& key) {
    const std::string& name = c.server_name(c.server_for(key));
    if (name.empty()) return 0;  // no server yet (discovery has not answered)
    return static_cast<std::uint16_t>(std::stoi(name.substr(name.rfind(':') + 1)));
}

/// True when the client places every key where libmemcached would, for `servers`.
bool placement_matches(folsom::Client& c, const std::vector<ServerAddress>& servers,
                       const std::vector<std::string>& keys) {
    LibmemcachedPlacement lm(servers);
    for (const auto& k : keys)
        if (port_of(c, k) != lm.port_for(k)) return false;
    return true;
}

/// Sets every key through the client, then checks that each is on exactly the server
/// libmemcached chooses and on no other, asking the servers themselves.
void expect_keys_where_libmemcached_puts_them(folsom::BlockingClient& c, const Servers& servers,
                                              const std::vector<ServerAddress>& addresses,
                                              const std::vector<std::string>& keys) {
    LibmemcachedPlacement lm(addresses);
    std::map<std::uint16_t, int> per_server;
    for (const auto& k : keys) {
        ASSERT_EQ(c.set(k, "value of " + k), Status::stored);
        const std::uint16_t expected = lm.port_for(k);
        EXPECT_EQ(port_of(c.async(), k), expected) << k;
        ++per_server[expected];
        for (const auto& s : servers)
            EXPECT_EQ(server_has(s->port(), k), s->port() == expected)
                << k << " on port " << s->port() << ", libmemcached says " << expected;
    }
    EXPECT_EQ(per_server.size(), servers.size()) << "some server got no key";
}

// ---- placement ----------------------------------------------------------------------------

TEST(Cluster, KeysLandOnTheServerLibmemcachedChooses) {
    const Servers servers = start_servers(5);
    folsom::Options o;
    std::vector<ServerAddress> addresses;
    for (const auto& s : servers) {
        o.servers.push_back(s->address());
        addresses.push_back(address_of(*s));
    }
    folsom::BlockingClient c(o);
    expect_keys_where_libmemcached_puts_them(c, servers, addresses, make_keys(200));
    // A multi-get split over all five servers finds every value.
    const auto keys = make_keys(200);
    std::vector<std::string_view> views(keys.begin(), keys.end());
    const auto r = c.get_multi(views);
    ASSERT_TRUE(r.complete());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        ASSERT_TRUE(r.values[i].has_value()) << keys[i];
        EXPECT_EQ(r.values[i]->data, "value of " + keys[i]);
    }
}

TEST(Cluster, WeightedServersFollowLibmemcached) {
    const Servers servers = start_servers(3);
    folsom::Options o;
    std::vector<ServerAddress> addresses;
    for (std::uint32_t i = 0; i < servers.size(); ++i) {
        o.servers.push_back(servers[i]->address() + ":" + std::to_string(i + 1));
        addresses.push_back(address_of(*servers[i], i + 1));
    }
    folsom::BlockingClient c(o);
    expect_keys_where_libmemcached_puts_them(c, servers, addresses, make_keys(150, "w:"));
}

TEST(Cluster, EveryServerGetsItsPoolOfConnections) {
    const Servers servers = start_servers(3);
    std::vector<long long> before;
    for (const auto& s : servers)
        before.push_back(curr_connections(s->port()));
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.connections_per_server = 4;
    folsom::BlockingClient c(o);
    for (const auto& k : make_keys(60))
        ASSERT_EQ(c.set(k, "v"), Status::stored);
    for (std::size_t i = 0; i < servers.size(); ++i)
        EXPECT_TRUE(
            wait_for([&] { return curr_connections(servers[i]->port()) == before[i] + 4; }, 2s))
            << "server " << i << ": " << curr_connections(servers[i]->port()) << " connections, "
            << before[i] << " before the client";
}

TEST(Cluster, RequestsAreSpreadRoundRobinOverThePool) {
    // memcached cannot say which connection carried a request; a relay in front of it can.
    MemcachedServer server;
    folsom::test::TcpProxy proxy(server.port());
    folsom::Options o;
    o.servers = {proxy.address()};
    o.connections_per_server = 4;
    folsom::BlockingClient c(o);
    for (int i = 0; i < 400; ++i)
        c.get("round-robin-key");
    const auto bytes = proxy.bytes_from_clients();
    ASSERT_EQ(bytes.size(), 4u);
    const std::size_t per_request = std::string("get round-robin-key\r\n").size();
    for (auto b : bytes)
        EXPECT_EQ(b, 100 * per_request);  // strictly round-robin, all used
}

// ---- a server dies under load --------------------------------------------------------------

TEST(Cluster, KillingOneServerFailsOnlyItsKeysFastAndItComesBack) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.request_timeout = 2s;
    o.reconnect_initial_delay = 10ms;
    o.reconnect_max_delay = 100ms;
    o.max_outstanding_requests = 5000;
    folsom::BlockingClient c(o);
    auto& client = c.async();
    MemcachedServer& victim = *servers[1];

    // Keys grouped by owner; everything stored up front.
    std::vector<std::string> keys = make_keys(300, "load:");
    std::vector<bool> on_victim(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        on_victim[i] = port_of(client, keys[i]) == victim.port();
        ASSERT_EQ(c.set(keys[i], "v"), Status::stored);
    }

    struct Tally {
        std::atomic<std::size_t> ok{0}, victim_failed{0}, other_failed{0}, bad_error{0}, slow{0};
    } tally;
    constexpr std::size_t threads = 2, per_thread = 6000;
    CompletionLedger ledger(threads * per_thread);
    auto judge = [&](bool victim_key, std::error_code ec,
                     std::chrono::steady_clock::time_point t0) {
        if (!ec) {
            ++tally.ok;
            return;
        }
        (victim_key ? tally.victim_failed : tally.other_failed)++;
        if (ec != errc::not_connected && ec != errc::connection_lost && ec != errc::connect_failed)
            ++tally.bad_error;
        if (std::chrono::steady_clock::now() - t0 > 500ms) ++tally.slow;  // must fail fast
    };
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (std::size_t i = 0; i < per_thread; ++i) {
                const std::size_t id = t * per_thread + i;
                const std::size_t k = (id * 7919) % keys.size();
                const auto t0 = std::chrono::steady_clock::now();
                if (id % 3 == 2) {
                    // One key from each of three places on the ring.
                    const std::size_t k2 = (k + 101) % keys.size(), k3 = (k + 202) % keys.size();
                    std::string_view mk[] = {keys[k], keys[k2], keys[k3]};
                    const bool v[] = {on_victim[k], on_victim[k2], on_victim[k3]};
                    client.get_multi(mk,
                                     [&, id, v, t0](std::error_code ec, folsom::MultiGetResult r) {
                                         const bool all_victim = v[0] && v[1] && v[2];
                                         if (ec) {
                                             // Only when every key's server failed.
                                             judge(true, ec, t0);
                                             if (!all_victim) ++tally.other_failed;
                                         } else {
                                             for (std::size_t j = 0; j < 3; ++j) {
                                                 const std::error_code e =
                                                     r.complete() ? std::error_code{} : r.errors[j];
                                                 if (e) judge(v[j], e, t0);
                                                 if (!e && !r.values[j])
                                                     ++tally.bad_error;  // stored up front
                                             }
                                             ++tally.ok;
                                         }
                                         ledger.complete(id);
                                     });
                } else if (id % 3 == 1) {
                    client.set(keys[k], "v", 0s, [&, id, k, t0](std::error_code ec, Status) {
                        judge(on_victim[k], ec, t0);
                        ledger.complete(id);
                    });
                } else {
                    client.get(keys[k],
                               [&, id, k, t0](std::error_code ec, std::optional<folsom::Value>) {
                                   judge(on_victim[k], ec, t0);
                                   ledger.complete(id);
                               });
                }
                if (i % 100 == 0) std::this_thread::sleep_for(2ms);  // steady, bounded load
            }
        });
    }
    std::this_thread::sleep_for(60ms);
    victim.kill();
    std::this_thread::sleep_for(120ms);
    victim.restart();  // the victim comes back empty: later gets of its keys may miss
    for (auto& w : workers)
        w.join();

    ASSERT_TRUE(wait_for([&] { return ledger.all_done(); }, 10s))
        << ledger.never() << " never completed";
    EXPECT_EQ(ledger.twice(), 0u);
    EXPECT_GT(tally.victim_failed.load(), 0u) << "the kill hit no request";
    EXPECT_EQ(tally.other_failed.load(), 0u) << "a healthy server's request failed";
    EXPECT_EQ(tally.slow.load(), 0u) << "a failure took longer than 500 ms";
    EXPECT_TRUE(wait_for([&] { return client.outstanding() == 0; }, 2s));

    // The client found the restarted server by itself, within its backoff.
    const auto victim_key = std::find(on_victim.begin(), on_victim.end(), true) - on_victim.begin();
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                return c.set(keys[victim_key], "back") == Status::stored;
            } catch (const std::system_error&) {
                return false;
            }
        },
        2s));
}

TEST(Cluster, MultiGetReturnsPartialResultsWhileAServerIsDown) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.reconnect_initial_delay = 5s;  // stays down for the whole test
    folsom::BlockingClient c(o);
    const auto keys = make_keys(60, "mg:");
    for (const auto& k : keys)
        ASSERT_EQ(c.set(k, "v:" + k), Status::stored);
    servers[2]->kill();
    const std::uint16_t dead = servers[2]->port();
    // The client notices the EOF; then its requests fail fast.
    ASSERT_TRUE(wait_for(
        [&] {
            try {
                c.get_multi(std::vector<std::string_view>(keys.begin(), keys.end()));
            } catch (...) {
            }
            return true;
        },
        1s));
    std::this_thread::sleep_for(50ms);

    std::vector<std::string_view> views(keys.begin(), keys.end());
    const auto start = std::chrono::steady_clock::now();
    const auto r = c.get_multi(views);  // no exception: some servers answered
    EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
    ASSERT_FALSE(r.complete());
    std::vector<std::string_view> dead_keys;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (port_of(c.async(), keys[i]) == dead) {
            dead_keys.push_back(keys[i]);
            EXPECT_FALSE(r.values[i].has_value());
            EXPECT_TRUE(r.errors[i] == errc::not_connected || r.errors[i] == errc::connection_lost)
                << r.errors[i].message();
        } else {
            EXPECT_FALSE(r.errors[i]) << keys[i] << ": " << r.errors[i].message();
            ASSERT_TRUE(r.values[i].has_value()) << keys[i];
            EXPECT_EQ(r.values[i]->data, "v:" + keys[i]);
        }
    }
    ASSERT_FALSE(dead_keys.empty());
    // The zero-copy form reports the same: every live key's value once, why each dead key
    // went unanswered, and the completion after every hit.
    {
        std::vector<int> calls(keys.size(), 0);
        std::atomic<int> total{0};
        const auto v = c.async()
                           .get_multi_view(
                               views,
                               [&](std::size_t i, const folsom::ValueView& value) {
                                   ++calls.at(i);  // keys of one server: one thread
                                   EXPECT_EQ(value.data, "v:" + keys.at(i));
                                   ++total;
                               },
                               asio::use_future)
                           .get();
        ASSERT_FALSE(v.complete());
        EXPECT_EQ(v.hits, keys.size() - dead_keys.size());
        EXPECT_EQ(static_cast<std::size_t>(total.load()), v.hits);
        for (std::size_t i = 0; i < keys.size(); ++i) {
            const bool is_dead = port_of(c.async(), keys[i]) == dead;
            EXPECT_EQ(calls[i], is_dead ? 0 : 1) << keys[i];
            EXPECT_EQ(static_cast<bool>(v.errors[i]), is_dead) << keys[i];
        }
    }
    // Every key on the dead server: the multi-get itself fails.
    try {
        c.get_multi(dead_keys);
        ADD_FAILURE() << "a multi-get of only dead keys succeeded";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::not_connected);
    }
}

// ---- retry ----------------------------------------------------------------------------------

class ClusterRetry : public ::testing::Test {
  protected:
    // One server behind a relay, two connections: a request is lost on one while the other
    // stays healthy.
    folsom::Options options() const {
        folsom::Options o;
        o.servers = {proxy_.address()};
        o.connections_per_server = 2;
        o.request_timeout = 5s;
        o.reconnect_initial_delay = 1s;  // the dropped connection stays down meanwhile
        return o;
    }
    /// Starts `request` while the relay swallows it, then drops the connection it went on.
    template <class F>
    auto lose_in_flight(folsom::BlockingClient& c, F request) {
        EXPECT_TRUE(wait_for([&] { return proxy_.connections() == 2; }, 2s));
        // Both connections carried traffic already, so neither is "fresh" at drop time.
        c.get("warm-1");
        c.get("warm-2");
        proxy_.swallow(true);
        auto f = request();
        EXPECT_TRUE(wait_for(
            [&] {
                for (auto b : proxy_.bytes_from_clients())
                    if (b > 2 * std::string("get warm-1\r\n").size()) return true;
                return false;
            },
            2s));
        std::this_thread::sleep_for(20ms);
        EXPECT_EQ(proxy_.drop_swallowing(), 1u);
        return f;
    }

    MemcachedServer server_;
    folsom::test::TcpProxy proxy_{server_.port()};
};

TEST_F(ClusterRetry, AnIdempotentGetLostInFlightIsRetriedOnTheOtherConnection) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    auto f = lose_in_flight(c, [&] { return c.async().get("k", asio::use_future); });
    auto v = f.get();  // no exception
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->data, "v");
}

TEST_F(ClusterRetry, AMultiGetPartLostInFlightIsRetried) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("a", "1"), Status::stored);
    ASSERT_EQ(c.set("b", "2"), Status::stored);
    std::string_view keys[] = {"a", "b", "missing"};
    auto f = lose_in_flight(c, [&] { return c.async().get_multi(keys, asio::use_future); });
    auto r = f.get();
    ASSERT_TRUE(r.complete());
    EXPECT_EQ(r.values[0]->data, "1");
    EXPECT_EQ(r.values[1]->data, "2");
    EXPECT_FALSE(r.values[2].has_value());
}

TEST_F(ClusterRetry, DeleteAndTouchAreRetried) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("t", "v"), Status::stored);
    auto f = lose_in_flight(c, [&] { return c.async().touch("t", 60s, asio::use_future); });
    EXPECT_EQ(f.get(), Status::touched);
    auto g = lose_in_flight(c, [&] { return c.async().del("t", asio::use_future); });
    EXPECT_EQ(g.get(), Status::deleted);  // the swallowed attempt never reached the server
}

TEST_F(ClusterRetry, IncrAndSetAreNeverRetried) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("n", "5"), Status::stored);
    auto f = lose_in_flight(c, [&] { return c.async().incr("n", 1, asio::use_future); });
    try {
        f.get();
        ADD_FAILURE() << "incr was retried (or succeeded)";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::connection_lost);
    }
    auto g = lose_in_flight(c, [&] { return c.async().set("n", "9", 0s, asio::use_future); });
    try {
        g.get();
        ADD_FAILURE() << "set was retried (or succeeded)";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::connection_lost);
    }
    EXPECT_EQ(c.get("n")->data, "5");  // neither reached the server
}

TEST_F(ClusterRetry, RetryCanBeTurnedOff) {
    auto o = options();
    o.retry_idempotent = false;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    auto f = lose_in_flight(c, [&] { return c.async().get("k", asio::use_future); });
    try {
        f.get();
        ADD_FAILURE() << "retried although retry_idempotent is off";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::connection_lost);
    }
}

TEST_F(ClusterRetry, ShutdownIsNotRetried) {
    auto o = options();
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    proxy_.swallow(true);
    auto f = c.async().get("k", asio::use_future);
    std::this_thread::sleep_for(30ms);
    c.async().shutdown();
    try {
        f.get();
        ADD_FAILURE() << "completed after shutdown";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::closed);
    }
    proxy_.swallow(false);
}

// ---- failover -------------------------------------------------------------------------------

TEST(ClusterFailover, ADeadServersKeysMoveWhereLibmemcachedAutoEjectPutsThem) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.failover.enabled = true;
    o.failover.dead_timeout = 10s;  // only a reconnect brings it back in this test
    o.reconnect_initial_delay = 20ms;
    o.reconnect_max_delay = 50ms;
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(200, "fo:");
    const auto all = addresses_of({servers[0].get(), servers[1].get(), servers[2].get()});
    const auto live = addresses_of({servers[0].get(), servers[2].get()});
    ASSERT_TRUE(placement_matches(client, all, keys));
    for (const auto& k : keys)
        ASSERT_EQ(c.set(k, "v"), Status::stored);

    servers[1]->kill();
    // With equal weights, walking the ring past a dead server's points is exactly
    // libmemcached's auto-eject (which rebuilds the ring without it).
    ASSERT_TRUE(wait_for([&] { return placement_matches(client, live, keys); }, 2s));
    for (const auto& k : keys) {
        ASSERT_EQ(c.set(k, "failed over"), Status::stored) << k;
        EXPECT_EQ(c.get(k)->data, "failed over");
    }

    servers[1]->restart();
    EXPECT_TRUE(wait_for([&] { return placement_matches(client, all, keys); }, 2s));
}

// mcrouter's Ch3 has no ring to walk: a dead server's keys go where mcrouter's WeightedCh3
// sends the keys of a server of weight 0 (the same salted rehashes), every other key stays.
TEST(ClusterFailover, Ch3MovesADeadServersKeysAsWeightZeroWould) {
    Servers servers = start_servers(3);
    const folsom::Options o =
        failover_options(servers, folsom::cluster::Distribution::mcrouter_ch3);
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(200, "ch3:");
    const auto placed_by = [&](const std::vector<double>& weights) {
        for (const auto& k : keys)
            if (port_of(client, k) != servers[folsom::cluster::weighted_ch3(k, weights)]->port())
                return false;
        return true;
    };
    // Weight 1 everywhere is Ch3 itself: server furc_hash(key, 3) of the list.
    ASSERT_TRUE(placed_by({1, 1, 1}));
    for (const auto& k : keys) {
        ASSERT_EQ(port_of(client, k), servers[folsom::cluster::furc_hash(k, 3)]->port());
        ASSERT_EQ(c.set(k, "v"), Status::stored);
    }

    servers[1]->kill();
    ASSERT_TRUE(wait_for([&] { return placed_by({1, 0, 1}); }, 2s));
    for (const auto& k : keys) {
        ASSERT_EQ(c.set(k, "failed over"), Status::stored) << k;
        EXPECT_EQ(c.get(k)->data, "failed over");
    }

    servers[1]->restart();
    EXPECT_TRUE(wait_for([&] { return placed_by({1, 1, 1}); }, 2s));
}

// pymemcache's HashClient removes a dead server from its rendezvous hasher: its keys go to the
// highest score among the servers left, every other key stays (no ring to walk).
TEST(ClusterFailover, RendezvousMovesADeadServersKeysAsPymemcacheWould) {
    Servers servers = start_servers(3);
    const folsom::Options o =
        failover_options(servers, folsom::cluster::Distribution::pymemcache_rendezvous);
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(300, "rv:");
    const auto placed_over = [&](const std::vector<const MemcachedServer*>& over) {
        const auto addresses = addresses_of(over);
        const folsom::cluster::Continuum ring(addresses,
                                              folsom::cluster::Distribution::pymemcache_rendezvous);
        for (const auto& k : keys)
            if (port_of(client, k) != over[ring.server_index(k)]->port()) return false;
        return true;
    };
    ASSERT_TRUE(placed_over({servers[0].get(), servers[1].get(), servers[2].get()}));

    servers[1]->kill();
    ASSERT_TRUE(wait_for([&] { return placed_over({servers[0].get(), servers[2].get()}); }, 2s));
    for (const auto& k : keys) {
        ASSERT_EQ(c.set(k, "failed over"), Status::stored) << k;
        EXPECT_EQ(c.get(k)->data, "failed over");
    }
    servers[1]->restart();
    EXPECT_TRUE(wait_for(
        [&] {
            return placed_over({servers[0].get(), servers[1].get(), servers[2].get()});
        },
        2s));
}

// failure_limit (pymemcache's retry_attempts + 1, libmemcached's SERVER_FAILURE_LIMIT): the
// server leaves the placement only at its limit-th failure in a row, so no sooner than
// limit - 1 reconnect delays after it went down.
TEST(ClusterFailover, FailureLimitKeepsAFailingServerPlacedUntilItsLimit) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.failover.enabled = true;
    o.failover.dead_timeout = 10s;
    o.failover.failure_limit = 4;
    o.reconnect_initial_delay = 150ms;
    o.reconnect_max_delay = 150ms;
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(200, "fl:");
    const auto all = addresses_of({servers[0].get(), servers[1].get(), servers[2].get()});
    const auto live = addresses_of({servers[0].get(), servers[2].get()});
    ASSERT_TRUE(placement_matches(client, all, keys));
    const auto it = std::find_if(keys.begin(), keys.end(), [&](const std::string& k) {
        return port_of(client, k) == servers[1]->port();
    });
    ASSERT_NE(it, keys.end());
    ASSERT_EQ(c.set(*it, "v"), Status::stored);

    const auto killed = std::chrono::steady_clock::now();
    servers[1]->kill();
    ASSERT_TRUE(wait_for([&] { return placement_matches(client, live, keys); }, 5s));
    // Three reconnect delays of at least 80% of 150 ms each (the backoff's jitter) lie between
    // the first failure and the fourth.
    EXPECT_GE(std::chrono::steady_clock::now() - killed, 360ms);
    servers[1]->restart();
    EXPECT_TRUE(wait_for([&] { return placement_matches(client, all, keys); }, 2s));
}

TEST(ClusterFailover, DeadTimeoutBringsAServerBackEvenIfStillDown) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.failover.enabled = true;
    o.failover.dead_timeout = 300ms;
    o.reconnect_initial_delay = 3s;  // no reconnect attempt during the test
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(100, "dt:");
    const auto all = addresses_of({servers[0].get(), servers[1].get(), servers[2].get()});
    const auto live = addresses_of({servers[1].get(), servers[2].get()});
    ASSERT_TRUE(placement_matches(client, all, keys));
    servers[0]->kill();
    const auto killed = std::chrono::steady_clock::now();
    ASSERT_TRUE(wait_for([&] { return placement_matches(client, live, keys); }, 1s));
    ASSERT_TRUE(wait_for([&] { return placement_matches(client, all, keys); }, 2s));
    // The client may see the EOF a little before kill() has reaped the process.
    EXPECT_GE(std::chrono::steady_clock::now() - killed, 250ms);
    // Back on the ring but still down: its keys fail fast again.
    const auto it = std::find_if(keys.begin(), keys.end(), [&](const std::string& k) {
        return port_of(client, k) == servers[0]->port();
    });
    ASSERT_NE(it, keys.end());
    try {
        c.get(*it);
        ADD_FAILURE() << "a dead server answered";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::not_connected);
    }
}

TEST(ClusterFailover, OffByDefaultKeysStayOnTheirDeadServer) {
    Servers servers = start_servers(3);
    folsom::Options o;
    for (const auto& s : servers)
        o.servers.push_back(s->address());
    o.reconnect_initial_delay = 3s;
    folsom::BlockingClient c(o);
    const auto keys = make_keys(100, "nf:");
    const auto all = addresses_of({servers[0].get(), servers[1].get(), servers[2].get()});
    servers[1]->kill();
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(placement_matches(c.async(), all, keys));
}

TEST(ClusterFailover, ARetryFollowsTheFailover) {
    // Server 0 direct, server 1 behind a relay that loses a request in flight: its only
    // connection drops, the server is marked dead, and the retried get goes to server 0.
    MemcachedServer direct, behind;
    folsom::test::TcpProxy proxy(behind.port());
    folsom::Options o;
    o.servers = {direct.address(), proxy.address()};
    o.failover.enabled = true;
    o.failover.dead_timeout = 10s;
    o.reconnect_initial_delay = 2s;
    o.request_timeout = 5s;
    folsom::BlockingClient c(o);
    std::string key;
    for (int i = 0; key.empty(); ++i) {
        const std::string k = "rf:" + std::to_string(i);
        if (port_of(c.async(), k) == proxy.port()) key = k;
    }
    ASSERT_EQ(c.set(key, "on the relayed server"), Status::stored);
    ASSERT_EQ(folsom::test::raw_request(direct.port(), "set " + key + " 0 0 9\r\nfailover!\r\n"),
              "STORED\r\n");
    proxy.swallow(true);
    auto f = c.async().get(key, asio::use_future);
    ASSERT_TRUE(wait_for(
        [&] {
            const auto b = proxy.bytes_from_clients();
            return !b.empty() &&
                   b[0] > std::string("set " + key + " 0 0 21\r\non the relayed server\r\n").size();
        },
        2s));
    ASSERT_EQ(proxy.drop_swallowing(), 1u);
    const auto v = f.get();  // no error: answered by the server the key fails over to
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->data, "failover!");
    EXPECT_EQ(port_of(c.async(), key), direct.port());
}

// ---- connection-state listener -------------------------------------------------------------

TEST(ClusterListener, ReportsConnectDisconnectReconnectAndClose) {
    Servers servers = start_servers(2);
    struct Log {
        std::mutex mu;
        std::vector<std::pair<std::string, folsom::ConnectionState>> events;
        bool saw(const std::string& server, folsom::ConnectionState s, std::size_t from = 0) {
            std::lock_guard lk(mu);
            for (std::size_t i = from; i < events.size(); ++i)
                if (events[i].first == server && events[i].second == s) return true;
            return false;
        }
        std::size_t size() {
            std::lock_guard lk(mu);
            return events.size();
        }
    };
    auto log = std::make_shared<Log>();
    folsom::Options o;
    o.servers = {servers[0]->address(), servers[1]->address()};
    o.connections_per_server = 2;  // still one event per server change
    o.reconnect_initial_delay = 10ms;
    o.reconnect_max_delay = 50ms;
    o.on_connection_state = [log](const std::string& server, folsom::ConnectionState s) {
        std::lock_guard lk(log->mu);
        log->events.emplace_back(server, s);
    };
    const std::string a = servers[0]->address(), b = servers[1]->address();
    {
        folsom::BlockingClient c(o);
        using S = folsom::ConnectionState;
        EXPECT_TRUE(
            wait_for([&] { return log->saw(a, S::connected) && log->saw(b, S::connected); }, 2s));
        const std::size_t mark = log->size();
        servers[1]->kill();
        EXPECT_TRUE(wait_for([&] { return log->saw(b, S::disconnected, mark); }, 2s));
        EXPECT_FALSE(log->saw(a, S::disconnected));
        const std::size_t mark2 = log->size();
        servers[1]->restart();
        EXPECT_TRUE(wait_for([&] { return log->saw(b, S::connected, mark2); }, 2s));
        EXPECT_EQ(c.set("after", "reconnect"), Status::stored);
        // Folded per server: never two `connected` in a row for one server.
        std::lock_guard lk(log->mu);
        std::map<std::string, folsom::ConnectionState> last;
        for (auto& [server, s] : log->events) {
            auto it = last.find(server);
            if (it != last.end()) {
                EXPECT_NE(it->second, s) << server << " reported twice";
            }
            last[server] = s;
        }
    }
    EXPECT_TRUE(log->saw(a, folsom::ConnectionState::closed));
    EXPECT_TRUE(log->saw(b, folsom::ConnectionState::closed));
}

// ---- a changing server set ----------------------------------------------------------------

TEST(ClusterDiscovery, FollowsTheServerSetWithoutLosingARequest) {
    Servers servers = start_servers(3);
    const auto a = address_of(*servers[0]), b = address_of(*servers[1]),
               d = address_of(*servers[2]);
    auto discovery = std::make_shared<folsom::cluster::StaticDiscovery>(std::vector{a, b});
    folsom::Options o;
    o.discovery = discovery;
    o.discovery_interval = 20ms;
    o.discovery_drain_delay = 300ms;
    o.max_outstanding_requests = 5000;
    const long long b_before = curr_connections(b.port);
    folsom::BlockingClient c(o);
    auto& client = c.async();
    const auto keys = make_keys(200, "disc:");
    ASSERT_TRUE(wait_for([&] { return placement_matches(client, {a, b}, keys); }, 2s));

    // Steady load through every switch: nothing may fail, nothing may complete twice.
    constexpr std::size_t total = 20000;
    CompletionLedger ledger(total);
    std::atomic<std::size_t> failed{0};
    std::thread load([&] {
        for (std::size_t id = 0; id < total; ++id) {
            const std::string& k = keys[id % keys.size()];
            auto done = [&, id](std::error_code ec) {
                if (ec) ++failed;
                ledger.complete(id);
            };
            if (id % 2)
                client.set(k, "v", 0s, [done](std::error_code ec, Status) { done(ec); });
            else
                client.get(k,
                           [done](std::error_code ec, std::optional<folsom::Value>) { done(ec); });
            if (id % 100 == 0) std::this_thread::sleep_for(1ms);
        }
    });

    discovery->set({a, b, d});  // grow
    EXPECT_TRUE(wait_for([&] { return placement_matches(client, {a, b, d}, keys); }, 2s));
    discovery->set({a, d});  // shrink: b drains, then closes
    EXPECT_TRUE(wait_for([&] { return placement_matches(client, {a, d}, keys); }, 2s));
    load.join();
    ASSERT_TRUE(wait_for([&] { return ledger.all_done(); }, 10s))
        << ledger.never() << " never completed";
    EXPECT_EQ(ledger.twice(), 0u);
    EXPECT_EQ(failed.load(), 0u);
    // After the drain delay the removed server's connections are closed.
    EXPECT_TRUE(wait_for([&] { return curr_connections(b.port) == b_before; }, 3s));
    // Stats go to the current members only.
    const auto stats = c.stats();
    std::set<std::string> names;
    for (auto& s : stats)
        names.insert(s.server);
    EXPECT_EQ(names, (std::set<std::string>{a.to_string(), d.to_string()}));
    // Keys set now land on the new owners.
    LibmemcachedPlacement lm({a, d});
    for (std::size_t i = 0; i < 20; ++i) {
        ASSERT_EQ(c.set(keys[i], "new"), Status::stored);
        EXPECT_TRUE(server_has(lm.port_for(keys[i]), keys[i]));
    }
}

TEST(ClusterDiscovery, StartsEmptyFailingFastUntilTheFirstAnswer) {
    MemcachedServer server;
    auto discovery = std::make_shared<folsom::cluster::StaticDiscovery>();
    folsom::Options o;
    o.discovery = discovery;
    o.discovery_interval = 20ms;
    folsom::BlockingClient c(o);
    try {
        c.get("k");
        ADD_FAILURE() << "a request with no server succeeded";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::not_connected);
    }
    discovery->set({address_of(server)});
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                return c.set("k", "v") == Status::stored;
            } catch (const std::system_error&) {
                return false;
            }
        },
        2s));
    EXPECT_TRUE(server_has(server.port(), "k"));
}

}  // namespace
