#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

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

}  // namespace
