// Unix domain socket servers (memcached -s) beyond the ClientOps suite, which already runs every
// operation over one: a socket server in a ketama ring with TCP servers, placed where
// libmemcached places it (checked on the servers themselves); the server deleted and started
// again at the same path; a path with no listener, a regular file or no file at all (refused,
// with backoff, until a server appears); paths and options refused at configuration; timeouts,
// pipelining, quiet and multi-key writes, and metrics named by the path.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/metrics_registry.hpp"
#include "folsom/server_address.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"
#include "support/wait_for.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::MemcachedServer;
using folsom::test::on_unix_socket;

using folsom::test::wait_for;

bool server_has(const MemcachedServer& s, const std::string& key) {
    return folsom::test::raw_request(s, "get " + key + "\r\n", "END\r\n")
               .find("VALUE " + key + " ") != std::string::npos;
}

/// Where libmemcached puts keys among servers given as folsom server strings: socket paths
/// through memcached_server_add_unix_socket(_with_weight), TCP servers by host and port.
/// Answers the chosen server's name: a socket's path, or "host:port".
class LibmemcachedPlacement {
  public:
    explicit LibmemcachedPlacement(const std::vector<std::string>& servers)
        : memc_(memcached_create(nullptr)) {
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
        for (const auto& text : servers) {
            folsom::ServerAddress s;
            EXPECT_FALSE(folsom::parse_server_address(text, s)) << text;
            const auto rc =
                s.is_unix_socket()
                    ? memcached_server_add_unix_socket_with_weight(memc_, s.host.c_str(), s.weight)
                    : memcached_server_add_with_weight(memc_, s.host.c_str(), s.port, s.weight);
            EXPECT_EQ(rc, MEMCACHED_SUCCESS) << text;
        }
    }
    ~LibmemcachedPlacement() { memcached_free(memc_); }
    LibmemcachedPlacement(const LibmemcachedPlacement&) = delete;
    LibmemcachedPlacement& operator=(const LibmemcachedPlacement&) = delete;

    std::string server_for(const std::string& key) const {
        const auto i = memcached_generate_hash(memc_, key.data(), key.size());
        const auto* inst = memcached_server_instance_by_position(memc_, i);
        if (std::string(memcached_server_type(inst)) == "SOCKET")
            return memcached_server_name(inst);
        return std::string(memcached_server_name(inst)) + ":" +
               std::to_string(memcached_server_port(inst));
    }

  private:
    memcached_st* memc_;
};

/// Sets `n` keys through a client of `servers` (entries as folsom takes them, in ring order)
/// and checks each is on the server libmemcached chooses and on no other. `held[i]` is the
/// process behind servers[i]. Every server must get some key.
void expect_libmemcached_placement(const std::vector<std::string>& servers,
                                   const std::vector<const MemcachedServer*>& held,
                                   folsom::Protocol protocol, int n) {
    folsom::Options o;
    o.servers = servers;
    o.protocol = protocol;
    folsom::BlockingClient c(o);
    const LibmemcachedPlacement lm(servers);
    std::map<std::string, int> per_server;
    for (int i = 0; i < n; ++i) {
        const std::string k = "placed:" + std::to_string(i);
        ASSERT_EQ(c.set(k, "v"), Status::stored) << k;
        const std::string expected = lm.server_for(k);
        EXPECT_EQ(c.async().server_name(c.async().server_for(k)), expected) << k;
        ++per_server[expected];
        for (const auto* s : held)
            EXPECT_EQ(server_has(*s, k), s->address() == expected)
                << k << " on " << s->address() << ", libmemcached says " << expected;
    }
    EXPECT_EQ(per_server.size(), held.size()) << "some server got no key";
}

class UnixSocket : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options(const MemcachedServer& s) const {
        folsom::Options o;
        o.servers = {s.address()};
        o.protocol = GetParam();
        o.reconnect_initial_delay = 20ms;
        o.reconnect_max_delay = 100ms;
        return o;
    }
};

// ---- placement ----------------------------------------------------------------------------

TEST_P(UnixSocket, ASocketServerInARingWithTcpServersGetsTheKeysLibmemcachedGivesIt) {
    MemcachedServer sock(on_unix_socket);
    MemcachedServer tcp1, tcp2;
    expect_libmemcached_placement({tcp1.address(), sock.address(), tcp2.address()},
                                  {&tcp1, &sock, &tcp2}, GetParam(), 300);
}

