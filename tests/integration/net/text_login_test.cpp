// Text-protocol authentication (Options::username/password over ascii and meta) against a real
// `memcached -Y <auth file>`: a login at every connect and reconnect, refusals with
// errc::auth_failed, a server that asks for no login, and bad credentials refused up front.
// The password never appears in what the client reports.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <thread>

namespace {

using namespace std::chrono_literals;
using folsom::BlockingClient;
using folsom::errc;
using folsom::Protocol;
using folsom::Status;
using folsom::test::MemcachedServer;

constexpr const char* password = "pa55w0rd-xyzzy";

class TextLogin : public ::testing::TestWithParam<Protocol> {
  protected:
    void SetUp() override {
        auth_file_ = dir_.file("auth");
        std::ofstream(auth_file_) << "app:" << password << "\nother:elsewise\n";
        ::chmod(auth_file_.c_str(), 0644);
    }

    folsom::Options options(const MemcachedServer& server, const std::string& user,
                            const std::string& pass) const {
        folsom::Options o;
        o.servers = {server.address()};
        o.protocol = GetParam();
        o.username = user;
        o.password = pass;
        o.connect_timeout = 2s;
        o.request_timeout = 2s;
        o.reconnect_initial_delay = 5ms;
        o.reconnect_max_delay = 50ms;
        return o;
    }

    /// The error a request gets, "" when none.
    static std::error_code error_of(BlockingClient& c, const std::string& key) {
        try {
            (void)c.get(key);
        } catch (const std::system_error& e) {
            EXPECT_EQ(std::string(e.what()).find(password), std::string::npos) << e.what();
            return e.code();
        }
        return {};
    }

    folsom::test::TempDir dir_;
    std::string auth_file_;
};

TEST_P(TextLogin, LogsInAndServes) {
    MemcachedServer server({"-Y", auth_file_});
    BlockingClient c(options(server, "app", password));
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "v");
}

TEST_P(TextLogin, LogsInAgainAfterEveryReconnect) {
    MemcachedServer server({"-Y", auth_file_});
    BlockingClient c(options(server, "app", password));
    ASSERT_EQ(c.set("k", "v1"), Status::stored);
    for (int round = 0; round < 3; ++round) {
        server.kill();
        server.restart();
        // The first requests may meet the dead connection or its backoff; then it logs in.
        Status st = Status::not_stored;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < deadline) {
            try {
                st = c.set("k", "v2");
                break;
            } catch (const std::system_error& e) {
                ASSERT_TRUE(e.code() == errc::not_connected || e.code() == errc::connection_lost ||
                            e.code() == errc::connect_failed)
                    << e.code().message();
                std::this_thread::sleep_for(5ms);
            }
        }
        ASSERT_EQ(st, Status::stored) << "round " << round;
        EXPECT_EQ(c.get("k")->data, "v2");
    }
}

TEST_P(TextLogin, AWrongPasswordIsAuthFailedWithBackoff) {
    MemcachedServer server({"-Y", auth_file_});
    BlockingClient c(options(server, "app", "not-the-password"));
    EXPECT_EQ(error_of(c, "k"), errc::auth_failed);
    // Until a login succeeds, the refusal is what every request gets, fast.
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(error_of(c, "k"), errc::auth_failed);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_P(TextLogin, AUserMissingFromTheAuthFileIsAuthFailed) {
    MemcachedServer server({"-Y", auth_file_});
    BlockingClient c(options(server, "nobody_here", password));
    EXPECT_EQ(error_of(c, "k"), errc::auth_failed);
}

TEST_P(TextLogin, AServerThatAsksForNoLoginIsNeverSentThePassword) {
    MemcachedServer server;  // no -Y
    {
        BlockingClient c(options(server, "app", password));
        EXPECT_EQ(error_of(c, "k"), errc::unsupported);
    }
    // Nothing was stored under the login's key: the credentials never went out.
    folsom::Options plain;
    plain.servers = {server.address()};
    BlockingClient check(plain);
    EXPECT_FALSE(check.get("folsom_login"));
    for (const auto& node : check.stats()) {
        for (const auto& [name, value] : node.value) {
            if (name == "cmd_set") {
                EXPECT_EQ(value, "0");
            }
        }
    }
}

TEST_P(TextLogin, CredentialsATextLoginCannotCarryAreRefusedUpFront) {
    MemcachedServer server({"-Y", auth_file_});
    struct Bad {
        std::string user, pass;
    };
    for (const auto& [user, pass] :
         {Bad{"a b", password}, Bad{"a\nb", password}, Bad{"a:b", password}, Bad{"", password},
          Bad{"app", ""}, Bad{"app", std::string(password) + " x"},
          Bad{"app", std::string(password) + "\r\n"}, Bad{std::string(251, 'u'), password}}) {
        try {
            BlockingClient c(options(server, user, pass));
            ADD_FAILURE() << "accepted user '" << user << "'";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
            EXPECT_EQ(std::string(e.what()).find(password), std::string::npos) << e.what();
        }
    }
}

TEST_P(TextLogin, SaslAndAUsernameTogetherAreRefused) {
    MemcachedServer server({"-Y", auth_file_});
    auto o = options(server, "app", password);
    o.sasl = folsom::SaslCredentials{"app", password};
    o.protocol = Protocol::binary;
    try {
        BlockingClient c(o);
        ADD_FAILURE() << "accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
}

INSTANTIATE_TEST_SUITE_P(Text, TextLogin, ::testing::Values(Protocol::ascii, Protocol::meta),
                         [](const auto& param_info) {
                             return param_info.param == Protocol::ascii ? std::string("ascii")
                                                                        : std::string("meta");
                         });

}  // namespace
