// ElastiCache auto-discovery over TLS (a cluster with in-transit encryption): the
// configuration endpoint is the stand-in of tests/support behind a TLS terminator, and its node
// list points at a real `memcached -Z`. The endpoint is spoken to with the client's TLS
// options, or with ElastiCacheOptions::tls when set.
#include "folsom/blocking_client.hpp"
#include "folsom/cluster/discovery.hpp"

#include "support/elasticache_endpoint.hpp"
#include "support/memcached_server.hpp"
#include "support/tls_files.hpp"
#include "support/tls_terminator.hpp"

#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::ServerAddress;
using folsom::Status;
using folsom::test::ElastiCacheEndpoint;
using folsom::test::MemcachedServer;
using folsom::test::TlsFiles;
using folsom::test::TlsTerminator;

class ElastiCacheTls : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { files_ = new TlsFiles(); }
    static void TearDownTestSuite() {
        delete files_;
        files_ = nullptr;
    }

    ElastiCacheTls()
        : node_(files_->memcached_args()),
          front_(endpoint_.port(), files_->p("server.pem"), files_->p("server.key")) {
        endpoint_.serve(1, ElastiCacheEndpoint::entries({{"127.0.0.1", node_.port(), 1}}));
    }

    static folsom::TlsOptions trusting(const std::string& ca) {
        folsom::TlsOptions t;
        t.ca_file = files_->p(ca);
        return t;
    }

    /// One resolution as a client with `client_tls` makes it.
    std::vector<ServerAddress> resolve(folsom::cluster::Discovery& d,
                                       const std::optional<folsom::TlsOptions>& client_tls,
                                       std::error_code& ec) {
        asio::io_context io;
        std::vector<ServerAddress> out;
        int calls = 0;
        d.resolve_for_client(io.get_executor(), client_tls,
                             [&](std::error_code e, std::vector<ServerAddress> s) {
                                 ec = e;
                                 out = std::move(s);
                                 ++calls;
                             });
        io.run_for(10s);
        EXPECT_EQ(calls, 1);
        return out;
    }

    static TlsFiles* files_;
    MemcachedServer node_;  // memcached -Z: the cluster's only node
    ElastiCacheEndpoint endpoint_;
    TlsTerminator front_;  // the endpoint as the client sees it: TLS only
};
TlsFiles* ElastiCacheTls::files_ = nullptr;

// The whole path a user takes: a TLS client discovers its nodes through the TLS endpoint
// (with the client's own TLS options) and then talks to them over TLS.
TEST_F(ElastiCacheTls, AClientWithTlsDiscoversOverTls) {
    folsom::Options o;
    o.discovery = folsom::cluster::make_elasticache_discovery(front_.address());
    o.tls = trusting("ca.pem");
    o.connect_timeout = 2s;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());
    EXPECT_EQ(c.set("k", "found over tls"), Status::stored);
    EXPECT_EQ(c.get("k")->data, "found over tls");
    EXPECT_GE(front_.handshakes(), 1u);
    EXPECT_GE(endpoint_.requests(), 1u);
}

TEST_F(ElastiCacheTls, ResolvesWithTheClientsTlsOptions) {
    auto d = folsom::cluster::make_elasticache_discovery(front_.address());
    std::error_code ec;
    const auto servers = resolve(*d, trusting("ca.pem"), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(servers.size(), 1u);
    EXPECT_EQ(servers[0].port, node_.port());
    EXPECT_EQ(d->cluster_version(), 1u);
}

TEST_F(ElastiCacheTls, AnUntrustedEndpointFailsWithTlsError) {
    auto d = folsom::cluster::make_elasticache_discovery(front_.address());
    std::error_code ec;
    EXPECT_TRUE(resolve(*d, trusting("other.pem"), ec).empty());
    EXPECT_EQ(ec, errc::tls_error);
    EXPECT_EQ(endpoint_.requests(), 0u);  // nothing reached the endpoint
}

TEST_F(ElastiCacheTls, ThePlainRequestOfAPlainClientNeverReachesTheEndpoint) {
    folsom::cluster::ElastiCacheOptions eo;
    eo.timeout = 1s;
    auto d = folsom::cluster::make_elasticache_discovery(front_.address(), eo);
    std::error_code ec;
    EXPECT_TRUE(resolve(*d, std::nullopt, ec).empty());
    EXPECT_TRUE(ec);
    EXPECT_EQ(endpoint_.requests(), 0u);
    EXPECT_EQ(front_.handshakes(), 0u);
}

TEST_F(ElastiCacheTls, TheDiscoverysOwnTlsOptionsWin) {
    folsom::cluster::ElastiCacheOptions eo;
    eo.tls = trusting("ca.pem");
    auto d = folsom::cluster::make_elasticache_discovery(front_.address(), eo);
    std::error_code ec;
    // A plain client: the endpoint is still spoken to over TLS, as its options say.
    EXPECT_EQ(resolve(*d, std::nullopt, ec).size(), 1u);
    EXPECT_FALSE(ec) << ec.message();
    // And they replace the client's (here untrusting) ones.
    EXPECT_EQ(resolve(*d, trusting("other.pem"), ec).size(), 1u);
    EXPECT_FALSE(ec) << ec.message();
    // resolve() (no client) uses them too.
    asio::io_context io;
    std::error_code plain_ec = make_error_code(errc::timeout);
    d->resolve(io.get_executor(),
               [&](std::error_code e, std::vector<ServerAddress>) { plain_ec = e; });
    io.run_for(10s);
    EXPECT_FALSE(plain_ec) << plain_ec.message();
}

}  // namespace
