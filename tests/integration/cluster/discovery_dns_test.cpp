// DNS SRV discovery against a real DNS server: Debian's dnsmasq on a loopback port, serving
// _memcache._tcp.test.local records that point at real memcached processes. The client's
// c-ares resolver is pointed at that port only; nothing leaves the loopback interface.
#include "folsom/blocking_client.hpp"
#include "folsom/cluster/discovery.hpp"

#include "support/child_process.hpp"
#include "support/cluster_support.hpp"
#include "support/memcached_server.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::ServerAddress;
using folsom::Status;
using folsom::test::ChildProcess;
using folsom::test::MemcachedServer;
using folsom::test::wait_for;

constexpr const char* service = "_memcache._tcp.test.local";

/// dnsmasq answering only from its command line: no config file, no /etc/hosts, no upstream.
class Dnsmasq {
  public:
    Dnsmasq() : port_(folsom::test::free_loopback_port()) {}
    std::uint16_t port() const noexcept { return port_; }

    /// (Re)starts serving SRV records for `servers` (dnsmasq does not re-read --srv-host on
    /// SIGHUP, so a new record set means a new process on the same port).
    void serve(const std::vector<ServerAddress>& servers,
               const std::vector<ServerAddress>& backups = {}) {
        process_.stop();
        std::vector<std::string> argv = {"dnsmasq",
                                         "--no-daemon",
                                         "--conf-file=/dev/null",
                                         "--port=" + std::to_string(port_),
                                         "--listen-address=127.0.0.1",
                                         "--bind-interfaces",
                                         "--no-resolv",
                                         "--no-hosts",
                                         "--pid-file",
                                         "--user=root",
                                         "--log-facility=-"};
        for (const auto& s : servers)
            argv.push_back("--srv-host=" + std::string(service) + "," + s.host + "," +
                           std::to_string(s.port) + ",0," + std::to_string(s.weight));
        for (const auto& s : backups)  // a worse (higher) priority: used by nobody here
            argv.push_back("--srv-host=" + std::string(service) + "," + s.host + "," +
                           std::to_string(s.port) + ",10," + std::to_string(s.weight));
        const auto log = std::filesystem::temp_directory_path() /
                         ("folsom-dnsmasq-" + std::to_string(port_) + ".log");
        process_ = ChildProcess(argv, log.string());
        ASSERT_TRUE(folsom::test::wait_until_listening(port_, 5000)) << "dnsmasq did not start";
    }

  private:
    std::uint16_t port_;
    ChildProcess process_;
};

ServerAddress address_of(const MemcachedServer& s) {
    return {"127.0.0.1", s.port(), 1};
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

std::vector<ServerAddress> resolve_once(folsom::cluster::Discovery& d, std::error_code& ec) {
    asio::io_context io;
    std::vector<ServerAddress> out;
    bool called = false;
    d.resolve(io.get_executor(), [&](std::error_code e, std::vector<ServerAddress> s) {
        ec = e;
        out = std::move(s);
        called = true;
    });
    io.run_for(10s);
    EXPECT_TRUE(called);
    return out;
}

class DnsSrvDiscovery : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!folsom::test::have_program("dnsmasq"))
            GTEST_SKIP() << "dnsmasq is not installed (scripts/deps installs it)";
    }
};

