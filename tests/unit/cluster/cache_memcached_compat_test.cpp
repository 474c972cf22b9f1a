// Asks Debian's Perl clients which server each key goes to, and checks folsom's Distribution
// key by key, with and without weights:
// * Cache::Memcached (libcache-memcached-perl): its own get_sock(), with sock_to_host()
//   replaced so that it names the server instead of connecting;
// * Cache::Memcached::Fast (libcache-memcached-fast-perl), which has no such hook: the
//   program listens on loopback ports of its own (in the same process, nothing answers),
//   gives them to the client as its servers with noreply, and sees on which one each key's
//   "set" arrives.
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

// argv: servers as "host:port" or "host:port*weight"; prints the host get_sock() picks.
constexpr const char* cache_memcached_program = R"(
use strict;
use warnings;
BEGIN {
    eval { require Cache::Memcached; 1 }
        or do { print STDERR "libcache-memcached-perl is not installed: $@"; exit 77 };
}
{
    no warnings 'redefine';
    # Name the server instead of connecting to it.
    *Cache::Memcached::sock_to_host = sub {
        shift if ref $_[0];
        return $_[0];
    };
}
my @servers = map { /^(.*)\*(\d+)$/ ? [$1, $2 + 0] : $_ } @ARGV;
my $client = Cache::Memcached->new({ servers => \@servers });
binmode STDIN;
binmode STDOUT;
while (my $key = <STDIN>) {
    chomp $key;
    print $client->get_sock($key), "\n";
}
)";

// argv: one weight per server; prints the index of the server each key's set reached.
constexpr const char* cache_memcached_fast_program = R"(
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
BEGIN {
    eval { require Cache::Memcached::Fast; 1 }
        or do { print STDERR "libcache-memcached-fast-perl is not installed: $@"; exit 77 };
}
my @weights = @ARGV;
my @listeners = map {
    IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1', LocalPort => 0,
                          Proto => 'tcp') or die "listen: $!"
} @weights;
my $client = Cache::Memcached::Fast->new({
    servers => [ map { { address => '127.0.0.1:' . $listeners[$_]->sockport,
                         weight => $weights[$_], noreply => 1 } } 0 .. $#weights ],
    connect_timeout => 5, io_timeout => 5, close_on_error => 0,
});
my $select = IO::Select->new(@listeners);
my %index_of = map { ($listeners[$_] => $_) } 0 .. $#listeners;
my %buffer;
binmode STDIN;
while (my $key = <STDIN>) {
    chomp $key;
    $client->set($key, '1');
    my $where;
    my $deadline = time + 10;
    while (!defined $where) {
        die "no server got key $key\n" if time > $deadline;
        for my $fh ($select->can_read(1)) {
            if (exists $index_of{$fh} && grep { $_ == $fh } @listeners) {
                my $conn = $fh->accept or next;
                $index_of{$conn} = $index_of{$fh};
                $buffer{$conn} = '';
                $select->add($conn);
                next;
            }
            my $got = sysread($fh, my $chunk, 65536);
            die "server connection closed\n" unless $got;
            $buffer{$fh} .= $chunk;
            while ($buffer{$fh} =~ s/^set (\S+) \d+ \d+ \d+ noreply\r\n1\r\n//) {
                die "unexpected key $1 (waiting for $key)\n" if $1 ne $key;
                $where = $index_of{$fh};
            }
        }
    }
    print "$where\n";
}
)";

struct Server {
    ServerAddress address;
    std::string perl;  // as Cache::Memcached is given it, and as get_sock() names it
};

std::vector<Server> three_servers() {
    return {{{"10.0.0.1", 11211, 1}, "10.0.0.1:11211"},
            {{"10.0.0.2", 11212, 1}, "10.0.0.2:11212"},
            {{"cache-c.example", 11211, 1}, "cache-c.example:11211"}};
}

