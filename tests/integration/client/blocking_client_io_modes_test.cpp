// BlockingClient with either driver, its own I/O thread or the calling threads
// (BlockingClient::Driver::caller: the first waiter drives the I/O, the others follow). Every
// call answers once, over every protocol, over TCP and a Unix socket, and from many threads at
// once; a caller-driven client reconnects after its server comes back even when every call in
// between fails at once (nothing else would run its reconnect timer), times out against a
// frozen server, and starts no thread.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <dirent.h>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::BlockingClient;
using folsom::Protocol;
using folsom::Status;
using Driver = BlockingClient::Driver;

const char* driver_name(Driver d) {
    return d == Driver::caller ? "caller" : "io_thread";
}

/// The threads of this process (/proc/self/task).
int thread_count() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (const dirent* e = ::readdir(d))
            if (e->d_name[0] != '.') ++n;
        ::closedir(d);
    }
    return n;
}

folsom::errc error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const std::system_error& e) {
        return static_cast<folsom::errc>(e.code().value());
    }
    return folsom::errc{};
}

using folsom::test::Transport;

class BlockingDriverOps : public ::testing::TestWithParam<std::tuple<Driver, Protocol, Transport>> {
  protected:
    Driver driver() const { return std::get<0>(GetParam()); }
    Protocol protocol() const { return std::get<1>(GetParam()); }
    folsom::test::MemcachedServer start_server() const {
        if (std::get<2>(GetParam()) == Transport::unix_socket)
            return folsom::test::MemcachedServer(folsom::test::UnixSocket{});
        return folsom::test::MemcachedServer();
    }
};

TEST_P(BlockingDriverOps, EveryOperationAnswers) {
    folsom::test::MemcachedServer server = start_server();
    BlockingClient c(folsom::Options{.servers = {server.address()}, .protocol = protocol()},
                     driver());
    EXPECT_EQ(c.set("k", "hello", 60s, 7), Status::stored);
    const auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "hello");
    EXPECT_EQ(v->flags, 7u);
    const auto g = c.gets("k");
    ASSERT_TRUE(g);
    EXPECT_EQ(c.cas("k", "second", g->cas), Status::stored);
    EXPECT_EQ(c.cas("k", "third", g->cas), Status::exists);
    EXPECT_EQ(c.get("k")->data, "second");
    EXPECT_EQ(c.touch("k", 60s), Status::touched);
    EXPECT_EQ(c.set("n", "10"), Status::stored);
    EXPECT_EQ(c.incr("n", 5), 15u);
    const std::vector<std::string_view> keys{"k", "missing", "n"};
    const auto m = c.get_multi(keys);
    ASSERT_EQ(m.values.size(), 3u);
    EXPECT_TRUE(m.complete());
    EXPECT_EQ(m.values[0]->data, "second");
    EXPECT_FALSE(m.values[1]);
    EXPECT_EQ(m.values[2]->data, "15");
    EXPECT_EQ(c.decr("n", 20), 0u);
    EXPECT_EQ(c.del("k"), Status::deleted);
    EXPECT_EQ(c.del("k"), Status::not_found);
    EXPECT_FALSE(c.get("k"));
    EXPECT_EQ(c.version().size(), 1u);
    EXPECT_FALSE(c.stats().front().value.empty());
    EXPECT_EQ(c.flush_all().front().value, Status::ok);
    EXPECT_FALSE(c.get("n"));
    // Bad input: refused before anything is sent, as an exception.
    EXPECT_EQ(error_of([&] { c.get("a key with spaces"); }), folsom::errc::invalid_key);
    EXPECT_EQ(c.set("after", "ok"), Status::stored);
}

std::string driver_protocol_and_transport_name(
    const ::testing::TestParamInfo<std::tuple<Driver, Protocol, Transport>>& info) {
    const auto [driver, protocol, transport] = info.param;
    return std::string(driver_name(driver)) + "_" +
           folsom::test::protocol_name({protocol, info.index}) + "_" +
           folsom::test::transport_name(transport);
}

