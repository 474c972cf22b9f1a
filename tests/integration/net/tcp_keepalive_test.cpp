// TCP keepalive and TCP_USER_TIMEOUT (Options::tcp_keepalive, Options::tcp_user_timeout): read
// back from the connection's socket, refused out of range, and a peer that vanishes (every
// packet dropped, inside a network namespace of the test's own) declared dead within the
// bound the options give, on an idle connection no request would ever have checked.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/child_process.hpp"
#include "support/memcached_server.hpp"
#include "support/private_network.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::MemcachedServer;

/// This process's TCP sockets connected to 127.0.0.1:port (the client's connections).
std::vector<int> sockets_to(std::uint16_t port) {
    std::vector<int> found;
    for (int fd = 3; fd < 4096; ++fd) {
        ::sockaddr_in peer{};
        ::socklen_t len = sizeof peer;
        if (::getpeername(fd, reinterpret_cast<::sockaddr*>(&peer), &len) != 0) continue;
        if (peer.sin_family == AF_INET && ntohs(peer.sin_port) == port) found.push_back(fd);
    }
    return found;
}

int int_option(int fd, int level, int name) {
    int v = -1;
    ::socklen_t len = sizeof v;
    EXPECT_EQ(::getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

folsom::Options options_for(const MemcachedServer& server) {
    folsom::Options o;
    o.servers = {server.address()};
    return o;
}

TEST(TcpKeepalive, TheOptionsAreOnTheSocket) {
    MemcachedServer server;
    auto o = options_for(server);
    o.tcp_keepalive = folsom::TcpKeepalive{.idle = 7s, .interval = 3s, .count = 4};
    o.tcp_user_timeout = 5500ms;
    o.connections_per_server = 2;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    ASSERT_EQ(c.set("k2", "v"), Status::stored);  // both connections used, so both up
    const auto fds = sockets_to(server.port());
    ASSERT_EQ(fds.size(), 2u);
    for (int fd : fds) {
        EXPECT_EQ(int_option(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
        EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7);
        EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPINTVL), 3);
        EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPCNT), 4);
        EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 5500);
    }
}

TEST(TcpKeepalive, OffByDefault) {
    MemcachedServer server;
    folsom::BlockingClient c(options_for(server));
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    const auto fds = sockets_to(server.port());
    ASSERT_EQ(fds.size(), 1u);
    EXPECT_EQ(int_option(fds[0], SOL_SOCKET, SO_KEEPALIVE), 0);
    EXPECT_EQ(int_option(fds[0], IPPROTO_TCP, TCP_USER_TIMEOUT), 0);
}

TEST(TcpKeepalive, ValuesOutOfRangeAreRefusedBeforeConnecting) {
    MemcachedServer server;
    struct Bad {
        std::optional<folsom::TcpKeepalive> keepalive;
        std::chrono::milliseconds user_timeout;
        const char* names;
    };
    const std::vector<Bad> bad = {
        {folsom::TcpKeepalive{.idle = 0s}, 0ms, "idle"},
        {folsom::TcpKeepalive{.idle = 32768s}, 0ms, "idle"},
        {folsom::TcpKeepalive{.interval = 0s}, 0ms, "interval"},
        {folsom::TcpKeepalive{.interval = 40000s}, 0ms, "interval"},
        {folsom::TcpKeepalive{.count = 0}, 0ms, "count"},
        {folsom::TcpKeepalive{.count = 128}, 0ms, "count"},
        {std::nullopt, -1ms, "tcp_user_timeout"},
        {std::nullopt, std::chrono::milliseconds(0x80000000LL), "tcp_user_timeout"},
    };
    for (const auto& b : bad) {
        auto o = options_for(server);
        o.tcp_keepalive = b.keepalive;
        o.tcp_user_timeout = b.user_timeout;
        try {
            folsom::BlockingClient c(o);
            ADD_FAILURE() << "accepted a bad " << b.names;
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find(b.names), std::string::npos) << e.what();
        }
    }
}

TEST(TcpKeepalive, AVanishedPeerIsDeclaredDeadWithinTheBound) {
    if (auto why = folsom::test::private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (!folsom::test::have_program("nft")) GTEST_SKIP() << "`nft` (nftables) is not installed";
    const auto why = folsom::test::run_in_private_network([] {
        MemcachedServer server;
        std::atomic<bool> down{false};
        auto o = options_for(server);
        // Dead after 1 s idle + 2 probes 1 s apart, unanswered: 3 s after the last byte.
        o.tcp_keepalive = folsom::TcpKeepalive{.idle = 1s, .interval = 1s, .count = 2};
        o.reconnect_initial_delay = 60s;  // no reconnect in the window: one clean observation
        o.on_connection_state = [&](const std::string&, folsom::ConnectionState s) {
            if (s == folsom::ConnectionState::disconnected) down = true;
        };
        folsom::BlockingClient c(o);
        ASSERT_EQ(c.set("k", "v"), Status::stored);
        const auto last_byte = std::chrono::steady_clock::now();

        // The peer vanishes: every packet to or from it is dropped, nothing is answered.
        const std::string port = std::to_string(server.port());
        auto nft = [](std::vector<std::string> args) {
            args.insert(args.begin(), "nft");
            auto r = folsom::test::run_command(args);
            return r.exit_code == 0 ? std::string() : "nft failed: " + r.output;
        };
        ASSERT_EQ(nft({"add", "table", "inet", "folsom_keepalive"}), "");
        ASSERT_EQ(nft({"add", "chain", "inet", "folsom_keepalive", "out",
                       "{ type filter hook output priority 0; policy accept; }"}),
                  "");
        for (const char* dir : {"sport", "dport"})
            ASSERT_EQ(
                nft({"add", "rule", "inet", "folsom_keepalive", "out", "tcp", dir, port, "drop"}),
                "");

        // The bound is 3 s; the kernel's timers fire on jiffies, and the test may run late
        // under load: allow 2 s beyond. Without keepalive this idle connection never notices.
        const auto deadline = last_byte + 5s;
        while (!down && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(20ms);
        const auto took = std::chrono::steady_clock::now() - last_byte;
        EXPECT_TRUE(down.load()) << "still connected after 5 s";
        EXPECT_GE(took, 2s) << "declared dead before the probes could have been answered";
        (void)nft({"delete", "table", "inet", "folsom_keepalive"});
    });
    if (!why.empty()) GTEST_SKIP() << "no private network namespace: " << why;
}

}  // namespace
