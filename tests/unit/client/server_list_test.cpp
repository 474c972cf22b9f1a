// Options::servers starts empty, so a program that adds its servers one by one (as it did with
// libmemcached's memcached_server_add) gets exactly those: no phantom 127.0.0.1:11211 among
// them. An empty list still means memcached's default address. The io_context is never run,
// so nothing connects: these tests need no network.
#include "folsom/client.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <string>

namespace {

TEST(ServerList, StartsEmpty) {
    EXPECT_TRUE(folsom::Options{}.servers.empty());
}

TEST(ServerList, TwoPushedServersAreExactlyTwo) {
    folsom::Options o;
    o.servers.push_back("127.0.0.1:21001");
    o.servers.push_back("127.0.0.1:21002");
    asio::io_context io;
    auto client = folsom::Client::connect(io, o);
    ASSERT_EQ(client.server_count(), 2u);
    EXPECT_EQ(client.server_name(0), "127.0.0.1:21001");
    EXPECT_EQ(client.server_name(1), "127.0.0.1:21002");
    client.shutdown();
}

TEST(ServerList, EmptyMeansTheDefaultServer) {
    asio::io_context io;
    auto client = folsom::Client::connect(io, folsom::Options{});
    ASSERT_EQ(client.server_count(), 1u);
    EXPECT_EQ(client.server_name(0), std::string(folsom::default_server));
    EXPECT_EQ(client.server_name(0), "127.0.0.1:11211");
    client.shutdown();
}

}  // namespace
