// The client's promises under faults, against real memcached processes: exactly-once
// completion, backpressure, timeouts, shutdown, fail-fast and reconnect.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/metrics_registry.hpp"

#include "support/completion_ledger.hpp"
#include "support/fake_server.hpp"
#include "support/memcached_server.hpp"
#include "support/private_network.hpp"
#include "support/protocols.hpp"
#include "support/wait_for.hpp"

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;

using folsom::test::CompletionLedger;

using folsom::test::wait_for;

class ClientFaults : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options(const folsom::test::MemcachedServer& s) const {
        folsom::Options o;
        o.servers = {s.address()};
        o.protocol = GetParam();
        return o;
    }
};

TEST_P(ClientFaults, EveryRequestCompletesExactlyOnceWhileTheServerRestarts) {
    folsom::test::MemcachedServer server;
    auto o = options(server);
    o.max_outstanding_requests = 200;
    o.request_timeout = 500ms;
    o.reconnect_initial_delay = 5ms;
    o.reconnect_max_delay = 50ms;
    folsom::BlockingClient c(o);
    auto& client = c.async();

    constexpr std::size_t threads = 4, per_thread = 5000;
    CompletionLedger ledger(threads * per_thread);
    std::atomic<std::size_t> ok{0}, failed{0};
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (std::size_t i = 0; i < per_thread; ++i) {
                const std::size_t id = t * per_thread + i;
                const std::string key = "k" + std::to_string(id % 500);
                auto done = [&, id](std::error_code ec) {
                    (ec ? failed : ok).fetch_add(1);
                    ledger.complete(id);
                };
                switch (id % 4) {
                    case 0:
                        client.set(key, "v", 0s, [done](std::error_code ec, Status) { done(ec); });
                        break;
                    case 1:
                        client.get(key, [done](std::error_code ec, std::optional<folsom::Value>) {
                            done(ec);
                        });
                        break;
                    case 2:
                        client.incr(
                            key, 1,
                            [done](std::error_code ec, std::optional<std::uint64_t>) { done(ec); });
                        break;
                    default: {
                        std::string_view keys[] = {key, "other", "third"};
                        client.get_multi(
                            keys, [done](std::error_code ec, folsom::MultiGetResult) { done(ec); });
                    }
                }
                if (i % 50 == 0) std::this_thread::sleep_for(1ms);  // keep the load steady, bounded
            }
        });
    }
    // Kill and restart the server twice under load.
    for (int round = 0; round < 2; ++round) {
        std::this_thread::sleep_for(40ms);
        server.kill();
        std::this_thread::sleep_for(40ms);
        server.restart();
    }
    for (auto& w : workers)
        w.join();
    ASSERT_TRUE(wait_for([&] { return ledger.all_done(); }, 10s))
        << ledger.never() << " never completed";
    EXPECT_EQ(ledger.twice(), 0u);
    EXPECT_EQ(ok + failed, threads * per_thread);
    EXPECT_GT(failed.load(), 0u);  // the kills did hit requests
    EXPECT_TRUE(wait_for([&] { return client.outstanding() == 0; }, 2s));
    // And the client recovered by itself.
    ASSERT_TRUE(wait_for(
        [&] {
            try {
                return c.set("after", "restart") == Status::stored;
            } catch (const std::system_error&) {
                return false;
            }
        },
        5s));
}

TEST_P(ClientFaults, OverloadFailsFastAndTheCountComesBackDown) {
    folsom::test::MemcachedServer server;
    auto o = options(server);
    o.max_outstanding_requests = 10;
    o.request_timeout = 300ms;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("warm", "up"), Status::stored);
    server.freeze();  // nothing will be answered
    std::vector<std::future<std::optional<folsom::Value>>> futures;
    for (int i = 0; i < 50; ++i)
        futures.push_back(c.async().get("k", asio::use_future));
    int overloaded = 0, timed_out = 0;
    for (auto& f : futures) {
        try {
            f.get();
        } catch (const std::system_error& e) {
            if (e.code() == errc::overloaded) ++overloaded;
            if (e.code() == errc::timeout) ++timed_out;
        }
    }
    EXPECT_EQ(overloaded, 40);
    EXPECT_EQ(timed_out, 10);
    EXPECT_EQ(c.async().outstanding(), 0u);
    server.thaw();
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                return c.get("warm").has_value();
            } catch (const std::system_error&) {
                return false;
            }
        },
        5s));
}

TEST_P(ClientFaults, AFrozenServerTimesOutAndTheClientRecoversAfterThaw) {
    folsom::test::MemcachedServer server;
    auto o = options(server);
    o.request_timeout = 200ms;
    o.reconnect_initial_delay = 10ms;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    server.freeze();
    const auto start = std::chrono::steady_clock::now();
    try {
        c.get("k");
        ADD_FAILURE() << "no timeout";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
    }
    // Not before the request had waited the whole timeout, and not long after it.
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, 200ms);
    EXPECT_LT(waited, 2s);
    server.thaw();
    EXPECT_TRUE(wait_for(
        [&] {
            try {
                auto v = c.get("k");
                return v && v->data == "v";
            } catch (const std::system_error&) {
                return false;
            }
        },
        5s));
}

