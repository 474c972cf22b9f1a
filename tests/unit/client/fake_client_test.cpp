// The fake client on its own: readiness (Client::wait_connected) in all three completion
// forms, the injectable clock, delivery through the executor, and thread-safety. Its
// memcached semantics are held to a real server in tests/integration/fake_vs_real_test.cpp.
#include "folsom/fake_client.hpp"

#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;

TEST(FakeClient, WaitConnectedWithACallback) {
    asio::io_context io;
    auto client = folsom::make_fake_client(io);
    std::optional<std::error_code> result;
    client.wait_connected(1s, [&](std::error_code ec) { result = ec; });
    EXPECT_FALSE(result);  // never from inside the initiating call
    io.run();
    ASSERT_TRUE(result);
    EXPECT_FALSE(*result);
}

TEST(FakeClient, WaitConnectedWithAFuture) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread runner([&] { io.run(); });
    auto ready = folsom::make_fake_client(io, {.connect_delay = 50ms});
    auto f = ready.wait_connected(5s, asio::use_future);
    EXPECT_NO_THROW(f.get());  // connected after 50 ms, well within 5 s

    auto slow = folsom::make_fake_client(io, {.connect_delay = 1h});
    const auto start = std::chrono::steady_clock::now();
    auto late = slow.wait_connected(50ms, asio::use_future);
    try {
        late.get();
        ADD_FAILURE() << "no timeout";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
    // Requests do not wait for readiness.
    EXPECT_EQ(slow.set("k", "v", 0s, asio::use_future).get(), Status::stored);

    slow.shutdown();
    try {
        slow.wait_connected(1s, asio::use_future).get();
        ADD_FAILURE() << "ready after shutdown";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::closed);
    }
    work.reset();
    runner.join();
}

TEST(FakeClient, WaitConnectedWithACoroutine) {
    asio::io_context io;
    auto client = folsom::make_fake_client(io);
    bool done = false;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            co_await client.wait_connected(1s, asio::use_awaitable);
            co_await client.set("k", "v", 0s, asio::use_awaitable);
            auto v = co_await client.get("k", asio::use_awaitable);
            EXPECT_EQ(v->data, "v");
            done = true;
        },
        asio::detached);
    io.run();
    EXPECT_TRUE(done);
}

TEST(FakeClient, CompletionsRunOnTheExecutorNeverInline) {
    asio::io_context io;
    auto client = folsom::make_fake_client(io);
    int completed = 0;
    client.set("k", "v", 0s, [&](std::error_code ec, Status s) {
        EXPECT_FALSE(ec);
        EXPECT_EQ(s, Status::stored);
        ++completed;
    });
    client.get("bad key", [&](std::error_code ec, std::optional<folsom::Value>) {
        EXPECT_EQ(ec, errc::invalid_key);  // bad input fails through the executor too
        ++completed;
    });
    client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
        EXPECT_FALSE(ec);
        ASSERT_TRUE(v);  // requests take effect in the order they were made
        EXPECT_EQ(v->data, "v");
        ++completed;
    });
    EXPECT_EQ(completed, 0);
    EXPECT_EQ(client.outstanding(), 3u);
    io.run();
    EXPECT_EQ(completed, 3);
    EXPECT_EQ(client.outstanding(), 0u);
}

TEST(FakeClient, ManualClockDrivesTtlAndDelayedFlush) {
    folsom::ManualClock clock;
    folsom::BlockingClient c([&](asio::any_io_executor ex) {
        return folsom::make_fake_client(std::move(ex), {.clock = clock});
    });
    ASSERT_EQ(c.set("ten", "v", 10s), Status::stored);
    ASSERT_EQ(c.set("month", "v", folsom::Ttl{std::chrono::hours(24 * 40)}), Status::stored);
    clock.advance(9s);
    EXPECT_TRUE(c.get("ten"));
    clock.advance(1s);
    EXPECT_FALSE(c.get("ten"));
    clock.advance(std::chrono::hours(24 * 39));
    EXPECT_TRUE(c.get("month"));  // an absolute time, compared with the fake's clock
    clock.advance(std::chrono::hours(24 * 2));
    EXPECT_FALSE(c.get("month"));

    ASSERT_EQ(c.set("a", "v"), Status::stored);
    ASSERT_EQ(c.flush_all(60s)[0].value, Status::ok);
    clock.advance(59s);
    EXPECT_TRUE(c.get("a"));
    clock.advance(1s);
    EXPECT_FALSE(c.get("a"));
    ASSERT_EQ(c.set("b", "v"), Status::stored);
    EXPECT_TRUE(c.get("b"));

    auto stats = c.stats();
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0].server, "fake:0");
    bool saw_uptime = false;
    for (auto& [name, value] : stats[0].value)
        if (name == "uptime") saw_uptime = value == std::to_string(24 * 3600 * 41 + 60 + 10);
    EXPECT_TRUE(saw_uptime);
    EXPECT_EQ(c.version()[0].value, "fake");
}

