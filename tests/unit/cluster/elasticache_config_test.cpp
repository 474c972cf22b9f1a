// ElastiCacheConfigParser: the configuration endpoint's reply, parsed without a socket, fed
// whole, byte by byte and split at every offset.
#include "cluster/discovery/elasticache_config.hpp"

#include "folsom/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

using folsom::errc;
using folsom::cluster::ElastiCacheCommand;
using folsom::cluster::ElastiCacheConfigParser;
using folsom::cluster::ElastiCacheNode;
using State = ElastiCacheConfigParser::State;

/// A reply as an endpoint builds it: the header counts the data exactly.
std::string config_reply(std::string_view data, std::string_view verb = "CONFIG",
                         std::string_view name = "cluster") {
    return std::string(verb) + " " + std::string(name) + " 0 " + std::to_string(data.size()) +
           "\r\n" + std::string(data) + "\r\nEND\r\n";
}

/// Feeds `bytes` in chunks of `chunk` bytes (0: whole); returns the parser.
ElastiCacheConfigParser parse(std::string_view bytes, std::size_t chunk = 0,
                              ElastiCacheCommand cmd = ElastiCacheCommand::config_get,
                              std::size_t max = 1024 * 1024) {
    ElastiCacheConfigParser p(cmd, max);
    if (chunk == 0) chunk = bytes.size() + 1;
    for (std::size_t off = 0; off < bytes.size() && p.state() == State::need_more; off += chunk)
        p.feed(bytes.substr(off, chunk));
    return p;
}

/// Feeds `bytes` split in two at every offset; every split must give `expected`, and the
/// same nodes as the whole reply.
void expect_every_split(std::string_view bytes, State expected, std::error_code ec = {}) {
    const auto whole = parse(bytes);
    ASSERT_EQ(whole.state(), expected);
    for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
        ElastiCacheConfigParser p;
        p.feed(bytes.substr(0, cut));
        p.feed(bytes.substr(cut));
        ASSERT_EQ(p.state(), expected) << "split at " << cut;
        EXPECT_EQ(p.error(), ec) << "split at " << cut;
        if (expected == State::done) {
            EXPECT_EQ(p.config().version, whole.config().version);
            EXPECT_EQ(p.config().nodes, whole.config().nodes);
        }
    }
    const auto bytewise = parse(bytes, 1);
    EXPECT_EQ(bytewise.state(), expected);
    EXPECT_EQ(bytewise.error(), ec);
}

TEST(ElastiCacheConfig, TheRequestLines) {
    EXPECT_EQ(folsom::cluster::elasticache_request(ElastiCacheCommand::config_get),
              "config get cluster\r\n");
    EXPECT_EQ(folsom::cluster::elasticache_request(ElastiCacheCommand::legacy_get),
              "get AmazonElastiCache:cluster\r\n");
}

TEST(ElastiCacheConfig, ParsesTheDocumentedFormat) {
    // The shape of the ElastiCache user guide's example ("config get cluster").
    const std::string data =
        "12\n"
        "myCluster.pc4ldq.0001.use1.cache.amazonaws.com|10.82.235.120|11211 "
        "myCluster.pc4ldq.0002.use1.cache.amazonaws.com|10.80.249.27|11211\n";
    ASSERT_EQ(data.size(), 136u);
    const std::string reply = "CONFIG cluster 0 136\r\n" + data + "\r\nEND\r\n";
    expect_every_split(reply, State::done);
    const auto p = parse(reply);
    EXPECT_EQ(p.config().version, 12u);
    ASSERT_EQ(p.config().nodes.size(), 2u);
    EXPECT_EQ(p.config().nodes[0],
              (ElastiCacheNode{"myCluster.pc4ldq.0001.use1.cache.amazonaws.com", "10.82.235.120",
                               11211}));
    const auto servers = p.config().servers();
    ASSERT_EQ(servers.size(), 2u);
    EXPECT_EQ(servers[0].host, "10.82.235.120");  // the ip, not the name
    EXPECT_EQ(servers[0].port, 11211);
    EXPECT_EQ(servers[0].weight, 1u);
    EXPECT_EQ(servers[1].host, "10.80.249.27");
}

TEST(ElastiCacheConfig, AnEmptyIpMeansTheHostname) {
    const auto p = parse(config_reply("3\nnode-a.example|10.0.0.1|11211 node-b.example||11212\n"));
    ASSERT_EQ(p.state(), State::done);
    const auto servers = p.config().servers();
    ASSERT_EQ(servers.size(), 2u);
    EXPECT_EQ(servers[0].host, "10.0.0.1");
    EXPECT_EQ(servers[1].host, "node-b.example");
    EXPECT_EQ(servers[1].port, 11212);
    // An empty hostname with an ip is fine too.
    const auto q = parse(config_reply("3\n|10.0.0.9|11213\n"));
    ASSERT_EQ(q.state(), State::done);
    EXPECT_EQ(q.config().servers().at(0).host, "10.0.0.9");
}

