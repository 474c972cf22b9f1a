// Asks Debian's python3-pymemcache (HashClient, its default RendezvousHash) where keys go and
// checks that Distribution::pymemcache_rendezvous agrees, key by key. No server runs:
// HashClient connects lazily, and its hasher names the server of a key.
#include "folsom/cluster/continuum.hpp"
#include "folsom/server_address.hpp"

#include "cluster/hash/murmur3.hpp"
#include "cluster/hash/pymemcache_rendezvous.hpp"
#include "support/reference_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;
namespace test = folsom::test;

// Reads the server list (JSON: [host, port] pairs or socket paths) from argv[1] and keys from
// stdin, one per line: UTF-8 text (str keys), or with argv[2] "bytes" hex digits (bytes keys,
// which may hold any byte); prints the node HashClient's hasher picks for each key.
constexpr const char* reference_program = R"(
import json, sys
try:
    from pymemcache.client.hash import HashClient
except ImportError as e:
    sys.stderr.write("python3-pymemcache is not installed: %s\n" % e)
    sys.exit(77)
servers = [tuple(s) if isinstance(s, list) else s for s in json.loads(sys.argv[1])]
client = HashClient(servers, allow_unicode_keys=True)
keys = sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]
if sys.argv[2:] == ["bytes"]:
    keys = [bytes.fromhex(k) for k in keys]
sys.stdout.write("".join(client.hasher.get_node(k) + "\n" for k in keys))
)";

struct Server {
    ServerAddress address;
    std::string json;        // as the Python program is given it
    std::string pymemcache;  // the node name pymemcache gives it
};

std::vector<Server> three_servers() {
    return {
        {{"10.0.0.1", 11211, 1}, R"(["10.0.0.1", 11211])", "10.0.0.1:11211"},
        {{"10.0.0.2", 11212, 1}, R"(["10.0.0.2", 11212])", "10.0.0.2:11212"},
        {{"cache-c.example", 11211, 1}, R"(["cache-c.example", 11211])", "cache-c.example:11211"}};
}

std::vector<Server> ten_servers() {
    std::vector<Server> s = three_servers();
    s.push_back({{"::1", 11213, 1}, R"(["::1", 11213])", "::1:11213"});
    s.push_back({ServerAddress::unix_socket("/run/memcached/mc.sock"),
                 R"("/run/memcached/mc.sock")", "/run/memcached/mc.sock"});
    for (int i = 6; i <= 10; ++i) {
        const std::string host = "10.0.1." + std::to_string(i);
        s.push_back({{host, 22122, 1}, "[\"" + host + "\", 22122]", host + ":22122"});
    }
    return s;
}

