// Asks Debian's php-memcache (pecl-memcache: MemcachePool::findServer, which places a key
// without connecting) which server each key goes to under both of its hash strategies and
// both hash functions, and checks folsom's Distribution key by key, with and without weights.
#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/distribution.hpp"

#include "support/reference_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;
using folsom::cluster::KeyHash;
namespace test = folsom::test;

// argv: "host:port:weight" servers; the strategy and hash function come as -d INI settings.
// Prints findServer()'s "host:port" per key.
constexpr const char* reference_program = R"(<?php
if (!class_exists('MemcachePool')) {
    fwrite(STDERR, "php-memcache (pecl-memcache) is not installed\n");
    exit(77);
}
$pool = new MemcachePool();
foreach (array_slice($argv, 1) as $server) {
    [$host, $port, $weight] = explode(':', $server);
    if (!$pool->addServer($host, (int)$port, 0, false, (int)$weight)) {
        fwrite(STDERR, "addServer $server failed\n");
        exit(1);
    }
}
$out = '';
while (($key = fgets(STDIN)) !== false) {
    $out .= $pool->findServer(rtrim($key, "\n")) . "\n";
}
fwrite(STDOUT, $out);
)";

std::vector<ServerAddress> three_servers() {
    return {{"10.0.0.1", 11211, 1}, {"10.0.0.2", 11212, 1}, {"cache-c.example", 11211, 1}};
}

std::vector<ServerAddress> ten_servers(bool weighted) {
    std::vector<ServerAddress> s = three_servers();
    for (int i = 4; i <= 10; ++i)
        s.push_back({"10.0.1." + std::to_string(i), 22122, 1});
    if (weighted) {
        s[1].weight = 3;
        s[6].weight = 5;
        s[9].weight = 2;
    }
    return s;
}

void expect_same_placement(const std::vector<ServerAddress>& servers, Distribution ours) {
    const bool consistent = ours.scheme == Distribution::Scheme::pecl_memcache_consistent;
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.php", reference_program);
    std::vector<std::string> argv = {
        // PHP 8.2 prints a deprecation notice about pecl-memcache's dynamic property, on
        // stdout unless told otherwise.
        "/usr/bin/php",
        "-n",
        "-d",
        "extension=memcache.so",
        "-d",
        "display_errors=stderr",
        "-d",
        std::string("memcache.hash_strategy=") + (consistent ? "consistent" : "standard"),
        "-d",
        std::string("memcache.hash_function=") + (ours.hash == KeyHash::fnv1a_32 ? "fnv" : "crc32"),
        program};
    std::vector<std::string> names;
    for (const auto& s : servers) {
        argv.push_back(s.host + ":" + std::to_string(s.port) + ":" + std::to_string(s.weight));
        names.push_back(s.host + ":" + std::to_string(s.port));
    }
    const auto keys = test::placement_keys();
    const auto run = test::run_reference(argv, test::lines_of(keys), keys.size());
    if (run.unavailable) GTEST_SKIP() << run.why_not;
    ASSERT_TRUE(run.ran) << run.why_not;
    const Continuum continuum(servers, ours);
    EXPECT_EQ(
        test::count_mismatches(keys, run.lines, names,
                               [&](const std::string& k) { return continuum.server_index(k); }),
        0u)
        << folsom::cluster::distribution_name(ours) << ": of " << keys.size() << " keys on "
        << servers.size() << " servers";
}

TEST(PeclMemcacheCompat, ConsistentCrc32) {
    for (const auto& servers : {three_servers(), ten_servers(false), ten_servers(true)})
        expect_same_placement(servers, Distribution::pecl_memcache_consistent);
}

TEST(PeclMemcacheCompat, ConsistentFnv) {
    for (const auto& servers : {three_servers(), ten_servers(false), ten_servers(true)})
        expect_same_placement(servers,
                              Distribution::pecl_memcache_consistent.with_hash(KeyHash::fnv1a_32));
}

TEST(PeclMemcacheCompat, StandardCrc32) {
    for (const auto& servers : {three_servers(), ten_servers(false), ten_servers(true)})
        expect_same_placement(servers, Distribution::pecl_memcache_standard);
}

TEST(PeclMemcacheCompat, StandardFnv) {
    for (const auto& servers : {three_servers(), ten_servers(false), ten_servers(true)})
        expect_same_placement(servers,
                              Distribution::pecl_memcache_standard.with_hash(KeyHash::fnv1a_32));
}

}  // namespace
