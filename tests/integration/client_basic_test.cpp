#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>

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

}  // namespace
