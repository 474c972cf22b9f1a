#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <asio/bind_allocator.hpp>
#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <thread>

namespace {

using namespace std::chrono_literals;

TEST(ClientBasic, SetGetDelete) {
    folsom::test::MemcachedServer server;
    folsom::BlockingClient c(folsom::Options{.servers = {server.address()}});
    EXPECT_EQ(c.set("k", "hello", 60s, 42), folsom::Status::stored);
    auto v = c.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "hello");
    EXPECT_EQ(v->flags, 42u);
    EXPECT_EQ(c.del("k"), folsom::Status::deleted);
    EXPECT_FALSE(c.get("k"));
}

// Connections run on the io_context's concrete executor (no type-erased executor on the I/O
// path), so the executor given must lead to an io_context: the context itself, its executor
// (type-erased or not, with any properties) or a strand of it. Anything else is refused.
TEST(ClientBasic, RunsOnAnIoContextItsExecutorsAndStrandsAndRefusesOtherExecutors) {
    folsom::test::MemcachedServer server;
    const folsom::Options options{.servers = {server.address()}};
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread runner([&] { io.run(); });
    {  // (the tracked executor below keeps io.run() going until it is destroyed)
        const asio::any_io_executor given[] = {
            io.get_executor(),
            asio::make_strand(io),
            asio::require(io.get_executor(), asio::execution::outstanding_work.tracked),
            asio::prefer(io.get_executor(), asio::execution::blocking.never),
        };
        for (const auto& ex : given) {
            auto client = folsom::Client::connect(ex, options);
            EXPECT_EQ(client.set("k", "v", folsom::Ttl{0}, asio::use_future).get(),
                      folsom::Status::stored);
            EXPECT_EQ(client.get("k", asio::use_future).get()->data, "v");
            client.shutdown();
        }
    }
    work.reset();
    runner.join();

    asio::thread_pool pool(1);
    try {
        folsom::Client::connect(pool.get_executor(), options);
        ADD_FAILURE() << "a thread_pool executor was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), folsom::errc::invalid_argument);
    }
    pool.join();
}

/// Runs `io` until `done()` holds or 5 s have passed (the client keeps io busy for good).
template <class Pred>
void run_until(asio::io_context& io, Pred done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        io.run_one_for(100ms);
}

// Completions run inline on the I/O thread when their executor is the io_context's (as
// asio::dispatch would run them). A handler that throws must not tear the connection's read
// loop: the exception leaves io_context::run(), as with any Asio handler, and the requests
// around it still complete exactly once, on a connection that keeps working.
TEST(ClientBasic, AThrowingHandlerLeavesThroughRunAndTheConnectionKeepsWorking) {
    folsom::test::MemcachedServer server;
    asio::io_context io;
    auto client = folsom::Client::connect(io, folsom::Options{.servers = {server.address()}});
    int stored = 0;
    client.set("k", "v", folsom::Ttl{0}, [&](std::error_code ec, folsom::Status s) {
        EXPECT_FALSE(ec);
        EXPECT_EQ(s, folsom::Status::stored);
        ++stored;
    });
    run_until(io, [&] { return stored == 1; });
    ASSERT_EQ(stored, 1);

    int before = 0, after = 0, thrown = 0;
    client.get("k", [&](std::error_code, std::optional<folsom::Value>) { ++before; });
    client.get("k", [&](std::error_code, std::optional<folsom::Value>) {
        throw std::runtime_error("from a completion handler");
    });
    client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
        EXPECT_FALSE(ec);
        EXPECT_TRUE(v && v->data == "v");
        ++after;
    });
    io.restart();
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while ((after == 0 || thrown == 0) && std::chrono::steady_clock::now() < deadline) {
        try {
            io.run_one_for(100ms);
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "from a completion handler");
            ++thrown;
            io.restart();
        }
    }
    EXPECT_EQ(thrown, 1);
    EXPECT_EQ(before, 1);
    EXPECT_EQ(after, 1);

    int again = 0;
    client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
        EXPECT_FALSE(ec);
        EXPECT_TRUE(v && v->data == "v");
        ++again;
    });
    io.restart();
    run_until(io, [&] { return again == 1; });
    EXPECT_EQ(again, 1);
    EXPECT_EQ(before + after, 2);  // nothing ran twice
}

/// Counts the blocks it has handed out and not yet taken back.
template <class T>
struct CountingAllocator {
    using value_type = T;
    explicit CountingAllocator(int* counter) noexcept : live(counter) {}
    template <class U>
    CountingAllocator(const CountingAllocator<U>& o) noexcept : live(o.live) {}
    T* allocate(std::size_t n) {
        ++*live;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        --*live;
        std::allocator<T>().deallocate(p, n);
    }
    bool operator==(const CountingAllocator& o) const noexcept { return live == o.live; }
    int* live;
};

// A request's state comes from its handler's associated allocator and is given back before
// the handler runs: a handler that issues the next request (the usual pipelined loop) reuses
// that memory instead of holding two blocks at once.
TEST(ClientBasic, ARequestsMemoryIsFreedBeforeItsHandlerRuns) {
    folsom::test::MemcachedServer server;
    asio::io_context io;
    auto client = folsom::Client::connect(io, folsom::Options{.servers = {server.address()}});
    int live = 0, done = 0;
    auto check = [&](std::error_code ec) {
        EXPECT_FALSE(ec);
        // The three requests complete in order on one connection: only the later ones may
        // still hold their blocks.
        EXPECT_EQ(live, 2 - done) << "the request's memory is still held while its handler runs";
        ++done;
    };
    const CountingAllocator<void> alloc(&live);
    client.set("k", "v", folsom::Ttl{0},
               asio::bind_allocator(alloc, [&](std::error_code ec, folsom::Status) { check(ec); }));
    client.get("k",
               asio::bind_allocator(alloc, [&](std::error_code ec, std::optional<folsom::Value> v) {
                   EXPECT_TRUE(v && v->data == "v");
                   check(ec);
               }));
    client.get("missing",
               asio::bind_allocator(
                   alloc, [&](std::error_code ec, std::optional<folsom::Value>) { check(ec); }));
    EXPECT_EQ(live, 3) << "each request takes one block from its handler's allocator";
    run_until(io, [&] { return done == 3; });
    EXPECT_EQ(done, 3);
    EXPECT_EQ(live, 0);
}

}  // namespace