TEST(FakeClient, OptionsLimits) {
    folsom::BlockingClient c([](asio::any_io_executor ex) {
        return folsom::make_fake_client(std::move(ex), {.max_value_size = 10, .version = "1.2.3"});
    });
    EXPECT_EQ(c.set("k", std::string(10, 'x')), Status::stored);
    try {
        c.set("k", std::string(11, 'x'));
        ADD_FAILURE() << "accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::value_too_large);
    }
    // An append past the limit is refused by the store, as memcached refuses an item too big.
    EXPECT_EQ(c.store(folsom::StoreMode::append, "k", "y", 0s), Status::not_stored);
    EXPECT_EQ(c.version()[0].value, "1.2.3");
}

TEST(FakeClient, ManyThreadsAtOnce) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::vector<std::thread> runners;
    for (int i = 0; i < 2; ++i)
        runners.emplace_back([&] { io.run(); });
    auto client = folsom::make_fake_client(io, {.max_outstanding_requests = 100000});
    ASSERT_EQ(client.set("n", "0", 0s, asio::use_future).get(), Status::stored);
    constexpr int threads = 4, per_thread = 2000;
    std::atomic<int> done{0}, failed{0};
    std::promise<void> all;
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
        callers.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                const std::string key = "k" + std::to_string(t) + "-" + std::to_string(i);
                client.set(key, key, 0s, [&](std::error_code ec, Status s) {
                    if (ec || s != Status::stored) ++failed;
                });
                client.incr("n", 1, [&](std::error_code ec, std::optional<std::uint64_t> v) {
                    if (ec || !v) ++failed;
                    if (++done == threads * per_thread) all.set_value();
                });
            }
        });
    }
    for (auto& t : callers)
        t.join();
    ASSERT_EQ(all.get_future().wait_for(30s), std::future_status::ready);
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(client.incr("n", 0, asio::use_future).get(), std::uint64_t{threads * per_thread});
    EXPECT_EQ(client.get("k3-1999", asio::use_future).get()->data, "k3-1999");
    work.reset();
    client.shutdown();
    for (auto& t : runners)
        t.join();
    EXPECT_EQ(client.outstanding(), 0u);
}

TEST(FakeClient, DroppingTheLastHandleShutsItDown) {
    asio::io_context io;
    std::error_code result;
    {
        auto client = folsom::make_fake_client(io);
        client.set("k", "v", 0s, [&](std::error_code ec, Status) { result = ec; });
    }
    io.run();
    EXPECT_EQ(result, errc::closed);
}

}  // namespace

namespace {

// The zero-copy multi-get works against the fake as against a server: each hit once, by
// index, before the completion.
TEST(FakeClient, MultiGetView) {
    asio::io_context io;
    auto client = folsom::make_fake_client(io);
    int stored = 0;
    client.set("a", "1", folsom::Ttl{0}, [&](std::error_code, Status) { ++stored; });
    client.set("c", "3", folsom::Ttl{0}, [&](std::error_code, Status) { ++stored; });
    io.run();
    ASSERT_EQ(stored, 2);
    const std::vector<std::string_view> keys = {"a", "b", "c", "a"};
    std::vector<std::string> seen(keys.size());
    std::optional<folsom::MultiGetViewResult> result;
    client.get_multi_view(
        keys,
        [&](std::size_t i, const folsom::ValueView& v) {
            EXPECT_FALSE(result) << "a hit after the completion";
            seen.at(i) += std::string(v.data);
        },
        [&](std::error_code ec, folsom::MultiGetViewResult r) {
            EXPECT_FALSE(ec);
            result = std::move(r);
        });
    io.restart();
    io.run();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->hits, 3u);
    EXPECT_TRUE(result->complete());
    EXPECT_EQ(seen, (std::vector<std::string>{"1", "", "3", "1"}));
}

}  // namespace
