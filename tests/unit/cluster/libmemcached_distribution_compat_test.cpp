// Asks Debian's libmemcached where keys go under its other distributions — MODULA (its
// default), CONSISTENT without weights, and weighted ketama with a key hash other than MD5 —
// with each hash it offers (the ones pylibmc's "hash" and php-memcached's OPT_HASH name), and
// checks that folsom's Distribution agrees key by key. Also each hash function by itself. No
// server runs: libmemcached places keys without connecting.
#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/distribution.hpp"
#include "folsom/server_address.hpp"

#include "support/reference_client.hpp"

#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <algorithm>
#include <libhashkit-1.0/hashkit.h>
#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;
using folsom::cluster::KeyHash;

// The test keys, and keys with bytes from 0x80 up (which libmemcached's hashes read as
// signed chars).
std::vector<std::string> keys() {
    std::vector<std::string> k = folsom::test::placement_keys();
    for (int i = 0; i < 500; ++i) {
        std::string key = "high:" + std::to_string(i);
        key += static_cast<char>(0x80 + i % 128);
        key += static_cast<char>(0xff - i % 64);
        k.push_back(key);
    }
    return k;
}

const std::vector<KeyHash> libmemcached_hashes = {
    KeyHash::one_at_a_time, KeyHash::md5,      KeyHash::crc,    KeyHash::fnv1_64, KeyHash::fnv1a_64,
    KeyHash::fnv1_32,       KeyHash::fnv1a_32, KeyHash::murmur, KeyHash::jenkins, KeyHash::murmur3};

std::vector<ServerAddress> three_servers() {
    return {{"10.0.0.1", 11211, 1}, {"10.0.0.2", 11212, 1}, {"cache-c.example", 11211, 1}};
}

std::vector<ServerAddress> ten_servers(bool weighted) {
    std::vector<ServerAddress> s = three_servers();
    s.push_back({"10.0.0.4", 22122, 1});
    s.push_back(ServerAddress::unix_socket("/run/memcached/mc.sock"));
    for (int i = 6; i <= 10; ++i)
        s.push_back({"10.0.1." + std::to_string(i), 11211, 1});
    if (weighted) {
        s[1].weight = 3;
        s[4].weight = 2;
        s[9].weight = 5;
    }
    return s;
}

enum class Mode { modula, consistent, ketama_weighted };

class Libmemcached {
  public:
    Libmemcached(const std::vector<ServerAddress>& servers, Mode mode, KeyHash hash)
        : memc_(memcached_create(nullptr)) {
        switch (mode) {
            case Mode::modula:
                break;  // libmemcached's default
            case Mode::consistent:
                EXPECT_EQ(
                    memcached_behavior_set_distribution(memc_, MEMCACHED_DISTRIBUTION_CONSISTENT),
                    MEMCACHED_SUCCESS);
                break;
            case Mode::ketama_weighted:
                EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                          MEMCACHED_SUCCESS);
                break;
        }
        // As pylibmc and php-memcached set "hash" / OPT_HASH: after the distribution.
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_HASH,
                                         static_cast<std::uint64_t>(hash)),
                  MEMCACHED_SUCCESS);
        for (const auto& s : servers) {
            const memcached_return_t rc =
                s.is_unix_socket()
                    ? memcached_server_add_unix_socket_with_weight(memc_, s.host.c_str(), s.weight)
                    : memcached_server_add_with_weight(memc_, s.host.c_str(), s.port, s.weight);
            EXPECT_EQ(rc, MEMCACHED_SUCCESS) << s.to_string();
        }
    }
    ~Libmemcached() { memcached_free(memc_); }
    Libmemcached(const Libmemcached&) = delete;
    Libmemcached& operator=(const Libmemcached&) = delete;
    memcached_st* get() const { return memc_; }
    std::size_t server_index(const std::string& key) const {
        return memcached_generate_hash(memc_, key.data(), key.size());
    }

  private:
    memcached_st* memc_;
};

void expect_same_placement(const std::vector<ServerAddress>& servers, Mode mode, KeyHash hash,
                           Distribution ours) {
    const Libmemcached reference(servers, mode, hash);
    const Continuum continuum(servers, ours);
    std::size_t mismatches = 0;
    std::vector<std::size_t> per_server(servers.size());
    const auto all = keys();
    for (const auto& key : all) {
        const auto expected = reference.server_index(key);
        const auto actual = continuum.server_index(key);
        ++per_server[actual];
        if (expected != actual && ++mismatches <= 3)
            ADD_FAILURE() << folsom::cluster::distribution_name(ours) << " key \"" << key
                          << "\": libmemcached " << expected << ", ours " << actual;
    }
    EXPECT_EQ(mismatches, 0u) << folsom::cluster::distribution_name(ours) << ": of " << all.size()
                              << " keys on " << servers.size() << " servers";
    // Guard against a vacuous pass: every server takes keys. Except with crc on a ring: its
    // 15-bit key hashes all fall below 32768, on the ring's first arc or two, in libmemcached
    // as here.
    if (hash == KeyHash::crc && mode != Mode::modula) {
        EXPECT_GE(std::count_if(per_server.begin(), per_server.end(),
                                [](std::size_t n) { return n > 0; }),
                  1);
        return;
    }
    for (std::size_t s = 0; s < servers.size(); ++s)
        EXPECT_GT(per_server[s], 0u) << folsom::cluster::distribution_name(ours) << " " << s;
}