TEST_P(ClientFaults, ShutdownFailsOutstandingAndLaterRequestsWithClosed) {
    folsom::test::MemcachedServer server;
    auto o = options(server);
    o.request_timeout = 10s;
    folsom::BlockingClient c(o);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    server.freeze();
    auto pending = c.async().get("k", asio::use_future);
    std::this_thread::sleep_for(50ms);
    c.async().shutdown();
    try {
        pending.get();
        ADD_FAILURE() << "completed without error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::closed);
    }
    try {
        c.get("k");
        ADD_FAILURE() << "request after shutdown succeeded";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::closed);
    }
    EXPECT_EQ(c.async().outstanding(), 0u);
    server.thaw();
}

TEST_P(ClientFaults, DestroyingTheClientCompletesEverythingFirst) {
    folsom::test::MemcachedServer server;
    std::atomic<int> completions{0};
    {
        auto o = options(server);
        o.request_timeout = 10s;
        folsom::BlockingClient c(o);
        ASSERT_EQ(c.set("k", "v"), Status::stored);
        server.freeze();
        for (int i = 0; i < 20; ++i)
            c.async().get("k", [&](std::error_code ec, std::optional<folsom::Value>) {
                EXPECT_EQ(ec, errc::closed);
                ++completions;
            });
    }  // ~BlockingClient: shutdown, deliver, join
    EXPECT_EQ(completions.load(), 20);
    server.thaw();
}

/// A get through a client whose server cannot be reached fails as a refused connect does:
/// connect_failed (the attempt itself) or not_connected (in backoff after it).
void expect_get_refused(folsom::BlockingClient& c) {
    try {
        c.get("k");
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_TRUE(e.code() == errc::connect_failed || e.code() == errc::not_connected)
            << e.code().message();
    }
}

TEST_P(ClientFaults, UnreachableServerFailsFastThenReconnectsWhenItAppears) {
    const auto port = folsom::test::free_loopback_port();
    folsom::Options o;
    o.servers = {"127.0.0.1:" + std::to_string(port)};
    o.protocol = GetParam();
    o.reconnect_initial_delay = 20ms;
    o.reconnect_max_delay = 100ms;
    folsom::BlockingClient c(o);
    expect_get_refused(c);
    // While in backoff, requests fail at once rather than queueing.
    const auto start = std::chrono::steady_clock::now();
    int not_connected = 0;
    for (int i = 0; i < 100; ++i) {
        try {
            c.get("k");
        } catch (const std::system_error& e) {
            not_connected += e.code() == errc::not_connected;
        }
    }
    EXPECT_GT(not_connected, 0);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_EQ(c.async().outstanding(), 0u);

    // The server appears: the backoff loop finds it without any help.
    folsom::test::MemcachedServer late(port, {});
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

TEST_P(ClientFaults, AConnectionToItselfIsARefusedConnect) {
    // A client that reconnects to a local port nobody listens on may be given that very port as
    // its own ephemeral port: TCP then connects the socket to itself (a simultaneous open), and
    // what the client reads back are its own requests. Made certain here, in a network namespace
    // of the test's own whose only ephemeral ports are 40000 and 40001 (connect() tries the even
    // one first): the first connect to 127.0.0.1:40000 is one to itself.
    if (const auto why = folsom::test::private_network_unavailable(); !why.empty())
        GTEST_SKIP() << why;
    const auto protocol = GetParam();
    const auto why = folsom::test::run_in_private_network([&] {
        const auto narrowed = folsom::test::narrow_ephemeral_ports(40000, 40001);
        ASSERT_TRUE(narrowed.empty()) << narrowed;
        auto registry = std::make_shared<folsom::MetricsRegistry>();
        folsom::Options o;
        o.servers = {"127.0.0.1:40000"};
        o.protocol = protocol;
        o.metrics = registry;
        o.reconnect_initial_delay = 20ms;
        o.reconnect_max_delay = 50ms;
        folsom::BlockingClient c(o);
        // Not a server: never ready, and requests fail as they do with nothing listening.
        // (Before, the client took itself for a server: it was ready, and each request failed
        // with protocol_error, having read back its own bytes.)
        try {
            c.async().wait_connected(300ms, asio::use_future).get();
            ADD_FAILURE() << "connected to itself";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::timeout) << e.code().message();
        }
        for (int i = 0; i < 20; ++i) {
            expect_get_refused(c);
            std::this_thread::sleep_for(10ms);
        }
        // The self-connect was counted as a failed connect, and the reconnect loop goes on.
        auto server = [&] { return registry->snapshot().servers.at(0); };
        EXPECT_TRUE(wait_for([&] { return server().connect_failures >= 3; }, 5s));
        EXPECT_EQ(server().connects, 0u);
        EXPECT_EQ(c.async().outstanding(), 0u);
    });
    if (!why.empty()) GTEST_SKIP() << "no private network namespace: " << why;
}

