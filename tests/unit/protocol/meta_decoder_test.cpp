#include "folsom/protocol/meta_decoder.hpp"

#include "support/split_feed.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace folsom::protocol::meta {
namespace {

const char* kind_name(ReplyKind k) {
    switch (k) {
        case ReplyKind::value:
            return "VA";
        case ReplyKind::hit:
            return "HD";
        case ReplyKind::miss:
            return "EN";
        case ReplyKind::not_found:
            return "NF";
        case ReplyKind::not_stored:
            return "NS";
        case ReplyKind::exists:
            return "EX";
        case ReplyKind::noop:
            return "MN";
        case ReplyKind::debug:
            return "ME";
        case ReplyKind::error:
            return "ERROR";
        case ReplyKind::client_error:
            return "CLIENT_ERROR";
        case ReplyKind::server_error:
            return "SERVER_ERROR";
    }
    return "?";
}

// Every field of a reply, in one comparable line.
std::string describe(const Reply& r) {
    std::string s = kind_name(r.kind);
    s += " data=[" + std::string(r.data) + "]";
    if (!r.key.empty()) s += " key=" + std::string(r.key);
    if (r.key_base64) s += " b64";
    if (!r.opaque.empty()) s += " opaque=" + std::string(r.opaque);
    if (r.cas) s += " cas=" + std::to_string(*r.cas);
    if (r.client_flags) s += " flags=" + std::to_string(*r.client_flags);
    if (r.ttl) s += " ttl=" + std::to_string(*r.ttl);
    if (r.size) s += " size=" + std::to_string(*r.size);
    if (r.hit_before) s += std::string(" hit=") + (*r.hit_before ? "1" : "0");
    if (r.last_access) s += " la=" + std::to_string(*r.last_access);
    if (r.win) s += " W";
    if (r.stale) s += " X";
    if (r.win_sent) s += " Z";
    return s;
}

// A reply as its describe() line: what the feeder keeps of each reply, and compares.
struct Described {
    std::string text;
    explicit Described(const Reply& r) : text(describe(r)) {}
    bool operator==(const Described&) const = default;
    friend std::ostream& operator<<(std::ostream& os, const Described& d) { return os << d.text; }
};

struct Outcome {
    std::vector<std::string> replies;
    std::string error;         // reason, when the decoder failed
    std::size_t leftover = 0;  // unconsumed bytes at the end
};

// Whole, split at every boundary, and byte by byte must all agree (test::split_feed feeds the
// decoder as a connection does, every arrival at a fresh address).
Outcome decode_every_way(std::string_view stream, const Limits& limits = {}) {
    const auto got = test::expect_split_invariant<Decoder, Reply, Described>(limits, stream);
    EXPECT_EQ(got.contract_violations, 0u);
    Outcome o;
    for (const Described& r : got.replies)
        o.replies.push_back(r.text);
    if (got.failed) o.error = got.error_reason;
    o.leftover = got.leftover;
    return o;
}

std::vector<std::string> replies(std::string_view stream) {
    const Outcome o = decode_every_way(stream);
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.leftover, 0u);
    return o.replies;
}

using V = std::vector<std::string>;

// ---- each reply kind ------------------------------------------------------------------------

TEST(MetaDecoder, ValueWithoutFlags) {
    EXPECT_EQ(replies("VA 3\r\nbar\r\n"), V{"VA data=[bar]"});
    EXPECT_EQ(replies("VA 0\r\n\r\n"), V{"VA data=[]"});
}

TEST(MetaDecoder, ValueDataMayHoldCrlfAndLookLikeReplies) {
    EXPECT_EQ(replies("VA 8 c1\r\nEN\r\nMN\r\n\r\nMN\r\n"),
              V({"VA data=[EN\r\nMN\r\n] cas=1", "MN data=[]"}));
}

TEST(MetaDecoder, ValueWithEveryFlag) {
    EXPECT_EQ(replies("VA 3 kfoo b c18446744073709551615 f4294967295 t-1 s3 h1 l17 Oop W X Z\r\n"
                      "bar\r\n"),
              V{"VA data=[bar] key=foo b64 opaque=op cas=18446744073709551615 flags=4294967295 "
                "ttl=-1 size=3 hit=1 la=17 W X Z"});
}