TEST(LibmemcachedHashCompat, EachHashMatchesLibhashkit) {
    for (const KeyHash h : libmemcached_hashes) {
        ASSERT_TRUE(libhashkit_has_algorithm(static_cast<hashkit_hash_algorithm_t>(h)))
            << folsom::cluster::key_hash_name(h);
        std::size_t mismatches = 0;
        for (const auto& key : keys()) {
            const std::uint32_t theirs = memcached_generate_hash_value(
                key.data(), key.size(), static_cast<memcached_hash_t>(h));
            if (theirs != folsom::cluster::key_hash(h, key) && ++mismatches <= 3)
                ADD_FAILURE() << folsom::cluster::key_hash_name(h) << " \"" << key << "\"";
        }
        EXPECT_EQ(mismatches, 0u) << folsom::cluster::key_hash_name(h);
    }
    // The empty key too (libmemcached never hashes one, but the functions take it).
    for (const KeyHash h : libmemcached_hashes)
        EXPECT_EQ(memcached_generate_hash_value("", 0, static_cast<memcached_hash_t>(h)),
                  folsom::cluster::key_hash(h, ""))
            << folsom::cluster::key_hash_name(h);
}

TEST(LibmemcachedHashCompat, HsiehIsNotInDebiansLibmemcached) {
    if (libhashkit_has_algorithm(HASHKIT_HASH_HSIEH))
        GTEST_SKIP() << "this libmemcached has hsieh, which folsom does not implement";
    // Without it libmemcached refuses the hash, and so does folsom's Distribution.
    memcached_st* memc = memcached_create(nullptr);
    EXPECT_NE(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_HSIEH),
              MEMCACHED_SUCCESS);
    memcached_free(memc);
    EXPECT_FALSE(folsom::cluster::distribution_error(
                     Distribution::libmemcached_modula.with_hash(KeyHash::hsieh))
                     .empty());
}

TEST(LibmemcachedModulaCompat, EveryHashOnThreeAndTenServers) {
    for (const KeyHash h : libmemcached_hashes) {
        const Distribution d = Distribution::libmemcached_modula.with_hash(h);
        expect_same_placement(three_servers(), Mode::modula, h, d);
        // Modula ignores weights, as libmemcached's does.
        expect_same_placement(ten_servers(true), Mode::modula, h, d);
    }
}

TEST(LibmemcachedConsistentCompat, EveryHashOnThreeAndTenServers) {
    for (const KeyHash h : libmemcached_hashes) {
        const Distribution d = Distribution::libmemcached_consistent.with_hash(h);
        expect_same_placement(three_servers(), Mode::consistent, h, d);
        expect_same_placement(ten_servers(false), Mode::consistent, h, d);
        // A weight above 1 makes libmemcached's ring the weighted MD5 one (keys still by h).
        expect_same_placement(ten_servers(true), Mode::consistent, h, d);
    }
}

TEST(LibmemcachedKetamaWeightedCompat, EveryKeyHashOnThreeAndTenWeightedServers) {
    for (const KeyHash h : libmemcached_hashes) {
        const Distribution d = Distribution::ketama_libmemcached.with_hash(h);
        expect_same_placement(three_servers(), Mode::ketama_weighted, h, d);
        expect_same_placement(ten_servers(true), Mode::ketama_weighted, h, d);
    }
}

// MEMCACHED_BEHAVIOR_KETAMA_HASH sets libhashkit's distribution hash, which libmemcached 1.1
// never reads: the points stay MD5 (weighted) or the key hash (unweighted). So it needs no
// folsom setting of its own.
TEST(LibmemcachedKetamaWeightedCompat, KetamaHashBehaviorChangesNothing) {
    const auto servers = ten_servers(true);
    const Libmemcached plain(servers, Mode::ketama_weighted, KeyHash::md5);
    const Libmemcached with_ketama_hash(servers, Mode::ketama_weighted, KeyHash::md5);
    ASSERT_EQ(memcached_behavior_set(with_ketama_hash.get(), MEMCACHED_BEHAVIOR_KETAMA_HASH,
                                     MEMCACHED_HASH_CRC),
              MEMCACHED_SUCCESS);
    for (const auto& key : keys())
        ASSERT_EQ(plain.server_index(key), with_ketama_hash.server_index(key)) << key;
}

}  // namespace