TEST(ClientReconnects, APoolsConnectionsComeBackSpreadOut) {
    // A server that accepts and at once closes: every connection of the pool fails in the same
    // instant, round after round. With a fixed 1 s backoff and no spread they would all come
    // back within a millisecond or two of each other each time (a thundering herd against a
    // restarted server); spread over 800..1200 ms, the eight reconnects of the second round
    // cover ~310 ms on average, and less than 100 ms with probability ~0.04%. The backoff is
    // long so that the first round, which a busy machine (or ThreadSanitizer) can stretch to
    // a hundred milliseconds and more, still ends well before the second begins.
    std::mutex mu;
    std::vector<std::chrono::steady_clock::time_point> accepts;
    folsom::test::FakeServer server([&](folsom::test::FakeConnection& c) {
        {
            std::lock_guard lk(mu);
            accepts.push_back(std::chrono::steady_clock::now());
        }
        c.close();
    });
    folsom::Options o;
    o.servers = {server.address()};
    o.connections_per_server = 8;
    o.reconnect_initial_delay = 1000ms;
    o.reconnect_max_delay = 1000ms;
    folsom::BlockingClient c(o);
    ASSERT_TRUE(wait_for(
        [&] {
            std::lock_guard lk(mu);
            return accepts.size() >= 16;
        },
        20s));
    std::lock_guard lk(mu);
    std::sort(accepts.begin(), accepts.end());
    // The first round: all eight connects at start-up, together.
    EXPECT_LT(accepts[7] - accepts[0], 600ms);
    // The second: eight reconnects, 800..1200 ms after their connection's failure.
    const auto spread = accepts[15] - accepts[8];
    EXPECT_GE(spread, 100ms) << "reconnects came back in step";
    EXPECT_GE(accepts[8] - accepts[0], 600ms);
}

TEST_P(ClientFaults, RequestsDuringTheFirstConnectWaitForIt) {
    folsom::test::MemcachedServer server;
    asio::io_context io;
    auto client = folsom::Client::connect(io, options(server));
    // Issued before the io_context ever ran: the connect has not even started.
    auto f = client.set("early", "bird", 0s, asio::use_future);
    std::thread runner([&] { io.run_for(3s); });
    EXPECT_EQ(f.get(), Status::stored);
    client.shutdown();
    runner.join();
}

TEST_P(ClientFaults, PerRequestDeadlineThroughCancellationSlots) {
    folsom::test::MemcachedServer server;
    auto o = options(server);
    o.request_timeout = 10s;  // the connection itself stays patient
    asio::io_context io;
    auto client = folsom::Client::connect(io, o);
    std::error_code cancelled_with;
    std::optional<folsom::Value> after;
    bool done = false;
    server.freeze();
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            using namespace asio::experimental::awaitable_operators;
            asio::steady_timer deadline(io, 100ms);
            // Whichever finishes first cancels the other: the get completes with cancelled.
            auto winner =
                co_await (client.get("k", asio::experimental::as_tuple(asio::use_awaitable)) ||
                          deadline.async_wait(asio::use_awaitable));
            EXPECT_EQ(winner.index(), 1u);
            // A bound cancellation signal does the same for any completion token.
            asio::cancellation_signal signal;
            auto pending = client.get(
                "k", asio::bind_cancellation_slot(
                         signal.slot(), asio::experimental::as_tuple(asio::use_awaitable)));
            asio::steady_timer t(io, 50ms);
            t.async_wait([&](std::error_code) { signal.emit(asio::cancellation_type::terminal); });
            auto [ec, v] = co_await std::move(pending);
            cancelled_with = ec;
            server.thaw();
            after = co_await client.get("k", asio::use_awaitable);  // the stream is still in step
            done = true;
            io.stop();
        },
        asio::detached);
    io.run_for(5s);
    io.restart();
    EXPECT_TRUE(done);
    EXPECT_EQ(cancelled_with, errc::cancelled);
    EXPECT_FALSE(after);
    EXPECT_EQ(client.outstanding(), 0u);
    client.shutdown();
    io.run_for(100ms);
}

TEST_P(ClientFaults, WaitConnectedReportsReadinessAndTimeouts) {
    folsom::test::MemcachedServer server;
    asio::io_context io;
    auto client = folsom::Client::connect(io, options(server));
    auto ready = client.wait_connected(2s, asio::use_future);
    std::thread runner([&] { io.run_for(3s); });
    EXPECT_NO_THROW(ready.get());

    // Nothing listening: the wait ends with a timeout, not a hang.
    folsom::Options o;
    o.servers = {"127.0.0.1:" + std::to_string(folsom::test::free_loopback_port())};
    o.protocol = GetParam();
    auto nowhere = folsom::Client::connect(io, o);
    const auto start = std::chrono::steady_clock::now();
    try {
        nowhere.wait_connected(200ms, asio::use_future).get();
        ADD_FAILURE() << "ready without a server";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    client.shutdown();
    nowhere.shutdown();
    io.stop();
    runner.join();
}

INSTANTIATE_TEST_SUITE_P(Protocols, ClientFaults, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