TEST(MetaDecoder, HitWithFlagsAsMemcachedSendsThem) {
    EXPECT_EQ(replies("HD\r\n"), V{"HD data=[]"});
    EXPECT_EQ(replies("HD c15\r\n"), V{"HD data=[] cas=15"});
    EXPECT_EQ(replies("HD kazE= b O55 c16\r\n"), V{"HD data=[] key=azE= b64 opaque=55 cas=16"});
    EXPECT_EQ(replies("HD h0 l1 t-1\r\n"), V{"HD data=[] ttl=-1 hit=0 la=1"});
    EXPECT_EQ(replies("HD t30 f0\r\n"), V{"HD data=[] flags=0 ttl=30"});
}

TEST(MetaDecoder, StatusCodesWithAndWithoutFlags) {
    EXPECT_EQ(replies("EN\r\nNF\r\nNS\r\nEX\r\nMN\r\n"),
              V({"EN data=[]", "NF data=[]", "NS data=[]", "EX data=[]", "MN data=[]"}));
    // memcached echoes O and k on misses and failures.
    EXPECT_EQ(replies("EN O5 kmiss\r\nNF O6 kmiss\r\nNS O8 kxx c0\r\nEX O9\r\n"),
              V({"EN data=[] key=miss opaque=5", "NF data=[] key=miss opaque=6",
                 "NS data=[] key=xx opaque=8 cas=0", "EX data=[] opaque=9"}));
}

TEST(MetaDecoder, StaleWhileRevalidateMarkers) {
    EXPECT_EQ(replies("VA 3 c6 t30 X W\r\nabc\r\nVA 3 c6 t30 Z X\r\nabc\r\nVA 0 c3 t30 W\r\n\r\n"),
              V({"VA data=[abc] cas=6 ttl=30 W X", "VA data=[abc] cas=6 ttl=30 X Z",
                 "VA data=[] cas=3 ttl=30 W"}));
}

TEST(MetaDecoder, Debug) {
    EXPECT_EQ(replies("ME foo exp=-1 la=1 cas=1 fetch=yes cls=1 size=69\r\n"),
              V{"ME data=[exp=-1 la=1 cas=1 fetch=yes cls=1 size=69] key=foo"});
    EXPECT_EQ(replies("ME azE=\r\n"), V{"ME data=[] key=azE="});
}

TEST(MetaDecoder, ErrorReplies) {
    EXPECT_EQ(replies("ERROR\r\nCLIENT_ERROR bad command line format\r\n"
                      "SERVER_ERROR out of memory storing object\r\nCLIENT_ERROR\r\n"),
              V({"ERROR data=[]", "CLIENT_ERROR data=[bad command line format]",
                 "SERVER_ERROR data=[out of memory storing object]", "CLIENT_ERROR data=[]"}));
}

TEST(MetaDecoder, UnknownFlagsAreSkipped) {
    EXPECT_EQ(replies("HD Qfuture c2 Y\r\n"), V{"HD data=[] cas=2"});
}

