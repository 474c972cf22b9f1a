#include "folsom/server_address.hpp"

#include "folsom/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;

ServerAddress parse_ok(std::string_view text) {
    ServerAddress a;
    const auto ec = folsom::parse_server_address(text, a);
    EXPECT_FALSE(ec) << text << ": " << ec.message();
    return a;
}

std::error_code parse_error(std::string_view text) {
    ServerAddress a{"untouched", 1, 7};
    const auto ec = folsom::parse_server_address(text, a);
    EXPECT_EQ(a, (ServerAddress{"untouched", 1, 7})) << "output written on error: " << text;
    return ec;
}

TEST(ServerAddress, HostAloneTakesTheDefaults) {
    EXPECT_EQ(parse_ok("cache-1.example"), (ServerAddress{"cache-1.example", 11211, 1}));
    EXPECT_EQ(parse_ok("10.0.0.1"), (ServerAddress{"10.0.0.1", 11211, 1}));
}

TEST(ServerAddress, HostPortAndWeight) {
    EXPECT_EQ(parse_ok("10.0.0.1:11212"), (ServerAddress{"10.0.0.1", 11212, 1}));
    EXPECT_EQ(parse_ok("a:1:600"), (ServerAddress{"a", 1, 600}));
    EXPECT_EQ(parse_ok("a:65535:4294967295"), (ServerAddress{"a", 65535, 4294967295u}));
}

TEST(ServerAddress, BracketedIpv6) {
    EXPECT_EQ(parse_ok("[::1]"), (ServerAddress{"::1", 11211, 1}));
    EXPECT_EQ(parse_ok("[2001:db8::7]:11300"), (ServerAddress{"2001:db8::7", 11300, 1}));
    EXPECT_EQ(parse_ok("[fe80::1%eth0]:11300:3"), (ServerAddress{"fe80::1%eth0", 11300, 3}));
}

TEST(ServerAddress, RefusesMalformedInput) {
    for (std::string_view bad : {
             "",           // nothing
             ":11211",     // no host
             "a:",         // empty port
             "a:0",        // port 0 is not a server
             "a:65536",    // port out of range
             "a:-1",       // signs are not decimal digits here
             "a:+1",       //
             "a:11211x",   // trailing garbage
             "a:11211:",   // empty weight
             "a:11211:0",  // weight 0 would own no keys: refuse rather than surprise
             "a:1:4294967296",
             "a:1:2:3",  // too many fields
             "::1",      // bare IPv6 is ambiguous
             "2001:db8::1:11211",
             "[::1",       // unclosed bracket
             "[::1]x",     // junk after the bracket
             "[::1]:",     //
             "[host]",     // brackets are for IPv6 only
             "[]:11211",   //
             "a b:11211",  // blanks and control characters
             "a\n:1",
             "a,b",  // a list is not an address
             "a/b",
         }) {
        EXPECT_EQ(parse_error(bad), folsom::errc::invalid_argument) << '"' << bad << '"';
    }
}

TEST(ServerAddress, ToStringRoundTrips) {
    EXPECT_EQ((ServerAddress{"a", 11211, 5}).to_string(), "a:11211");
    EXPECT_EQ((ServerAddress{"::1", 11300, 1}).to_string(), "[::1]:11300");
    for (std::string_view text : {"a:1", "10.1.2.3:11211", "[2001:db8::1]:99"}) {
        EXPECT_EQ(parse_ok(text).to_string(), text);
    }
}

TEST(ServerList, ParsesEntriesInOrder) {
    std::vector<ServerAddress> list;
    ASSERT_FALSE(folsom::parse_server_list("a:1, b:2:3 ,[::1]:4,c", list));
    ASSERT_EQ(list.size(), 4u);
    EXPECT_EQ(list[0], (ServerAddress{"a", 1, 1}));
    EXPECT_EQ(list[1], (ServerAddress{"b", 2, 3}));
    EXPECT_EQ(list[2], (ServerAddress{"::1", 4, 1}));
    EXPECT_EQ(list[3], (ServerAddress{"c", 11211, 1}));
}