TEST_F(DnsSrvDiscovery, ResolvesTheLowestPriorityTargetsSorted) {
    MemcachedServer a, b;
    Dnsmasq dns;
    dns.serve({{"127.0.0.1", b.port(), 3}, {"127.0.0.1", a.port(), 1}}, {{"127.0.0.1", 11299, 1}});
    auto d = folsom::cluster::make_dns_srv_discovery(
        service,
        {.nameservers = "127.0.0.1:" + std::to_string(dns.port()), .timeout = 500ms, .tries = 2});
    std::error_code ec;
    const auto servers = resolve_once(*d, ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(servers.size(), 2u);
    const auto lo = std::min(a.port(), b.port()), hi = std::max(a.port(), b.port());
    EXPECT_EQ(servers[0].port, lo);
    EXPECT_EQ(servers[1].port, hi);
    EXPECT_EQ(servers[0].host, "127.0.0.1");
    EXPECT_EQ((servers[0].port == a.port() ? servers[0] : servers[1]).weight, 1u);
    EXPECT_EQ((servers[0].port == b.port() ? servers[0] : servers[1]).weight, 3u);
}

TEST_F(DnsSrvDiscovery, AMissingNameIsAnErrorNotAnEmptyCluster) {
    Dnsmasq dns;
    dns.serve({});
    auto d = folsom::cluster::make_dns_srv_discovery(
        "_nothing._tcp.test.local",
        {.nameservers = "127.0.0.1:" + std::to_string(dns.port()), .timeout = 500ms, .tries = 1});
    std::error_code ec;
    EXPECT_TRUE(resolve_once(*d, ec).empty());
    EXPECT_EQ(ec, folsom::errc::resolve_failed);
}

TEST_F(DnsSrvDiscovery, AnUnreachableNameServerFailsWithoutHanging) {
    // Nothing listens on this port: c-ares gives up (port unreachable, or its timeout).
    auto d = folsom::cluster::make_dns_srv_discovery(
        service, {.nameservers = "127.0.0.1:" + std::to_string(folsom::test::free_loopback_port()),
                  .timeout = 200ms,
                  .tries = 1});
    std::error_code ec;
    const auto start = std::chrono::steady_clock::now();
    resolve_once(*d, ec);
    EXPECT_EQ(ec, folsom::errc::resolve_failed);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST_F(DnsSrvDiscovery, TheClientFollowsTheRecords) {
    MemcachedServer a, b, c;
    Dnsmasq dns;
    dns.serve({address_of(a), address_of(b)});
    folsom::Options o;
    o.discovery = folsom::cluster::make_dns_srv_discovery(
        service,
        {.nameservers = "127.0.0.1:" + std::to_string(dns.port()), .timeout = 300ms, .tries = 1});
    o.discovery_interval = 100ms;
    o.discovery_drain_delay = 200ms;
    folsom::BlockingClient client(o);
    std::vector<std::string> keys;
    for (int i = 0; i < 100; ++i)
        keys.push_back("dns:" + std::to_string(i));

    // The records sort a and b by port; libmemcached is given them in that order too.
    auto sorted = [](std::vector<ServerAddress> v) {
        std::sort(v.begin(), v.end(), [](auto& x, auto& y) { return x.port < y.port; });
        return v;
    };
    const auto ab = sorted({address_of(a), address_of(b)});
    ASSERT_TRUE(wait_for([&] { return placement_matches(client.async(), ab, keys); }, 5s));
    folsom::test::LibmemcachedPlacement lm_ab(ab);
    for (const auto& k : keys) {
        ASSERT_EQ(client.set(k, "v"), Status::stored);
        EXPECT_NE(folsom::test::raw_request(lm_ab.port_for(k), "get " + k + "\r\n", "END\r\n")
                      .find("VALUE"),
                  std::string::npos);
    }

    // New records: b leaves, c arrives. Keys move to the new set.
    dns.serve({address_of(a), address_of(c)});
    const auto ac = sorted({address_of(a), address_of(c)});
    ASSERT_TRUE(wait_for([&] { return placement_matches(client.async(), ac, keys); }, 5s));
    folsom::test::LibmemcachedPlacement lm_ac(ac);
    std::size_t on_c = 0;
    for (const auto& k : keys) {
        ASSERT_EQ(client.set(k, "moved"), Status::stored);
        const auto port = lm_ac.port_for(k);
        on_c += port == c.port();
        EXPECT_NE(folsom::test::raw_request(port, "get " + k + "\r\n", "END\r\n")
                      .find("VALUE " + k + " 0 5"),
                  std::string::npos);
    }
    EXPECT_GT(on_c, 0u);

    // DNS goes away: the client keeps the set it has.
    dns.serve({});  // answers NXDOMAIN-like "no records" now
    std::this_thread::sleep_for(400ms);
    EXPECT_TRUE(placement_matches(client.async(), ac, keys));
    EXPECT_EQ(client.set(keys[0], "still"), Status::stored);
}

}  // namespace
