// Asks Debian's libmemcached where keys go and checks that our continuum agrees, key by key.
// No server needs to run: libmemcached places keys without connecting.
#include "folsom/cluster/continuum.hpp"
#include "folsom/server_address.hpp"

#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <random>
#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;

// Keys of every length memcached allows, over the printable bytes, plus a plain counter
// sequence: the same 10,000 every run.
std::vector<std::string> test_keys() {
    std::vector<std::string> keys;
    keys.reserve(10'000);
    for (int i = 0; i < 5'000; ++i)
        keys.push_back("key:" + std::to_string(i));
    std::mt19937 rng(20240605);
    std::uniform_int_distribution<int> length(1, 250);
    std::uniform_int_distribution<int> byte(0x21, 0x7e);
    while (keys.size() < 10'000) {
        std::string k(static_cast<std::size_t>(length(rng)), ' ');
        for (char& c : k)
            c = static_cast<char>(byte(rng));
        keys.push_back(std::move(k));
    }
    return keys;
}

// A libmemcached handle with the servers added in order, as an application configures it.
class Libmemcached {
  public:
    Libmemcached(const std::vector<ServerAddress>& servers, memcached_server_distribution_t dist)
        : memc_(memcached_create(nullptr)) {
        // KETAMA_WEIGHTED: MD5 for keys and points, the weighted point count.
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
        if (dist != MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED) {
            // The spymemcached mode keeps the weighted flag and the MD5 key hash set above.
            EXPECT_EQ(memcached_behavior_set_distribution(memc_, dist), MEMCACHED_SUCCESS);
        }
        for (const auto& s : servers) {
            // A socket path goes in as libmemcached's own socket server (port 0); weight 1
            // through the call without a weight, as most applications add one.
            const memcached_return_t rc =
                !s.is_unix_socket()
                    ? memcached_server_add_with_weight(memc_, s.host.c_str(), s.port, s.weight)
                : s.weight == 1
                    ? memcached_server_add_unix_socket(memc_, s.host.c_str())
                    : memcached_server_add_unix_socket_with_weight(memc_, s.host.c_str(), s.weight);
            EXPECT_EQ(rc, MEMCACHED_SUCCESS) << s.to_string();
        }
        EXPECT_EQ(memcached_server_count(memc_), servers.size());
        for (std::uint32_t i = 0; i < servers.size(); ++i) {
            const auto* inst = memcached_server_instance_by_position(memc_, i);
            if (servers[i].is_unix_socket()) {
                EXPECT_STREQ(memcached_server_type(inst), "SOCKET");
                EXPECT_EQ(memcached_server_port(inst), 0);  // what its point names print
            }
        }
    }
    /// A handle configured from a libmemcached configuration string ("--SOCKET=..."), with the
    /// weighted ketama MD5 continuum.
    explicit Libmemcached(const std::string& config)
        : memc_(memcached(config.data(), config.size())) {
        EXPECT_NE(memc_, nullptr) << config;
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
    }
    ~Libmemcached() { memcached_free(memc_); }
    Libmemcached(const Libmemcached&) = delete;
    Libmemcached& operator=(const Libmemcached&) = delete;

    std::size_t server_index(const std::string& key) const {
        return memcached_generate_hash(memc_, key.data(), key.size());
    }

  private:
    memcached_st* memc_;
};

void expect_same_placement(const Libmemcached& reference, const std::vector<ServerAddress>& servers,
                           Distribution ours) {
    const Continuum continuum(servers, ours);
    std::size_t mismatches = 0;
    std::vector<std::size_t> per_server(servers.size());
    for (const auto& key : test_keys()) {
        const auto expected = reference.server_index(key);
        const auto actual = continuum.server_index(key);
        ++per_server[actual];
        if (expected != actual && ++mismatches <= 5) {
            ADD_FAILURE() << "key \"" << key << "\": libmemcached " << expected << ", ours "
                          << actual;
        }
        // The key hash itself: libmemcached's MD5 hash value is our ring position.
        if (key.size() < 12) {
            ASSERT_EQ(memcached_generate_hash_value(key.data(), key.size(), MEMCACHED_HASH_MD5),
                      continuum.key_position(key));
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of 10000 keys";
    // Guard against a vacuous pass: every server with weight takes keys.
    if (servers.size() > 1) {
        for (std::size_t s = 0; s < servers.size(); ++s)
            EXPECT_GT(per_server[s], 0u) << s;
    }
}

void expect_same_placement(const std::vector<ServerAddress>& servers,
                           memcached_server_distribution_t theirs, Distribution ours) {
    const Libmemcached reference(servers, theirs);
    expect_same_placement(reference, servers, ours);
}

TEST(KetamaLibmemcachedCompat, MixedPortsAndWeights) {
    expect_same_placement({{"10.0.0.1", 11211, 1},
                           {"10.0.0.2", 11212, 3},
                           {"cache-c.example", 11211, 2},
                           {"10.0.0.4", 22122, 1},
                           {"cache-e.example", 11300, 5}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

TEST(KetamaLibmemcachedCompat, ThreeServersOnTheDefaultPort) {
    expect_same_placement({{"10.0.1.1", 11211, 1}, {"10.0.1.2", 11211, 1}, {"10.0.1.3", 11211, 1}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

TEST(KetamaLibmemcachedCompat, PublishedEightServerPool) {
    expect_same_placement({{"10.0.1.1", 11211, 600},
                           {"10.0.1.2", 11211, 300},
                           {"10.0.1.3", 11211, 200},
                           {"10.0.1.4", 11211, 350},
                           {"10.0.1.5", 11211, 1000},
                           {"10.0.1.6", 11211, 800},
                           {"10.0.1.7", 11211, 950},
                           {"10.0.1.8", 11211, 100}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

// The point count is computed in float: with equal weights it gives 39 digests instead of 40
// for 25, 47 or 50 servers (among others), and with weights 1,6,6,6,6 the servers get 7 and 47
// digests where double arithmetic gives 8 and 48. We must round exactly as libmemcached does.
std::vector<ServerAddress> pool(int n, std::uint32_t first_weight = 1, std::uint32_t others = 1) {
    std::vector<ServerAddress> servers;
    for (int i = 0; i < n; ++i) {
        servers.push_back({"192.168.7." + std::to_string(i + 1),
                           static_cast<std::uint16_t>(i % 2 ? 11211 : 11220 + i),
                           i == 0 ? first_weight : others});
    }
    return servers;
}

TEST(KetamaLibmemcachedCompat, EqualWeightsForManyPoolSizes) {
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 25, 47, 50}) {
        SCOPED_TRACE(n);
        expect_same_placement(pool(n), MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                              Distribution::ketama_libmemcached);
    }
}

TEST(KetamaLibmemcachedCompat, FloatRoundingOfTheWeightedShare) {
    expect_same_placement(pool(5, 1, 6), MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
    expect_same_placement(pool(7, 22), MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

TEST(KetamaLibmemcachedCompat, Ipv6Host) {
    expect_same_placement({{"::1", 11211, 1}, {"2001:db8::2", 11212, 2}, {"10.0.0.3", 11211, 1}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

// libmemcached's MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY with weights is spymemcached's
// weighted KetamaNodeLocator ("/ip:port-i" names, the same float formula, MD5 keys).
TEST(KetamaLibmemcachedCompat, SpymemcachedModeWithWeights) {
    expect_same_placement({{"10.0.0.1", 11211, 2},
                           {"10.0.0.2", 11212, 3},
                           {"10.0.0.3", 11211, 1},
                           {"10.0.0.4", 22122, 4}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY,
                          Distribution::ketama_spymemcached);
    expect_same_placement({{"10.0.1.1", 11211, 600},
                           {"10.0.1.2", 11211, 300},
                           {"10.0.1.3", 11211, 200},
                           {"10.0.1.4", 11211, 350},
                           {"10.0.1.5", 11211, 1000},
                           {"10.0.1.6", 11211, 800},
                           {"10.0.1.7", 11211, 950},
                           {"10.0.1.8", 11211, 100}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY,
                          Distribution::ketama_spymemcached);
}

// Unix socket servers: libmemcached gives a socket server port 0 and names its points
// "<path>:0-<i>" (0 is not the default port, so the ":0" is printed); the path is hashed as
// written. Placement must match key by key in rings that mix sockets with TCP servers.
TEST(KetamaLibmemcachedCompat, UnixSocketsMixedWithTcpServers) {
    expect_same_placement({ServerAddress::unix_socket("/run/memcached/memcached.sock"),
                           {"10.0.0.1", 11211, 1},
                           ServerAddress::unix_socket("/var/run/mc-b.sock"),
                           {"cache-d.example", 11212, 1},
                           {"::1", 11300, 1}},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

TEST(KetamaLibmemcachedCompat, WeightedUnixSocketsMixedWithTcpServers) {
    expect_same_placement({ServerAddress::unix_socket("/tmp/a.sock", 3),
                           {"10.0.0.1", 11211, 1},
                           ServerAddress::unix_socket("/tmp/b.sock"),
                           {"10.0.0.2", 11212, 2},
                           ServerAddress::unix_socket("/srv/cache/with:colon.sock", 5)},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED,
                          Distribution::ketama_libmemcached);
}

TEST(KetamaLibmemcachedCompat, OnlyUnixSockets) {
    expect_same_placement(
        {ServerAddress::unix_socket("/run/mc-1.sock"), ServerAddress::unix_socket("/run/mc-2.sock"),
         ServerAddress::unix_socket("/run/mc-3.sock")},
        MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED, Distribution::ketama_libmemcached);
}

// libmemcached's spymemcached mode names a socket "/<path>:0-<i>" too.
TEST(KetamaLibmemcachedCompat, SpymemcachedModeWithUnixSockets) {
    expect_same_placement({ServerAddress::unix_socket("/run/mc-1.sock", 2),
                           {"10.0.0.2", 11212, 3},
                           ServerAddress::unix_socket("/run/mc-3.sock", 1)},
                          MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY,
                          Distribution::ketama_spymemcached);
}

// Our list syntax against libmemcached's configuration string: "/path/?W" is the weight suffix
// of its --SOCKET="/path"/?W, and a socket path in our list is the server libmemcached's
// --SOCKET names.
TEST(KetamaLibmemcachedCompat, ServerListSyntaxMatchesLibmemcachedConfigurationStrings) {
    std::vector<ServerAddress> ours;
    ASSERT_FALSE(folsom::parse_server_list(
        "/run/memcached/a.sock/?3, 10.0.0.1:11211, /run/memcached/b.sock, 10.0.0.2:11212:2", ours));
    ASSERT_EQ(ours.size(), 4u);
    EXPECT_EQ(ours[0], ServerAddress::unix_socket("/run/memcached/a.sock", 3));
    EXPECT_EQ(ours[2], ServerAddress::unix_socket("/run/memcached/b.sock", 1));
    const Libmemcached reference(
        "--SOCKET=\"/run/memcached/a.sock\"/?3 --SERVER=10.0.0.1:11211 "
        "--SOCKET=\"/run/memcached/b.sock\" --SERVER=10.0.0.2:11212/?2");
    expect_same_placement(reference, ours, Distribution::ketama_libmemcached);
}

}  // namespace