TEST(ServerList, RefusesEmptyEntriesAndKeepsTheOutputOnError) {
    for (std::string_view bad : {"", " ", "a,", ",a", "a,,b", "a:1,b:x"}) {
        std::vector<ServerAddress> list{{"keep", 1, 1}};
        EXPECT_EQ(folsom::parse_server_list(bad, list), folsom::errc::invalid_argument)
            << '"' << bad << '"';
        ASSERT_EQ(list.size(), 1u);
        EXPECT_EQ(list[0].host, "keep");
    }
}

// ---- Unix domain sockets ------------------------------------------------------------------

TEST(ServerAddress, ASocketPathIsAUnixSocketServer) {
    const auto a = parse_ok("/run/memcached/memcached.sock");
    EXPECT_TRUE(a.is_unix_socket());
    EXPECT_EQ(a.host, "/run/memcached/memcached.sock");
    EXPECT_EQ(a.port, 0);  // as libmemcached gives a socket
    EXPECT_EQ(a.weight, 1u);
    EXPECT_EQ(a.to_string(), "/run/memcached/memcached.sock");  // its name in metrics
    EXPECT_EQ(a, ServerAddress::unix_socket("/run/memcached/memcached.sock"));
    EXPECT_FALSE(parse_ok("10.0.0.1:11211").is_unix_socket());
}

TEST(ServerAddress, ASocketTakesLibmemcachedsWeightSuffix) {
    EXPECT_EQ(parse_ok("/run/a.sock/?3"), ServerAddress::unix_socket("/run/a.sock", 3));
    // A colon is part of the path, not a port.
    EXPECT_EQ(parse_ok("/srv/with:colon.sock"), ServerAddress::unix_socket("/srv/with:colon.sock"));
    EXPECT_EQ(parse_error("/run/a.sock/?0"), folsom::errc::invalid_argument);
    EXPECT_EQ(parse_error("/run/a.sock/?"), folsom::errc::invalid_argument);
    EXPECT_EQ(parse_error("/run/a.sock/?-1"), folsom::errc::invalid_argument);
}

TEST(ServerAddress, BadSocketPathsAreRefusedSayingWhy) {
    ServerAddress a;
    std::string why;
    const std::string too_long = "/" + std::string(folsom::max_unix_socket_path, 'x');
    EXPECT_EQ(folsom::parse_server_address(too_long, a, &why), folsom::errc::invalid_argument);
    EXPECT_NE(why.find(too_long), std::string::npos) << why;
    EXPECT_NE(why.find("too long"), std::string::npos) << why;
    EXPECT_FALSE(parse_ok("/" + std::string(folsom::max_unix_socket_path - 1, 'x')).host.empty());
    EXPECT_EQ(parse_error("/"), folsom::errc::invalid_argument);
    EXPECT_EQ(parse_error(std::string("/a\0b", 4)), folsom::errc::invalid_argument);
    EXPECT_EQ(folsom::parse_server_address("/a\tb", a, &why), folsom::errc::invalid_argument);
    EXPECT_NE(why.find("\\x09"), std::string::npos) << why;  // shown escaped
    EXPECT_EQ(folsom::parse_server_address("nohost:99999", a, &why),
              folsom::errc::invalid_argument);
    EXPECT_NE(why.find("nohost:99999"), std::string::npos) << why;
}

TEST(ServerAddress, ListsMixSocketsWithTcpServers) {
    std::vector<ServerAddress> list;
    ASSERT_FALSE(folsom::parse_server_list("10.0.0.1:11211, /run/a.sock/?2 ,[::1]:11300", list));
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[1], ServerAddress::unix_socket("/run/a.sock", 2));
    EXPECT_EQ(list[2], (ServerAddress{"::1", 11300, 1}));
}

}  // namespace