TEST(ElastiCacheConfig, ManyNodesSplitAnywhere) {
    std::string data = "18446744073709551615\n";  // the largest version
    for (int i = 0; i < 200; ++i)
        data +=
            (i ? " " : "") + ("n" + std::to_string(i) + ".cache|10.1." + std::to_string(i / 250) +
                              "." + std::to_string(i % 250) + "|" + std::to_string(11211 + i));
    data += "\n";
    const std::string reply = config_reply(data);
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7},
                              std::size_t{100}, std::size_t{4096}}) {
        const auto p = parse(reply, chunk);
        ASSERT_EQ(p.state(), State::done) << "chunk " << chunk;
        EXPECT_EQ(p.config().version, 18446744073709551615u);
        ASSERT_EQ(p.config().nodes.size(), 200u);
        EXPECT_EQ(p.config().nodes[199].ip, "10.1.0.199");
        EXPECT_EQ(p.config().nodes[199].port, 11211 + 199);
    }
}

TEST(ElastiCacheConfig, NoNodesParsesAsAnEmptyConfiguration) {
    // The caller decides what an empty cluster means (the discovery refuses it).
    const auto p = parse(config_reply("7\n\n"));
    ASSERT_EQ(p.state(), State::done);
    EXPECT_EQ(p.config().version, 7u);
    EXPECT_TRUE(p.config().nodes.empty());
}

TEST(ElastiCacheConfig, LegacyGetReply) {
    const std::string reply =
        config_reply("5\nh|10.0.0.1|11211\n", "VALUE", "AmazonElastiCache:cluster");
    const auto p = parse(reply, 3, ElastiCacheCommand::legacy_get);
    ASSERT_EQ(p.state(), State::done);
    EXPECT_EQ(p.config().version, 5u);
    // The other command's header is refused: the reply does not answer what was asked.
    EXPECT_EQ(parse(reply).error(), errc::protocol_error);
    EXPECT_EQ(
        parse(config_reply("5\nh|10.0.0.1|11211\n"), 0, ElastiCacheCommand::legacy_get).error(),
        errc::protocol_error);
    // A legacy miss: no item, no configuration.
    EXPECT_EQ(parse("END\r\n", 0, ElastiCacheCommand::legacy_get).error(), errc::resolve_failed);
}

TEST(ElastiCacheConfig, LenientAboutBlanksBetweenNodesAndAMissingLastNewline) {
    const auto p = parse(config_reply("1\na|10.0.0.1|1  b|10.0.0.2|2 \n"));
    ASSERT_EQ(p.state(), State::done);
    EXPECT_EQ(p.config().nodes.size(), 2u);
    const auto q = parse(config_reply("1\na|10.0.0.1|1"));
    ASSERT_EQ(q.state(), State::done);
    EXPECT_EQ(q.config().nodes.size(), 1u);
}

TEST(ElastiCacheConfig, ErrorRepliesAreErrors) {
    expect_every_split("ERROR\r\n", State::error, errc::server_error);
    expect_every_split("SERVER_ERROR out of memory\r\n", State::error, errc::server_error);
    expect_every_split("CLIENT_ERROR bad command line format\r\n", State::error,
                       errc::client_error);
    expect_every_split("END\r\n", State::error, errc::resolve_failed);
}

TEST(ElastiCacheConfig, MalformedHeadersAreProtocolErrors) {
    for (std::string_view bad : {
             "CONFIG cluster 0\r\n",                          // no byte count
             "CONFIG cluster 0 12 3\r\n",                     // one field too many
             "CONFIG clusters 0 12\r\n",                      // another key
             "config cluster 0 12\r\n",                       // verb is upper case
             "CONFIG cluster x 12\r\n",                       // flags not a number
             "CONFIG cluster 0 -12\r\n",                      // a sign
             "CONFIG  cluster 0 12\r\n",                      // double blank
             "CONFIG cluster 0 99999999999999999999999\r\n",  // overflows
             "VALUE cluster 0 12\r\n",                        // legacy header to a config get
             "HELLO\r\n",                                     // garbage
         }) {
        const auto p = parse(bad);
        EXPECT_EQ(p.state(), State::error) << bad;
        EXPECT_EQ(p.error(), errc::protocol_error) << bad;
    }
}

TEST(ElastiCacheConfig, AHeaderLineWithoutEndIsBounded) {
    // A peer that never sends "\r\n": refused once the line is longer than any header.
    ElastiCacheConfigParser p;
    std::size_t fed = 0;
    while (p.state() == State::need_more && fed < 100000) {
        p.feed(std::string(100, 'C'));
        fed += 100;
    }
    EXPECT_EQ(p.error(), errc::protocol_error);
    EXPECT_LE(fed, ElastiCacheConfigParser::max_header_line + 100);
}