// The test keys, and keys with characters beyond ASCII (pymemcache hashes characters, folsom
// sees their UTF-8 bytes): two-, three- and four-byte sequences.
std::vector<std::string> keys_with_unicode() {
    std::vector<std::string> keys = test::placement_keys();
    const char* const pieces[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc4\x80",
                                  "\xe6\x97\xa5\xe6\x9c\xac"};
    for (int i = 0; i < 1'000; ++i)
        keys.push_back("k" + std::to_string(i) + pieces[i % 5] + std::string(i % 7, 'x') +
                       pieces[(i / 5) % 5]);
    return keys;
}

// Keys a program gives pymemcache as bytes, which it hashes as their repr: the test keys, and
// keys with what repr escapes or quotes differently (both quotes, backslash, tab, CR, LF,
// NUL, DEL, bytes from 0x80).
std::vector<std::string> bytes_keys() {
    std::vector<std::string> keys = test::placement_keys();
    const std::string pieces[] = {
        "'",    "\"",       "'\"",      "\\",  "\t", "\r\n", std::string(1, '\0'),
        "\x7f", "\x80\xff", "\xc3\xa9", "\x1b"};
    for (int i = 0; i < 1'100; ++i)
        keys.push_back("b" + std::to_string(i) + pieces[i % 11] + std::string(i % 5, 'y') +
                       pieces[(i / 11) % 11]);
    return keys;
}

std::string hex_lines(const std::vector<std::string>& keys) {
    constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (const auto& k : keys) {
        for (char ch : k) {
            const auto c = static_cast<unsigned char>(ch);
            out += hex[c >> 4];
            out += hex[c & 0xfu];
        }
        out += '\n';
    }
    return out;
}

void expect_same_placement(const std::vector<Server>& servers, bool as_bytes = false) {
    std::string json = "[";
    std::vector<ServerAddress> addresses;
    for (const auto& s : servers) {
        if (json.size() > 1) json += ", ";
        json += s.json;
        addresses.push_back(s.address);
        EXPECT_EQ(folsom::cluster::pymemcache_node_name(s.address), s.pymemcache);
    }
    json += "]";
    const auto keys = as_bytes ? bytes_keys() : keys_with_unicode();
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.py", reference_program);
    const auto run = as_bytes ? test::run_reference({"/usr/bin/python3", program, json, "bytes"},
                                                    hex_lines(keys), keys.size())
                              : test::run_reference({"/usr/bin/python3", program, json},
                                                    test::lines_of(keys), keys.size());
    if (run.unavailable) GTEST_SKIP() << run.why_not;
    ASSERT_TRUE(run.ran) << run.why_not;

    const Continuum ours(addresses, as_bytes ? Distribution::pymemcache_rendezvous_bytes
                                             : Distribution::pymemcache_rendezvous);
    std::size_t mismatches = 0;
    std::vector<std::size_t> per_server(servers.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::size_t s = ours.server_index(keys[i]);
        ASSERT_LT(s, servers.size());
        ++per_server[s];
        if (servers[s].pymemcache != run.lines[i] && ++mismatches <= 5)
            ADD_FAILURE() << "key \"" << keys[i] << "\": pymemcache " << run.lines[i] << ", ours "
                          << servers[s].pymemcache;
    }
    EXPECT_EQ(mismatches, 0u) << "of " << keys.size() << " keys";
    for (std::size_t s = 0; s < servers.size(); ++s)
        EXPECT_GT(per_server[s], 0u) << servers[s].pymemcache;
}

TEST(PymemcacheRendezvousCompat, ThreeServers) {
    expect_same_placement(three_servers());
}

TEST(PymemcacheRendezvousCompat, TenServersWithIpv6AndASocket) {
    expect_same_placement(ten_servers());
}

TEST(PymemcacheRendezvousCompat, BytesKeysOnThreeServers) {
    expect_same_placement(three_servers(), true);
}

TEST(PymemcacheRendezvousCompat, BytesKeysOnTenServers) {
    expect_same_placement(ten_servers(), true);
}

// The incremental murmur3 the rendezvous hash resumes per server equals the one-shot hash,
// whatever the split.
TEST(PymemcacheRendezvous, IncrementalMurmur3MatchesOneShot) {
    const std::string text = "10.0.0.1:11211-some:key:with:several:blocks";
    for (std::size_t a = 0; a <= text.size(); ++a) {
        for (std::size_t b = a; b <= text.size(); b += 3) {
            folsom::cluster::Murmur3_32 h;
            h.update(std::string_view(text).substr(0, a));
            const folsom::cluster::Murmur3_32 saved(h.words());
            folsom::cluster::Murmur3_32 resumed(saved);
            resumed.update(std::string_view(text).substr(a, b - a));
            resumed.update(std::string_view(text).substr(b));
            ASSERT_EQ(resumed.digest(), folsom::cluster::murmur3_32(text)) << a << " " << b;
        }
    }
}

TEST(PymemcacheRendezvous, WeightsPlayNoPart) {
    std::vector<ServerAddress> plain;
    for (const auto& s : ten_servers())
        plain.push_back(s.address);
    std::vector<ServerAddress> weighted = plain;
    weighted[0].weight = 5;
    const Continuum a(plain, Distribution::pymemcache_rendezvous);
    const Continuum b(weighted, Distribution::pymemcache_rendezvous);
    for (int i = 0; i < 1000; ++i) {
        const std::string k = "key:" + std::to_string(i);
        ASSERT_EQ(a.server_index(k), b.server_index(k));
    }
}

}  // namespace