TEST(MetaDecoder, OpaqueAsNumber) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("HD O12345\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.opaque_number(), 12345u);
    ASSERT_EQ(d.parse("HD Oabc\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.opaque, "abc");
    EXPECT_EQ(r.opaque_number(), std::nullopt);
    ASSERT_EQ(d.parse("HD\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.opaque_number(), std::nullopt);
}

TEST(MetaDecoder, MixedPipelineAllWays) {
    EXPECT_EQ(replies("HD\r\nVA 2 O1 kk1\r\nv1\r\nVA 2 O3 kk3\r\nv3\r\nMN\r\nME k exp=-1\r\n"
                      "VA 1\r\n7\r\nNF O7 kctr\r\nCLIENT_ERROR invalid flag\r\n"),
              V({"HD data=[]", "VA data=[v1] key=k1 opaque=1", "VA data=[v3] key=k3 opaque=3",
                 "MN data=[]", "ME data=[exp=-1] key=k", "VA data=[7]",
                 "NF data=[] key=ctr opaque=7", "CLIENT_ERROR data=[invalid flag]"}));
}

// ---- resumption -----------------------------------------------------------------------------

TEST(MetaDecoder, NeedMoreForAValueIsExactOnceTheHeaderIsSeen) {
    const std::string stream = "VA 10 O1\r\n0123456789\r\n";
    const std::size_t header = std::string("VA 10 O1\r\n").size();
    Decoder d;
    Reply r;
    for (std::size_t n = 0; n < stream.size(); ++n) {
        const ParseResult res = d.parse(std::string_view(stream).substr(0, n), r);
        ASSERT_EQ(res.state, ParseState::need_more) << n;
        EXPECT_EQ(res.consumed, 0u);
        if (n >= header)
            EXPECT_EQ(res.needed, stream.size() - n) << n;
        else
            EXPECT_GE(res.needed, 1u);
    }
    const std::string more = stream + "MN\r\n";  // r's views point into it
    const ParseResult res = d.parse(more, r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, stream.size());
    EXPECT_EQ(r.data, "0123456789");
    EXPECT_EQ(r.opaque, "1");
}

TEST(MetaDecoder, ViewsPointIntoTheInput) {
    const std::string in = "VA 3 kfoo O9\r\nbar\r\n";
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse(in, r).state, ParseState::complete);
    EXPECT_EQ(r.data.data(), in.data() + 14);
    EXPECT_EQ(r.key.data(), in.data() + 6);
    EXPECT_EQ(r.opaque.data(), in.data() + 11);
}

// ---- hostile input --------------------------------------------------------------------------

std::string failure(std::string_view stream, const Limits& limits = {}) {
    const Outcome o = decode_every_way(stream, limits);
    EXPECT_NE(o.error, "") << stream;
    return o.error;
}

TEST(MetaDecoder, HostileInputRejectedWithReason) {
    EXPECT_EQ(failure("XX\r\n"), "unknown reply code");
    EXPECT_EQ(failure("STORED\r\n"), "unknown reply code");
    EXPECT_EQ(failure("VALUE k 0 1\r\nx\r\nEND\r\n"), "unknown reply code");
    EXPECT_EQ(failure("hd\r\n"), "unknown reply code");
    EXPECT_EQ(failure("\r\n"), "unknown reply code");
    EXPECT_EQ(failure("HD\n"), "reply line not terminated by \\r\\n");
    EXPECT_EQ(failure("VA\r\n"), "bad value size");
    EXPECT_EQ(failure("VA x\r\n"), "bad value size");
    EXPECT_EQ(failure("VA -1\r\n"), "bad value size");
    EXPECT_EQ(failure("VA 18446744073709551616\r\n"), "bad value size");
    EXPECT_EQ(failure("VA 1048577\r\n"), "value size over limit");
    EXPECT_EQ(failure("VA 3\r\nbarXY"), "data block not terminated by \\r\\n");
    EXPECT_EQ(failure("VA 3\r\nbar\n\r"), "data block not terminated by \\r\\n");
    EXPECT_EQ(failure("HD c18446744073709551616\r\n"), "bad cas flag");
    EXPECT_EQ(failure("HD c\r\n"), "bad cas flag");
    EXPECT_EQ(failure("HD c-1\r\n"), "bad cas flag");
    EXPECT_EQ(failure("HD f4294967296\r\n"), "bad client flags");
    EXPECT_EQ(failure("HD t-\r\n"), "bad ttl flag");
    EXPECT_EQ(failure("HD t9223372036854775808\r\n"), "bad ttl flag");
    EXPECT_EQ(failure("HD s1x\r\n"), "bad size flag");
    EXPECT_EQ(failure("HD h2\r\n"), "bad hit-before flag");
    EXPECT_EQ(failure("HD l\r\n"), "bad last-access flag");
    EXPECT_EQ(failure("HD k\r\n"), "bad key flag");
    EXPECT_EQ(failure("HD k" + std::string(251, 'k') + "\r\n"), "bad key flag");
    EXPECT_EQ(failure("HD Wyes\r\n"), "unexpected token on W/X/Z flag");
    EXPECT_EQ(failure("HD b64\r\n"), "unexpected token on b flag");
    EXPECT_EQ(failure("HD c1\x01\r\n"), "control character in reply flags");
    EXPECT_EQ(failure("HD c1\r2\r\n"), "control character in reply flags");
    EXPECT_EQ(failure("ME\r\n"), "bad key in ME reply");
}

TEST(MetaDecoder, NumbersAtTheirLimitsAreAccepted) {
    EXPECT_EQ(replies("HD t9223372036854775807 f0 s18446744073709551615\r\n"),
              V{"HD data=[] flags=0 ttl=9223372036854775807 size=18446744073709551615"});
    Limits small;
    small.max_value_size = 4;
    EXPECT_EQ(decode_every_way("VA 4\r\nabcd\r\n", small).replies, V{"VA data=[abcd]"});
    EXPECT_EQ(failure("VA 5\r\nabcde\r\n", small), "value size over limit");
}

TEST(MetaDecoder, LineLengthLimit) {
    Limits limits;
    limits.max_line_length = 16;
    const std::string fits = "HD O" + std::string(10, 'o') + "\r\n";  // 16 bytes
    ASSERT_EQ(fits.size(), 16u);
    EXPECT_EQ(decode_every_way(fits, limits).replies.size(), 1u);
    EXPECT_EQ(failure("HD O" + std::string(11, 'o') + "\r\n", limits), "reply line too long");
    // Without a newline in sight the decoder gives up at the limit instead of buffering on.
    Decoder d(limits);
    Reply r;
    EXPECT_EQ(d.parse(std::string(15, 'H'), r).state, ParseState::need_more);
    EXPECT_EQ(d.parse(std::string(16, 'H'), r).state, ParseState::error);
    EXPECT_STREQ(d.error().reason, "reply line too long");
}

TEST(MetaDecoder, ErrorsAreStickyDescribedAndResettable) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("HD\r\nHD h7\r\n", r).state, ParseState::complete);
    const std::string bad = "HD c1 h7\r\n";
    ASSERT_EQ(d.parse(bad, r).state, ParseState::error);
    EXPECT_TRUE(d.failed());
    EXPECT_STREQ(d.error().reason, "bad hit-before flag");
    EXPECT_EQ(d.error().offset, 6u);
    EXPECT_EQ(std::string(d.error().context, d.error().context_size), "h7");
    EXPECT_EQ(d.error().message(), "bad hit-before flag at offset 6: \"h7\"");
    EXPECT_EQ(d.parse("HD\r\n", r).state, ParseState::error);
    d.reset();
    EXPECT_FALSE(d.failed());
    EXPECT_EQ(d.parse("HD\r\n", r).state, ParseState::complete);
}

TEST(MetaDecoder, ErrorContextIsEscapedAndTruncated) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("Z\x01\"\\" + std::string(100, 'z') + "\r\n", r).state, ParseState::error);
    const std::string ctx(d.error().context, d.error().context_size);
    // Escaped as the ascii decoder escapes (the two text decoders share it): a quote and a
    // backslash by a backslash, a control byte as \xNN, and "..." where the bytes are cut.
    EXPECT_EQ(ctx.substr(0, 9), "Z\\x01\\\"\\\\");
    EXPECT_LE(ctx.size(), sizeof d.error().context - 1);
    EXPECT_EQ(ctx.substr(ctx.size() - 3), "...");
    EXPECT_EQ(d.error().context[d.error().context_size], '\0');

    d.reset();
    ASSERT_EQ(d.parse("VA 2\r\nab\n\r", r).state, ParseState::error);
    EXPECT_EQ(d.error().offset, 8u);
    EXPECT_EQ(std::string(d.error().context, d.error().context_size), "\\n\\r");
}

TEST(MetaDecoder, ResetForgetsAPartialValue) {
    Decoder d;
    Reply r;
    EXPECT_EQ(d.parse("VA 5\r\nab", r).state, ParseState::need_more);
    d.reset();
    ASSERT_EQ(d.parse("HD\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.kind, ReplyKind::hit);
}

}  // namespace
}  // namespace folsom::protocol::meta