TEST(ElastiCacheConfig, ByteCountMustMatchTheData) {
    const std::string data = "4\nh|10.0.0.1|11211\n";
    const auto n = data.size();
    const auto with_count = [&](std::size_t count) {
        return "CONFIG cluster 0 " + std::to_string(count) + "\r\n" + data + "\r\nEND\r\n";
    };
    ASSERT_EQ(parse(with_count(n)).state(), State::done);
    // Too small: the trailer does not follow the counted bytes.
    for (std::size_t count : {n - 1, n - 5, std::size_t{0}}) {
        expect_every_split(with_count(count), State::error, errc::protocol_error);
    }
    // Too large: the trailer's "\r" lands inside the counted data, which never holds one; the
    // error comes without waiting for bytes that would never arrive.
    for (std::size_t count : {n + 1, n + 2, n + 7, n + 1000}) {
        expect_every_split(with_count(count), State::error, errc::protocol_error);
    }
}

TEST(ElastiCacheConfig, MissingEndIsAnError) {
    const std::string data = "4\nh|10.0.0.1|11211\n";
    const std::string head = "CONFIG cluster 0 " + std::to_string(data.size()) + "\r\n" + data;
    // Something else where END belongs.
    EXPECT_EQ(parse(head + "\r\nEDN\r\n").error(), errc::protocol_error);
    EXPECT_EQ(parse(head + "\r\n\r\n").error(), errc::protocol_error);
    EXPECT_EQ(parse(head + "\n\nEND\r\n").error(), errc::protocol_error);
    // The peer closes before END: incomplete, then connection_lost.
    auto p = parse(head + "\r\nEN");
    EXPECT_EQ(p.state(), State::need_more);
    EXPECT_EQ(p.finish_input(), State::error);
    EXPECT_EQ(p.error(), errc::connection_lost);
    // finish_input after a complete reply changes nothing.
    auto q = parse(head + "\r\nEND\r\n");
    EXPECT_EQ(q.finish_input(), State::done);
}

TEST(ElastiCacheConfig, BadVersionsAndEntriesAreProtocolErrors) {
    for (std::string_view data : {
             "\nh|10.0.0.1|11211\n",                 // no version
             "v1\nh|10.0.0.1|11211\n",               // not a number
             "18446744073709551616\nh|1.2.3.4|1\n",  // overflows 64 bits
             "1\nh|10.0.0.1\n",                      // two fields
             "1\nh|10.0.0.1|11211|x\n",              // four fields
             "1\nh10.0.0.1:11211\n",                 // not the format at all
             "1\n||11211\n",                         // neither name nor ip
             "1\nh|10.0.0.1|0\n",                    // port 0
             "1\nh|10.0.0.1|65536\n",                // port out of range
             "1\nh|10.0.0.1|-1\n",                   // sign
             "1\nh|10.0.0.1|\n",                     // empty port
             "1\nh|10.0.0.1|1x\n",                   // trailing garbage in the port
             "1\nh\x01|10.0.0.1|1\n",                // control byte in the name
             "1\nh|10.0.0.1|1\nextra\n",             // a third line
             "1",                                    // no node line at all
         }) {
        const auto p = parse(config_reply(data));
        EXPECT_EQ(p.state(), State::error) << data;
        EXPECT_EQ(p.error(), errc::protocol_error) << data;
    }
}

TEST(ElastiCacheConfig, ReplySizeIsBounded) {
    // A declared size over the bound is refused from the header alone, before any data.
    ElastiCacheConfigParser p(ElastiCacheCommand::config_get, 1000);
    EXPECT_EQ(p.feed("CONFIG cluster 0 1001\r\n"), State::error);
    EXPECT_EQ(p.error(), errc::protocol_error);
    ElastiCacheConfigParser q(ElastiCacheCommand::config_get, 1000);
    EXPECT_EQ(q.feed("CONFIG cluster 0 18446744073709551615\r\n"), State::error);
    // Exactly at the bound is fine: one node whose name fills the 1000 bytes.
    const std::string_view rest = "|10.0.0.1|11211\n";
    const std::string data = "1\n" + std::string(1000 - 2 - rest.size(), 'h') + std::string(rest);
    ASSERT_EQ(data.size(), 1000u);
    EXPECT_EQ(parse(config_reply(data), 0, ElastiCacheCommand::config_get, 1000).state(),
              State::done);
    EXPECT_EQ(parse(config_reply(data), 0, ElastiCacheCommand::config_get, 999).error(),
              errc::protocol_error);
}

TEST(ElastiCacheConfig, BytesAfterEndAreIgnoredAndErrorsAreSticky) {
    const std::string reply = config_reply("2\nh|10.0.0.1|11211\n");
    ElastiCacheConfigParser p;
    EXPECT_EQ(p.feed(reply + "CONFIG cluster 0 3\r\n"), State::done);
    EXPECT_EQ(p.config().nodes.size(), 1u);
    EXPECT_EQ(p.feed("garbage"), State::done);

    ElastiCacheConfigParser q;
    EXPECT_EQ(q.feed("ERROR\r\n"), State::error);
    EXPECT_EQ(q.feed(reply), State::error);
    EXPECT_EQ(q.error(), errc::server_error);
}

}  // namespace
