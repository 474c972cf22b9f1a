// TLS against a real memcached started with -Z and certificates made with the openssl
// command-line tool (tests/support/tls_files): verification on by default, SNI, a clear error when
// it fails.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"
#include "support/tls_files.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;
using folsom::errc;

using folsom::test::TlsFiles;

class Tls : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { files_ = new TlsFiles(); }
    static void TearDownTestSuite() {
        delete files_;
        files_ = nullptr;
    }

    Tls() : server_(files_->memcached_args()) {}

    folsom::Options options(folsom::TlsOptions tls) const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.tls = std::move(tls);
        o.connect_timeout = 2s;
        o.reconnect_initial_delay = 50ms;
        return o;
    }

    static TlsFiles* files_;
    folsom::test::MemcachedServer server_;
};
TlsFiles* Tls::files_ = nullptr;

TEST_F(Tls, VerifiedConnectionWorks) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("ca.pem");
    folsom::BlockingClient c(options(tls));  // the name checked is the host: 127.0.0.1 (IP SAN)
    EXPECT_EQ(c.set("k", "over tls"), folsom::Status::stored);
    EXPECT_EQ(c.get("k")->data, "over tls");
    EXPECT_EQ(c.get_multi(std::vector<std::string_view>{"k", "x"}).values.size(), 2u);
}

// Caller-driven, the calling thread runs the TLS handshake and every record itself (a TLS
// connection never reads in the call that wrote: its reads go through the stream).
TEST_F(Tls, VerifiedConnectionWorksCallerDriven) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("ca.pem");
    folsom::BlockingClient c(options(tls), folsom::BlockingClient::Driver::caller);
    EXPECT_EQ(c.set("k", std::string(100000, 't')), folsom::Status::stored);
    for (int i = 0; i < 50; ++i)
        EXPECT_EQ(c.get("k")->data.size(), 100000u);
    const auto m = c.get_multi(std::vector<std::string_view>{"k", "x"});
    ASSERT_EQ(m.values.size(), 2u);
    EXPECT_TRUE(m.values[0] && !m.values[1]);
}

TEST_F(Tls, ServerNameForSniAndVerification) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("ca.pem");
    tls.server_name = "localhost";
    folsom::BlockingClient c(options(tls));
    EXPECT_EQ(c.set("k", "v"), folsom::Status::stored);
}

TEST_F(Tls, UntrustedCertificateFailsWithTlsError) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("other.pem");
    folsom::BlockingClient c(options(tls));
    try {
        c.get("k");
        ADD_FAILURE() << "connected to an untrusted server";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::tls_error) << e.what();
    }
}

TEST_F(Tls, WaitConnectedReportsAnUntrustedCertificateAsTlsError) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("other.pem");
    folsom::BlockingClient c(options(tls));
    try {
        c.async().wait_connected(std::chrono::seconds(10), asio::use_future).get();
        ADD_FAILURE() << "connected to an untrusted server";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::tls_error) << e.what();
    }
}

TEST_F(Tls, WrongServerNameFailsWithTlsError) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("ca.pem");
    tls.server_name = "not-the-server.example";
    folsom::BlockingClient c(options(tls));
    try {
        c.get("k");
        ADD_FAILURE() << "accepted a certificate for another name";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::tls_error) << e.what();
    }
}

TEST_F(Tls, VerificationCanBeTurnedOffForTests) {
    folsom::TlsOptions tls;
    tls.verify = false;
    folsom::BlockingClient c(options(tls));
    EXPECT_EQ(c.set("k", "v"), folsom::Status::stored);
}

TEST_F(Tls, AMissingCaFileIsAClearErrorAtConnect) {
    folsom::TlsOptions tls;
    tls.ca_file = files_->p("does-not-exist.pem");
    try {
        folsom::BlockingClient c(options(tls));
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::tls_error);
        EXPECT_NE(std::string(e.what()).find("CA file"), std::string::npos) << e.what();
    }
}

}  // namespace