TEST_P(UnixSocket, AWeightedSocketServerFollowsLibmemcachedsWeightSuffix) {
    MemcachedServer sock_a(on_unix_socket), sock_b(on_unix_socket);
    MemcachedServer tcp;
    // "/path/?3": libmemcached's --SOCKET="/path"/?3, three times the share of keys.
    expect_libmemcached_placement(
        {sock_a.address() + "/?3", tcp.address() + ":2", sock_b.address()},
        {&sock_a, &tcp, &sock_b}, GetParam(), 300);
}

// ---- the server goes and comes back ---------------------------------------------------------

TEST_P(UnixSocket, TheServerDeletedAndRestartedAtTheSamePathIsReconnected) {
    MemcachedServer s(on_unix_socket);
    folsom::BlockingClient c(options(s));
    ASSERT_EQ(c.set("k", "before"), Status::stored);
    s.kill();
    ASSERT_TRUE(std::filesystem::remove(s.socket_path()));  // as a package upgrade would
    // Down: requests fail (the connection lost, then refused connects in backoff), fast.
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                c.get("k");
                return false;
            } catch (const std::system_error& e) {
                return e.code() == errc::not_connected;
            }
        },
        5s));
    s.restart();
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                return c.set("k", "after") == Status::stored;
            } catch (const std::system_error&) {
                return false;
            }
        },
        5s));
    const auto v = c.get("k");
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->data, "after");
}

/// A client of `path` fails fast with a refused connect (connect_failed for the attempt, then
/// not_connected in backoff), then finds a server started there without any help.
void expect_refused_until_a_server_appears(folsom::Protocol protocol, const std::string& path) {
    folsom::Options o;
    o.servers = {path};
    o.protocol = protocol;
    o.reconnect_initial_delay = 20ms;
    o.reconnect_max_delay = 100ms;
    folsom::BlockingClient c(o);
    const auto start = std::chrono::steady_clock::now();
    int refused = 0, not_connected = 0;
    for (int i = 0; i < 100; ++i) {
        try {
            c.get("k");
        } catch (const std::system_error& e) {
            refused += e.code() == errc::connect_failed || e.code() == errc::not_connected;
            not_connected += e.code() == errc::not_connected;
        }
    }
    EXPECT_EQ(refused, 100);
    EXPECT_GT(not_connected, 0);  // backoff: later requests fail at once, without a connect
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_EQ(c.async().outstanding(), 0u);

    std::filesystem::remove(path);
    MemcachedServer server(on_unix_socket, path, {});
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                return c.set("k", "v") == Status::stored;
            } catch (const std::system_error&) {
                return false;
            }
        },
        5s));
}

TEST_P(UnixSocket, APathWithNoFileIsARefusedConnectUntilTheServerStarts) {
    folsom::test::TempDir dir;
    expect_refused_until_a_server_appears(GetParam(), dir.file("not-yet.sock"));
}

TEST_P(UnixSocket, ARegularFileIsARefusedConnect) {
    folsom::test::TempDir dir;
    const std::string path = dir.file("regular");
    std::ofstream(path) << "not a socket\n";
    expect_refused_until_a_server_appears(GetParam(), path);
}

TEST_P(UnixSocket, ASocketNobodyListensOnIsARefusedConnect) {
    MemcachedServer s(on_unix_socket);
    s.kill();  // SIGKILL leaves the socket file behind, with nobody listening
    ASSERT_TRUE(std::filesystem::is_socket(s.socket_path()));
    expect_refused_until_a_server_appears(GetParam(), s.socket_path());
}

TEST_P(UnixSocket, AFrozenServerTimesOut) {
    MemcachedServer s(on_unix_socket);
    auto o = options(s);
    o.request_timeout = 200ms;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    s.freeze();
    try {
        c.get("k");
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout) << e.code().message();
    }
    s.thaw();
}

// ---- pipelining, quiet and multi-key writes, metrics ----------------------------------------

