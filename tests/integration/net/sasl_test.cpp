// SASL PLAIN login over the binary protocol against a real `memcached -S`, with a user database
// made by tests/support/sasl_database (saslpasswd2, Debian package sasl2-bin).
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/memcached_server.hpp"
#include "support/sasl_database.hpp"

#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;

constexpr const char* user = "folsom";
constexpr const char* password = "s3cret pass";

class Sasl : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (!folsom::test::SaslDatabase::available()) return;
        db_ = new folsom::test::SaslDatabase(user, password);
        server_ = new folsom::test::MemcachedServer({"-S"});
        missing_plain_ = folsom::test::SaslDatabase::missing_plain(server_->port());
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
        delete db_;
        db_ = nullptr;
    }
    void SetUp() override {
        if (!server_) GTEST_SKIP() << "saslpasswd2 (Debian package sasl2-bin) is not installed";
        // Without the PLAIN plugin every login would fail like a wrong password: say why.
        if (!missing_plain_.empty()) FAIL() << missing_plain_;
    }

    static folsom::Options options(std::string pass) {
        folsom::Options o;
        o.servers = {server_->address()};
        o.protocol = folsom::Protocol::binary;
        o.sasl = folsom::SaslCredentials{user, std::move(pass)};
        return o;
    }

    static long long total_connections(folsom::BlockingClient& c) {
        auto stats = c.stats();
        EXPECT_FALSE(stats.at(0).error) << stats.at(0).error.message();
        EXPECT_FALSE(stats.at(0).value.empty());
        for (auto& [name, value] : stats.at(0).value)
            if (name == "total_connections") return std::stoll(value);
        return -1;
    }

    static inline folsom::test::SaslDatabase* db_ = nullptr;
    static inline folsom::test::MemcachedServer* server_ = nullptr;
    static inline std::string missing_plain_;
};

TEST_F(Sasl, TheRightPasswordLogsInAndEverythingWorks) {
    folsom::BlockingClient c(options(password));
    EXPECT_EQ(c.set("k", "v", 0s, 5), Status::stored);
    auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "v");
    EXPECT_EQ(v->flags, 5u);
    std::vector<std::string_view> keys = {"k", "absent", "k"};
    auto m = c.get_multi(keys);
    EXPECT_TRUE(m.values[0] && m.values[2] && !m.values[1]);
    EXPECT_EQ(c.incr("n", 1, 10, 0s), 10u);
    EXPECT_EQ(c.del("k"), Status::deleted);
    EXPECT_GT(total_connections(c), 0);
}

TEST_F(Sasl, WithoutCredentialsTheServerRefusesEveryCommand) {
    folsom::Options o = options(password);
    o.sasl.reset();
    folsom::BlockingClient c(o);
    try {
        c.get("k");
        ADD_FAILURE() << "an unauthenticated get succeeded";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::auth_failed);
    }
}

TEST_F(Sasl, AWrongPasswordFailsWithAuthFailedAndRetriesWithBackoff) {
    folsom::BlockingClient observer(options(password));
    const long long before = total_connections(observer);
    ASSERT_GT(before, 0);

    asio::io_context io;
    auto client = folsom::Client::connect(io, options("wrong"));
    // Submitted before the I/O runs, so it waits for the first connection: its failure is the
    // login's, observable as auth_failed.
    auto first = client.get("k", asio::use_future);
    std::thread runner([&] { io.run_for(1500ms); });
    try {
        first.get();
        ADD_FAILURE() << "a get succeeded with a wrong password";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::auth_failed);
    }

    // Later requests fail (auth_failed while a retry is logging in, not_connected in backoff),
    // never hang, never succeed.
    const auto until = std::chrono::steady_clock::now() + 1s;
    int attempts = 0;
    while (std::chrono::steady_clock::now() < until) {
        try {
            client.set("k", "v", 0s, asio::use_future).get();
            ADD_FAILURE() << "a set succeeded with a wrong password";
        } catch (const std::system_error& e) {
            EXPECT_TRUE(e.code() == errc::auth_failed || e.code() == errc::not_connected)
                << e.code().message();
        }
        ++attempts;
        std::this_thread::sleep_for(20ms);
    }
    const long long after = total_connections(observer);
    client.shutdown();
    runner.join();

    // 10 ms doubling: about 7 connection attempts in a second; a tight loop would make
    // thousands. (+1 for the observer's own stats calls sharing its one connection: none.)
    EXPECT_GE(after - before, 2);
    EXPECT_LE(after - before, 10) << "reconnects in a tight loop";
    EXPECT_GT(attempts, 10);
}

// Readiness reports a refusal that retrying cannot fix, instead of waiting for the timeout.
TEST_F(Sasl, WaitConnectedReportsAWrongPasswordAsAuthFailed) {
    asio::io_context io;
    auto client = folsom::Client::connect(io, options("wrong"));
    auto ready = client.wait_connected(10s, asio::use_future);
    std::thread runner([&] { io.run_for(5s); });
    const auto start = std::chrono::steady_clock::now();
    try {
        ready.get();
        ADD_FAILURE() << "connected with a wrong password";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::auth_failed);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // not the 10 s timeout
    client.shutdown();
    io.stop();
    runner.join();
}

// memcached -S on a host without libsasl2-modules refuses every login with the "Auth failure."
// a wrong password gets. The client tells the two apart by the mechanism list it asks for in
// the same write, and says what to install.
TEST_F(Sasl, AServerWithoutThePlainMechanismIsNamedNotMistakenForAWrongPassword) {
    folsom::test::NoSaslPlugins no_plugins;
    folsom::test::MemcachedServer bare({"-S"});
    EXPECT_NE(folsom::test::SaslDatabase::missing_plain(bare.port()).find("libsasl2-modules"),
              std::string::npos);
    folsom::Options o = options(password);
    o.servers = {bare.address()};
    asio::io_context io;
    auto client = folsom::Client::connect(io, o);
    auto first = client.get("k", asio::use_future);
    auto ready = client.wait_connected(10s, asio::use_future);
    std::thread runner([&] { io.run_for(5s); });
    try {
        ready.get();
        ADD_FAILURE() << "connected to a server without PLAIN";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::no_sasl_mechanism) << e.code().message();
        EXPECT_NE(e.code().message().find("libsasl2-modules"), std::string::npos);
    }
    try {
        first.get();
        ADD_FAILURE() << "a get succeeded on a server without PLAIN";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::no_sasl_mechanism) << e.code().message();
    }
    client.shutdown();
    io.stop();
    runner.join();
}

TEST_F(Sasl, AServerWithoutSaslFailsTheLoginWithUnsupported) {
    folsom::test::MemcachedServer plain;  // no -S: SASL_AUTH is an unknown command
    auto o = options(password);
    o.servers = {plain.address()};
    asio::io_context io;
    auto client = folsom::Client::connect(io, o);
    auto first = client.get("k", asio::use_future);  // waits for the first login
    std::thread runner([&] { io.run_for(1s); });
    try {
        first.get();
        ADD_FAILURE() << "a get succeeded without a login";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::unsupported);
    }
    client.shutdown();
    runner.join();
}

TEST_F(Sasl, SaslOverATextProtocolIsRefusedAtConnect) {
    asio::io_context io;
    for (auto p : {folsom::Protocol::ascii, folsom::Protocol::meta}) {
        auto o = options(password);
        o.protocol = p;
        try {
            auto c = folsom::Client::connect(io, o);
            ADD_FAILURE() << "connect accepted SASL over a text protocol";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::unsupported);
        }
    }
}

}  // namespace