INSTANTIATE_TEST_SUITE_P(All, BlockingDriverOps,
                         ::testing::Combine(::testing::Values(Driver::io_thread, Driver::caller),
                                            folsom::test::all_protocols,
                                            ::testing::Values(Transport::tcp,
                                                              Transport::unix_socket)),
                         driver_protocol_and_transport_name);

class BlockingDriver : public ::testing::TestWithParam<Driver> {};

// Eight threads share one client: each request is answered once, with its own value (the
// caller-driven loop hands the driving from thread to thread as requests end).
TEST_P(BlockingDriver, ManyThreadsShareOneClientAndEveryCallAnswersOnceWithItsOwnValue) {
    folsom::test::MemcachedServer server;
    BlockingClient c(folsom::Options{.servers = {server.address()}}, GetParam());
    constexpr int threads = 8, rounds = 400;
    std::atomic<int> answered{0}, wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < rounds; ++i) {
                const std::string key = "t" + std::to_string(t) + ":" + std::to_string(i % 7);
                const std::string value = key + "=" + std::to_string(i);
                if (c.set(key, value) != Status::stored) ++wrong;
                const auto v = c.get(key);
                if (!v || v->data != value) ++wrong;
                const std::vector<std::string_view> keys{key, "none"};
                const auto m = c.get_multi(keys);
                if (!m.complete() || !m.values[0] || m.values[0]->data != value || m.values[1])
                    ++wrong;
                answered += 3;
            }
        });
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(answered.load(), threads * rounds * 3);
}

// The server dies and comes back on the same port. While it is down every call fails at once
// (connection_lost for the one in flight, then not_connected during the backoff); once it is
// back, calls succeed again. Caller-driven, nothing runs between calls and a refused call
// drives nothing: the client runs what fell due at the start of a call
// (BlockingLoop::catch_up_period), or its reconnect timer would never run.
TEST_P(BlockingDriver, ReconnectsOnceTheServerIsBackEvenWhenEveryCallInBetweenFailsAtOnce) {
    folsom::test::MemcachedServer server;
    BlockingClient c(folsom::Options{.servers = {server.address()}}, GetParam());
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    server.kill();
    int failed = 0;
    for (int i = 0; i < 3; ++i) {
        const auto e = error_of([&] { c.get("k"); });
        EXPECT_TRUE(e == folsom::errc::connection_lost || e == folsom::errc::not_connected)
            << static_cast<int>(e);
        failed += e != folsom::errc{};
    }
    EXPECT_EQ(failed, 3);
    server.restart();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    bool back = false;
    int attempts = 0;
    while (!back && std::chrono::steady_clock::now() < deadline) {
        ++attempts;
        back = error_of([&] { c.set("k", "again"); }) == folsom::errc{};
        if (!back) std::this_thread::sleep_for(5ms);
    }
    ASSERT_TRUE(back) << "no successful call within 10 s, " << attempts << " attempts";
    EXPECT_EQ(c.get("k")->data, "again");
}

TEST_P(BlockingDriver, TimesOutAgainstAFrozenServerAndRecovers) {
    folsom::test::MemcachedServer server;
    BlockingClient c(folsom::Options{.servers = {server.address()}, .request_timeout = 200ms},
                     GetParam());
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    server.freeze();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { c.get("k"); }), folsom::errc::timeout);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, 150ms);
    EXPECT_LT(took, 5s);
    server.thaw();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    std::optional<folsom::Value> v;
    while (!v && std::chrono::steady_clock::now() < deadline) {
        try {
            v = c.get("k");
        } catch (const std::system_error&) {
            std::this_thread::sleep_for(5ms);
        }
    }
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "v");
}