TEST_P(UnixSocket, TenThousandPipelinedGetsEachCompleteOnce) {
    MemcachedServer s(on_unix_socket);
    auto o = options(s);
    o.max_outstanding_requests = 20000;  // all in flight at once
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("p", "value"), Status::stored);
    constexpr int n = 10000;
    std::vector<std::atomic<int>> done(n);
    std::atomic<int> hits{0};
    for (int i = 0; i < n; ++i)
        c.async().get("p", [&, i](std::error_code ec, std::optional<folsom::Value> v) {
            if (!ec && v && v->data == "value") ++hits;
            ++done[i];
        });
    ASSERT_TRUE(wait_for([&] { return c.async().outstanding() == 0; }, 20s));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(done[i].load(), 1) << i;
    EXPECT_EQ(hits.load(), n);
}

TEST_P(UnixSocket, QuietAndMultiKeyWritesReportTheirOutcomes) {
    MemcachedServer s(on_unix_socket);
    folsom::BlockingClient c(options(s));
    std::vector<std::string> keys, values;
    for (int i = 0; i < 100; ++i) {
        keys.push_back("m:" + std::to_string(i));
        values.push_back("v" + std::to_string(i));
    }
    std::vector<folsom::KeyValue> items;
    for (int i = 0; i < 100; ++i)
        items.push_back({keys[i], values[i]});
    const auto set = c.async().set_multi(items, 0s, asio::use_future).get();
    ASSERT_EQ(set.results.size(), 100u);
    for (int i = 0; i < 100; ++i) {
        EXPECT_FALSE(set.results[i].error) << keys[i];
        EXPECT_EQ(set.results[i].status, Status::stored) << keys[i];
        EXPECT_TRUE(server_has(s, keys[i])) << keys[i];
    }
    // A quiet add of an existing key still reports its failure (ascii: sent, outcome unknown).
    const auto add = c.async().quiet().add("m:0", "again", 0s, asio::use_future).get();
    EXPECT_EQ(add, GetParam() == folsom::Protocol::ascii ? Status::sent : Status::not_stored);
}

TEST_P(UnixSocket, MetricsNameTheServerByItsPath) {
    MemcachedServer s(on_unix_socket);
    auto registry = std::make_shared<folsom::MetricsRegistry>();
    auto o = options(s);
    o.metrics = registry;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    EXPECT_TRUE(c.get("k").has_value());
    const auto snap = registry->snapshot();
    const auto* server = snap.find(s.socket_path());
    ASSERT_NE(server, nullptr);
    EXPECT_EQ(server->requests, 2u);
    EXPECT_EQ(server->connects, 1u);
    EXPECT_NE(registry->prometheus_text().find("server=\"" + s.socket_path() + "\""),
              std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Protocols, UnixSocket, folsom::test::all_protocols,
                         folsom::test::protocol_name);

// ---- refused at configuration ---------------------------------------------------------------

/// The message of the exception constructing a client of `servers` throws ("" if none).
std::string refusal(const std::vector<std::string>& servers, bool tls = false) {
    folsom::Options o;
    o.servers = servers;
    if (tls) o.tls = folsom::TlsOptions{};
    try {
        folsom::BlockingClient c(o);
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        return e.what();
    }
    return "";
}

TEST(UnixSocketConfiguration, AnOverLongPathIsOneErrorNamingThePath) {
    const std::string path = "/tmp/" + std::string(folsom::max_unix_socket_path, 'p') + ".sock";
    const std::string why = refusal({"127.0.0.1:11211", path});
    EXPECT_NE(why.find(path), std::string::npos) << why;
    EXPECT_NE(why.find("too long"), std::string::npos) << why;
    // The longest path the kernel takes is accepted.
    std::string longest = "/" + std::string(folsom::max_unix_socket_path - 1, 'q');
    EXPECT_EQ(refusal({longest}), "");
}

TEST(UnixSocketConfiguration, BadWeightsAndControlCharactersAreRefused) {
    EXPECT_NE(refusal({"/run/mc.sock/?0"}).find("weight"), std::string::npos);
    EXPECT_NE(refusal({"/run/mc.sock/?x"}).find("weight"), std::string::npos);
    EXPECT_NE(refusal({std::string("/run/mc\n.sock")}).find("control character"),
              std::string::npos);
    EXPECT_NE(refusal({"/"}).find("empty"), std::string::npos);
}

TEST(UnixSocketConfiguration, TlsOverASocketIsRefusedNamingThePath) {
    const std::string why = refusal({"/run/memcached/memcached.sock"}, true);
    EXPECT_NE(why.find("TLS over a Unix socket"), std::string::npos) << why;
    EXPECT_NE(why.find("/run/memcached/memcached.sock"), std::string::npos) << why;
}

}  // namespace