std::vector<Server> ten_servers(bool weighted) {
    std::vector<Server> s = three_servers();
    for (int i = 4; i <= 10; ++i) {
        const std::string host = "10.0.1." + std::to_string(i);
        s.push_back({{host, 22122, 1}, host + ":22122"});
    }
    if (weighted) {
        s[1].address.weight = 3;
        s[6].address.weight = 5;
        s[9].address.weight = 2;
    }
    return s;
}

void expect_cache_memcached(const std::vector<Server>& servers) {
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.pl", cache_memcached_program);
    std::vector<std::string> argv = {"/usr/bin/perl", program};
    std::vector<ServerAddress> addresses;
    std::vector<std::string> names;
    for (const auto& s : servers) {
        argv.push_back(s.address.weight == 1 ? s.perl
                                             : s.perl + "*" + std::to_string(s.address.weight));
        addresses.push_back(s.address);
        names.push_back(s.perl);
    }
    const auto keys = test::placement_keys();
    const auto run = test::run_reference(argv, test::lines_of(keys), keys.size());
    if (run.unavailable) GTEST_SKIP() << run.why_not;
    ASSERT_TRUE(run.ran) << run.why_not;
    const Continuum ours(addresses, Distribution::cache_memcached);
    EXPECT_EQ(test::count_mismatches(keys, run.lines, names,
                                     [&](const std::string& k) { return ours.server_index(k); }),
              0u)
        << "of " << keys.size() << " keys on " << servers.size() << " servers";
}

void expect_cache_memcached_fast(const std::vector<Server>& servers, std::size_t key_count) {
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.pl", cache_memcached_fast_program);
    std::vector<std::string> argv = {"/usr/bin/perl", program};
    std::vector<ServerAddress> addresses;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < servers.size(); ++i) {
        argv.push_back(std::to_string(servers[i].address.weight));
        addresses.push_back(servers[i].address);
        names.push_back(std::to_string(i));
    }
    auto keys = test::placement_keys();
    keys.resize(key_count);
    const auto run =
        test::run_reference(argv, test::lines_of(keys), keys.size(), std::chrono::seconds(120));
    if (run.unavailable) GTEST_SKIP() << run.why_not;
    ASSERT_TRUE(run.ran) << run.why_not;
    const Continuum ours(addresses, Distribution::cache_memcached_fast);
    EXPECT_EQ(test::count_mismatches(keys, run.lines, names,
                                     [&](const std::string& k) { return ours.server_index(k); }),
              0u)
        << "of " << keys.size() << " keys on " << servers.size() << " servers";
}

TEST(CacheMemcachedCompat, ThreeServers) {
    expect_cache_memcached(three_servers());
}

TEST(CacheMemcachedCompat, TenServers) {
    expect_cache_memcached(ten_servers(false));
}

TEST(CacheMemcachedCompat, TenWeightedServers) {
    expect_cache_memcached(ten_servers(true));
}

TEST(CacheMemcachedFastCompat, ThreeServers) {
    expect_cache_memcached_fast(three_servers(), 10'000);
}

TEST(CacheMemcachedFastCompat, TenServers) {
    expect_cache_memcached_fast(ten_servers(false), 10'000);
}

TEST(CacheMemcachedFastCompat, TenWeightedServers) {
    expect_cache_memcached_fast(ten_servers(true), 10'000);
}

// The compatible mode is meant to place keys as Cache::Memcached does; check it beyond the
// keys the clients are asked about, with odd weights.
TEST(CacheMemcachedFastCompat, AgreesWithCacheMemcachedOnManyWeights) {
    for (std::uint32_t n = 2; n <= 12; ++n) {
        std::vector<ServerAddress> servers;
        for (std::uint32_t i = 0; i < n; ++i)
            servers.push_back({"10.2.0." + std::to_string(i), 11211, 1 + (i * 7) % 5});
        const Continuum fast(servers, Distribution::cache_memcached_fast);
        const Continuum perl(servers, Distribution::cache_memcached);
        for (int k = 0; k < 3'000; ++k) {
            const std::string key = "w:" + std::to_string(k);
            ASSERT_EQ(fast.server_index(key), perl.server_index(key)) << n << " " << key;
        }
    }
}

}  // namespace
