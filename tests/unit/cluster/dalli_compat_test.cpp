// Asks Debian's ruby-dalli (Dalli::Ring, through a Dalli::Client's own ring) which server each
// key goes to, and checks that Distribution::dalli agrees key by key, with and without
// weights. No server runs: the test asks the ring for the key's point, not a live server.
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
namespace test = folsom::test;

// Servers ("host:port[:weight]", Dalli's own syntax) from argv, keys from stdin; prints the
// name of the server the client's ring picks (Ring#server_for_key minus its liveness check,
// which would connect).
constexpr const char* reference_program = R"(
begin
  require "dalli"
rescue LoadError => e
  STDERR.puts "ruby-dalli is not installed: #{e}"
  exit 77
end
ring = Dalli::Client.new(ARGV).send(:ring)
STDOUT.binmode
STDIN.binmode
out = STDIN.read.split("\n").map do |key|
  ring.send(:server_for_hash_key, ring.send(:hash_for, key)).name
end
STDOUT.write(out.join("\n") + "\n")
)";

struct Server {
    ServerAddress address;
    std::string dalli;  // as Dalli is given it
    std::string name;   // Dalli's name for it
};

void expect_same_placement(const std::vector<Server>& servers) {
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.rb", reference_program);
    std::vector<std::string> argv = {"/usr/bin/ruby", program};
    std::vector<ServerAddress> addresses;
    std::vector<std::string> names;
    for (const auto& s : servers) {
        argv.push_back(s.dalli);
        addresses.push_back(s.address);
        names.push_back(s.name);
    }
    const auto keys = test::placement_keys();
    const auto run = test::run_reference(argv, test::lines_of(keys), keys.size());
    if (run.unavailable) GTEST_SKIP() << run.why_not;
    ASSERT_TRUE(run.ran) << run.why_not;
    const Continuum ours(addresses, Distribution::dalli);
    EXPECT_EQ(test::count_mismatches(keys, run.lines, names,
                                     [&](const std::string& k) { return ours.server_index(k); }),
              0u)
        << "of " << keys.size() << " keys on " << servers.size() << " servers";
}

std::vector<Server> three_servers() {
    return {{{"10.0.0.1", 11211, 1}, "10.0.0.1:11211", "10.0.0.1:11211"},
            {{"10.0.0.2", 11212, 1}, "10.0.0.2:11212", "10.0.0.2:11212"},
            {{"cache-c.example", 11211, 1}, "cache-c.example:11211", "cache-c.example:11211"}};
}

std::vector<Server> ten_servers(bool weighted) {
    std::vector<Server> s = three_servers();
    s.push_back({{"::1", 11213, 1}, "[::1]:11213", "::1:11213"});
    s.push_back({ServerAddress::unix_socket("/run/memcached/mc.sock"), "/run/memcached/mc.sock",
                 "/run/memcached/mc.sock"});
    for (int i = 6; i <= 10; ++i) {
        const std::string host = "10.0.1." + std::to_string(i);
        s.push_back({{host, 22122, 1}, host + ":22122", host + ":22122"});
    }
    if (weighted) {
        s[1].address.weight = 3;
        s[1].dalli += ":3";
        s[6].address.weight = 5;
        s[6].dalli += ":5";
        s[4].address.weight = 2;
        s[4].dalli += ":2";  // a socket's weight: "/path:weight"
    }
    return s;
}

TEST(DalliCompat, ThreeServers) {
    expect_same_placement(three_servers());
}

TEST(DalliCompat, TenServers) {
    expect_same_placement(ten_servers(false));
}

TEST(DalliCompat, TenWeightedServers) {
    expect_same_placement(ten_servers(true));
}

}  // namespace