std::string driver_param_name(const ::testing::TestParamInfo<Driver>& info) {
    return driver_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(All, BlockingDriver, ::testing::Values(Driver::io_thread, Driver::caller),
                         driver_param_name);

TEST(BlockingDriverCaller, StartsNoThreadWhereTheIoThreadDriverStartsOne) {
    folsom::test::MemcachedServer server;
    const folsom::Options options{.servers = {server.address()}};
    {  // (a sanitizer's runtime may start a thread of its own with the process's second one)
        BlockingClient first(options, Driver::io_thread);
        EXPECT_EQ(first.set("k", "v"), Status::stored);
    }
    const int before = thread_count();
    {
        BlockingClient c(options, Driver::caller);
        EXPECT_EQ(c.set("k", "v"), Status::stored);
        EXPECT_EQ(c.get("k")->data, "v");
        EXPECT_EQ(thread_count(), before);
    }
    {
        BlockingClient c(options, Driver::io_thread);
        EXPECT_EQ(c.get("k")->data, "v");
        EXPECT_EQ(thread_count(), before + 1);
    }
}

// Caller-driven, a request started through async() waits for a thread to drive: it is sent
// and answered within the next blocking call (its reply comes first on the one connection),
// and its handler runs once.
TEST(BlockingDriverCaller, AnAsyncRequestProgressesWithinTheNextBlockingCall) {
    folsom::test::MemcachedServer server;
    BlockingClient c(folsom::Options{.servers = {server.address()}}, Driver::caller);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    std::atomic<int> calls{0};
    std::string got;
    c.async().get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
        if (!ec && v) got = v->data;
        ++calls;
    });
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(calls.load(), 0);  // nothing drove the I/O
    EXPECT_EQ(c.get("k")->data, "v");
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(got, "v");
}

// A handler of the caller's own that throws runs inside one of the next calls (whichever
// drives the I/O when it is due): that call finishes its own request, then rethrows (its
// request's handler points at its frame, so it cannot leave earlier), and the client goes on,
// from this thread and from another.
TEST(BlockingDriverCaller, AHandlerThatThrowsInsideACallIsRethrownByItAndTheClientGoesOn) {
    folsom::test::MemcachedServer server;
    BlockingClient c(folsom::Options{.servers = {server.address()}}, Driver::caller);
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    c.async().get("k", [](std::error_code, std::optional<folsom::Value>) {
        throw std::runtime_error("from a handler");
    });
    int thrown = 0, answered = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (thrown == 0 && std::chrono::steady_clock::now() < deadline) {
        try {
            if (c.get("k")->data == "v") ++answered;
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "from a handler");
            ++thrown;
        }
    }
    EXPECT_EQ(thrown, 1);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(c.get("k")->data, "v");
    std::thread other([&] { EXPECT_EQ(c.get("k")->data, "v"); });
    other.join();
}

// The same handler still queued when the client is destroyed: the destructor runs it and drops
// its exception (nothing is left to report it to), rather than ending the program.
TEST(BlockingDriverCaller, AHandlerThatThrowsWhileTheClientIsDestroyedIsDropped) {
    folsom::test::MemcachedServer server;
    std::atomic<int> ran{0};
    {
        BlockingClient c(folsom::Options{.servers = {server.address()}}, Driver::caller);
        ASSERT_EQ(c.set("k", "v"), Status::stored);
        c.async().get("k", [&](std::error_code, std::optional<folsom::Value>) {
            ++ran;
            throw std::runtime_error("from a handler");
        });
    }
    EXPECT_EQ(ran.load(), 1);
}

// Destroyed with an async request outstanding: its handler runs exactly once (with the
// client's closing error or its reply), for either driver.
TEST(BlockingDriverCaller, DestructionCompletesOutstandingRequestsOnce) {
    folsom::test::MemcachedServer server;
    for (const Driver d : {Driver::caller, Driver::io_thread}) {
        std::atomic<int> calls{0};
        {
            BlockingClient c(folsom::Options{.servers = {server.address()}}, d);
            ASSERT_EQ(c.set("k", "v"), Status::stored);
            for (int i = 0; i < 10; ++i)
                c.async().get("k", [&](std::error_code, std::optional<folsom::Value>) { ++calls; });
        }
        EXPECT_EQ(calls.load(), 10) << driver_name(d);
    }
}

}  // namespace
