#include "folsom/protocol/ascii_decoder.hpp"

#include "support/ascii_reply.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::protocol::Limits;
using folsom::protocol::ascii::Decoder;
using folsom::protocol::ascii::ParseResult;
using folsom::protocol::ascii::ParseState;
using folsom::protocol::ascii::Reply;
using folsom::protocol::ascii::ReplyKind;
using folsom::test::ascii_expect_split_invariant;
using folsom::test::AsciiOutcome;
using folsom::test::OwnedAsciiReply;
namespace reason = folsom::protocol::ascii::reason;

using namespace std::literals;

OwnedAsciiReply word(ReplyKind kind) {
    OwnedAsciiReply r;
    r.kind = kind;
    return r;
}

OwnedAsciiReply text(ReplyKind kind, std::string data) {
    OwnedAsciiReply r;
    r.kind = kind;
    r.data = std::move(data);
    return r;
}

OwnedAsciiReply value(std::string key, std::string data, std::uint32_t flags = 0) {
    OwnedAsciiReply r;
    r.kind = ReplyKind::value;
    r.key = std::move(key);
    r.data = std::move(data);
    r.flags = flags;
    return r;
}

OwnedAsciiReply value_cas(std::string key, std::string data, std::uint32_t flags,
                          std::uint64_t cas) {
    OwnedAsciiReply r = value(std::move(key), std::move(data), flags);
    r.cas = cas;
    r.has_cas = true;
    return r;
}

OwnedAsciiReply stat(std::string name, std::string val) {
    OwnedAsciiReply r;
    r.kind = ReplyKind::stat;
    r.key = std::move(name);
    r.data = std::move(val);
    return r;
}

OwnedAsciiReply number(std::uint64_t n) {
    OwnedAsciiReply r;
    r.kind = ReplyKind::number;
    r.number = n;
    return r;
}

// Decodes `bytes` whole, split at every byte and byte by byte (all must agree) and expects
// exactly `expected`, with nothing left over and no error.
void expect_replies(std::string_view bytes, const std::vector<OwnedAsciiReply>& expected,
                    const Limits& limits = {}) {
    SCOPED_TRACE(testing::PrintToString(std::string(bytes)));
    const AsciiOutcome got = ascii_expect_split_invariant(limits, bytes);
    EXPECT_FALSE(got.failed) << got.error_reason;
    EXPECT_EQ(got.leftover, 0u);
    EXPECT_EQ(got.replies, expected);
}

// Expects the decoder to refuse `bytes` with `why` at `offset`, however the bytes arrive, after
// first decoding `before` good replies.
void expect_rejected(std::string_view bytes, const char* why, std::size_t offset,
                     const Limits& limits = {}, std::size_t before = 0) {
    SCOPED_TRACE(testing::PrintToString(std::string(bytes)));
    const AsciiOutcome got = ascii_expect_split_invariant(limits, bytes);
    EXPECT_TRUE(got.failed);
    EXPECT_EQ(got.error_reason, why);
    EXPECT_EQ(got.error_offset, offset);
    EXPECT_EQ(got.replies.size(), before);
}

// ---- every reply kind ----------------------------------------------------------------------

TEST(AsciiDecoder, ScalarReplies) {
    expect_replies("END\r\n", {word(ReplyKind::end)});
    expect_replies("STORED\r\n", {word(ReplyKind::stored)});
    expect_replies("NOT_STORED\r\n", {word(ReplyKind::not_stored)});
    expect_replies("EXISTS\r\n", {word(ReplyKind::exists)});
    expect_replies("NOT_FOUND\r\n", {word(ReplyKind::not_found)});
    expect_replies("DELETED\r\n", {word(ReplyKind::deleted)});
    expect_replies("TOUCHED\r\n", {word(ReplyKind::touched)});
    expect_replies("OK\r\n", {word(ReplyKind::ok)});
    expect_replies("ERROR\r\n", {word(ReplyKind::error)});
}

TEST(AsciiDecoder, TextReplies) {
    expect_replies("VERSION 1.6.21\r\n", {text(ReplyKind::version, "1.6.21")});
    expect_replies("ERROR unknown command\r\n", {text(ReplyKind::error, "unknown command")});
    expect_replies("CLIENT_ERROR bad data chunk\r\n",
                   {text(ReplyKind::client_error, "bad data chunk")});
    expect_replies("SERVER_ERROR temporary failure\r\n",
                   {text(ReplyKind::server_error, "temporary failure")});
    expect_replies("SERVER_ERROR\r\n", {text(ReplyKind::server_error, "")});
    expect_replies("CLIENT_ERROR\r\n", {text(ReplyKind::client_error, "")});
}

TEST(AsciiDecoder, ServerErrorsFolsomMapsToStatuses) {
    expect_replies("SERVER_ERROR object too large for cache\r\n",
                   {text(ReplyKind::value_too_large, "object too large for cache")});
    expect_replies("SERVER_ERROR out of memory storing object\r\n",
                   {text(ReplyKind::out_of_memory, "out of memory storing object")});
    // Only the exact texts map; anything else stays a server error.
    expect_replies("SERVER_ERROR object too large for cache!\r\n",
                   {text(ReplyKind::server_error, "object too large for cache!")});
}

TEST(AsciiDecoder, NumberReplies) {
    expect_replies("0\r\n", {number(0)});
    expect_replies("42\r\n", {number(42)});
    expect_replies("18446744073709551615\r\n", {number(18446744073709551615ULL)});
    expect_replies("000123\r\n", {number(123)});
}

TEST(AsciiDecoder, ValueWithoutCas) {
    expect_replies("VALUE foo 0 3\r\nbar\r\nEND\r\n", {value("foo", "bar"), word(ReplyKind::end)});
}

TEST(AsciiDecoder, ValueWithCas) {
    expect_replies("VALUE foo 7 3 99\r\nbar\r\nEND\r\n",
                   {value_cas("foo", "bar", 7, 99), word(ReplyKind::end)});
    expect_replies("VALUE k 4294967295 1 18446744073709551615\r\nx\r\n",
                   {value_cas("k", "x", 4294967295U, 18446744073709551615ULL)});
}

TEST(AsciiDecoder, ValueDataIsFramedByLengthNotScanned) {
    // Binary data holding "\r\n", "END\r\n", NUL and a whole fake VALUE line.
    const std::string data = "a\r\nEND\r\n\0VALUE x 0 1\r\n"s;
    expect_replies("VALUE bin 1 " + std::to_string(data.size()) + "\r\n" + data + "\r\nEND\r\n",
                   {value("bin", data, 1), word(ReplyKind::end)});
}

TEST(AsciiDecoder, EmptyValue) {
    expect_replies("VALUE empty 0 0\r\n\r\nEND\r\n", {value("empty", ""), word(ReplyKind::end)});
}

// The fast path for a whole VALUE reply reads the key 8 bytes at a time (the first 16 at fixed
// offsets), a one-digit <flags> and a one- or two-digit <bytes> at fixed offsets, and hands
// anything else to the line path. Each shape at those edges decodes alike, whole, split at every
// byte and byte by byte (where only the line path sees whole lines).
TEST(AsciiDecoder, ValueHeadersAtTheEdgesOfTheFastPath) {
    const std::size_t key_sizes[] = {1, 2, 7, 8, 9, 10, 15, 16, 17, 23, 24, 25, 250};
    const std::pair<std::string, std::uint32_t> flag_texts[] = {
        {"0", 0},
        {"9", 9},
        {"10", 10},
        {"123", 123},
        {"4294967295", 4294967295U},
        {"0000000000042", 42}};  // 13 digits: leading zeros are still a number that fits
    const std::size_t data_sizes[] = {0, 1, 9, 10, 64, 99, 100, 101};
    for (const std::size_t ks : key_sizes)
        for (const auto& [ft, flags] : flag_texts)
            for (const std::size_t ds : data_sizes)
                for (const bool with_cas : {false, true}) {
                    const std::string key(ks, static_cast<char>('a' + ks % 26));
                    const std::string data(ds, '\n');  // line ends in the data: framed, not scanned
                    std::string bytes = "VALUE " + key + " " + ft + " " + std::to_string(ds);
                    if (with_cas) bytes += " 77";
                    bytes += "\r\n" + data + "\r\nEND\r\n";
                    expect_replies(bytes, {with_cas ? value_cas(key, data, flags, 77)
                                                    : value(key, data, flags),
                                           word(ReplyKind::end)});
                }
    // <bytes> of three digits and more, with leading zeros (19 digits: past the fast path's 18).
    expect_replies("VALUE k 0 1000\r\n" + std::string(1000, 'x') + "\r\n",
                   {value("k", std::string(1000, 'x'))});
    expect_replies("VALUE k 0 007\r\nabcdefg\r\n", {value("k", "abcdefg")});
    expect_replies("VALUE k 0 0000000000000000002\r\nab\r\n", {value("k", "ab")});
    // Bytes >= 0x80 are key bytes.
    expect_replies("VALUE \x80\xff\xc3\xa9t\xc3\xa9 3 1\r\nx\r\n",
                   {value("\x80\xff\xc3\xa9t\xc3\xa9", "x", 3)});
}

TEST(AsciiDecoder, FastPathKeepsTheLineLimit) {
    // A whole reply whose header is one byte over the limit is refused as the line path refuses
    // it; at the limit it is a value.
    Limits limits;
    limits.max_line_length = 24;
    const std::string data(64, 'v');
    const std::string at_limit = "VALUE key:0000000 0 64\r\n";
    const std::string over = "VALUE key:00000000 0 64\r\n";
    ASSERT_EQ(at_limit.size(), 24u);
    ASSERT_EQ(over.size(), 25u);
    expect_replies(at_limit + data + "\r\n", {value("key:0000000", data)}, limits);
    expect_rejected(over + data + "\r\n", reason::line_too_long, 0, limits);
    // And the value limit, on the header, before the data is here.
    limits.max_value_size = 63;
    expect_rejected(at_limit + data + "\r\n", reason::value_too_large, 0, limits);
}

TEST(AsciiDecoder, StatLines) {
    expect_replies("STAT pid 1234\r\nSTAT version 1.6.21\r\nSTAT libevent 2.1.12-stable\r\nEND\r\n",
                   {stat("pid", "1234"), stat("version", "1.6.21"),
                    stat("libevent", "2.1.12-stable"), word(ReplyKind::end)});
    // The value is the rest of the line after one space: spaces inside it are kept.
    expect_replies("STAT items:1:x a b  c\r\n", {stat("items:1:x", "a b  c")});
    // A bare name has an empty value.
    expect_replies("STAT name\r\nSTAT other \r\n", {stat("name", ""), stat("other", "")});
}

TEST(AsciiDecoder, CachedumpItemLines) {
    // "stats cachedump <slab> <n>" lists keys as ITEM lines: each a stat named by its key.
    expect_replies(
        "ITEM k1 [5 b; 0 s]\r\nITEM k:2 [12 b; 1796641229 s]\r\nEND\r\n",
        {stat("k1", "[5 b; 0 s]"), stat("k:2", "[12 b; 1796641229 s]"), word(ReplyKind::end)});
    expect_rejected("ITEM \r\n", reason::malformed_stat, 0);
}

// ---- the cases of Folsom PR #247's decoder tests -------------------------------------------

TEST(AsciiDecoder, FolsomMultiValueResponse) {
    expect_replies(
        "VALUE key1 0 6\r\nvalue1\r\nVALUE key2 123 6\r\nvalue2\r\nVALUE key3 0 0\r\n\r\nEND\r\n",
        {value("key1", "value1"), value("key2", "value2", 123), value("key3", ""),
         word(ReplyKind::end)});
}

TEST(AsciiDecoder, FolsomFragmentedResponse) {
    // The response arrives in the pieces a slow network hands over: mid-word, mid-number,
    // between "\r" and "\n", mid-data.
    const std::string bytes =
        "VALUE key1 0 10 55\r\n0123456789\r\nVALUE key2 0 5\r\nabcde\r\nEND\r\n";
    const std::vector<std::size_t> cuts = {3, 11, 15, 19, 20, 25, 31, 32, 40, 48, 60};
    const auto got =
        folsom::test::feed_cuts<Decoder, Reply, OwnedAsciiReply>(Limits{}, bytes, cuts);
    const std::vector<OwnedAsciiReply> expected = {value_cas("key1", "0123456789", 0, 55),
                                                   value("key2", "abcde"), word(ReplyKind::end)};
    EXPECT_FALSE(got.failed);
    EXPECT_EQ(got.contract_violations, 0u);
    EXPECT_EQ(got.replies, expected);
    expect_replies(bytes, expected);
}

TEST(AsciiDecoder, FolsomUtf8Stats) {
    // Names and values are bytes: UTF-8 passes through untouched, whatever the split point
    // (including inside a multi-byte character).
    expect_replies(
        "STAT n\xc3\xa4me v\xc3\xa4lue\r\nSTAT \xe5\x90\x8d\xe5\x89\x8d \xe5\x80\xa4 "
        "\xf0\x9f\x98\x80\r\nEND\r\n",
        {stat("n\xc3\xa4me", "v\xc3\xa4lue"),
         stat("\xe5\x90\x8d\xe5\x89\x8d", "\xe5\x80\xa4 \xf0\x9f\x98\x80"), word(ReplyKind::end)});
}

TEST(AsciiDecoder, FolsomScalarResponsesBackToBack) {
    // A pipelined connection reads many small replies in one buffer.
    expect_replies(
        "STORED\r\nNOT_STORED\r\nEXISTS\r\nNOT_FOUND\r\nDELETED\r\nTOUCHED\r\nOK\r\n5\r\n"
        "VERSION 1.6.21\r\nEND\r\n",
        {word(ReplyKind::stored), word(ReplyKind::not_stored), word(ReplyKind::exists),
         word(ReplyKind::not_found), word(ReplyKind::deleted), word(ReplyKind::touched),
         word(ReplyKind::ok), number(5), text(ReplyKind::version, "1.6.21"), word(ReplyKind::end)});
}

// ---- contract details ----------------------------------------------------------------------

TEST(AsciiDecoder, OneReplyPerCallAndExactConsumption) {
    const std::string_view in = "STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n";
    Decoder d;
    Reply r;
    ParseResult res = d.parse(in, r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, 8u);
    EXPECT_EQ(r.kind, ReplyKind::stored);
    res = d.parse(in.substr(8), r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, 16u);
    res = d.parse(in.substr(24), r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, 5u);
    res = d.parse(in.substr(29), r);
    EXPECT_EQ(res.state, ParseState::need_more);
    EXPECT_EQ(res.consumed, 0u);
    EXPECT_GE(res.needed, 1u);
}

TEST(AsciiDecoder, ViewsPointIntoTheInput) {
    const std::string in = "VALUE some-key 0 5 7\r\nhello\r\n";
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse(in, r).state, ParseState::complete);
    EXPECT_EQ(r.key.data(), in.data() + 6);
    EXPECT_EQ(r.data.data(), in.data() + 22);
    const std::string st = "STAT name value\r\n";
    ASSERT_EQ(d.parse(st, r).state, ParseState::complete);
    EXPECT_EQ(r.key.data(), st.data() + 5);
    EXPECT_EQ(r.data.data(), st.data() + 10);
}

TEST(AsciiDecoder, FieldsOfAnEarlierReplyDoNotLeak) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("VALUE k 3 1 9\r\nx\r\n", r).state, ParseState::complete);
    ASSERT_EQ(d.parse("STORED\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.kind, ReplyKind::stored);
    EXPECT_TRUE(r.key.empty());
    EXPECT_TRUE(r.data.empty());
    EXPECT_EQ(r.flags, 0u);
    EXPECT_FALSE(r.has_cas);
    ASSERT_EQ(d.parse("END\r\n", r).state, ParseState::complete);
    EXPECT_EQ(r.kind, ReplyKind::end);
}

TEST(AsciiDecoder, NeedMoreIsExactOnceAValueHeaderIsParsed) {
    const std::string header = "VALUE k 0 10\r\n";
    const std::string full = header + "0123456789\r\n";
    Decoder d;
    Reply r;
    for (std::size_t n = 0; n < full.size(); ++n) {
        const ParseResult res = d.parse(std::string_view(full).substr(0, n), r);
        ASSERT_EQ(res.state, ParseState::need_more) << n;
        EXPECT_EQ(res.consumed, 0u);
        if (n >= header.size())
            EXPECT_EQ(res.needed, full.size() - n) << n;
        else
            EXPECT_GE(res.needed, 1u) << n;
    }
    const ParseResult res = d.parse(full, r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, full.size());
    EXPECT_EQ(r.data, "0123456789");
}

TEST(AsciiDecoder, LargeValueIsReadStraightIntoPlace) {
    // A connection reads exactly `needed` bytes after the header: one more read completes it.
    Limits limits;
    const std::string data(limits.max_value_size, 'v');  // exactly at the limit: accepted
    const std::string full = "VALUE big 0 " + std::to_string(data.size()) + "\r\n" + data + "\r\n";
    const std::size_t header = full.size() - data.size() - 2;
    Decoder d(limits);
    Reply r;
    ParseResult res = d.parse(std::string_view(full).substr(0, header + 100), r);
    ASSERT_EQ(res.state, ParseState::need_more);
    EXPECT_EQ(res.needed, full.size() - header - 100);
    res = d.parse(full, r);
    ASSERT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(r.data.size(), data.size());
    EXPECT_EQ(folsom::test::ascii_feed_whole(limits, full).replies.size(), 1u);
    EXPECT_EQ((folsom::test::feed_chunked<Decoder, Reply, OwnedAsciiReply>(limits, full, 4096)
                   .replies.size()),
              1u);
}

TEST(AsciiDecoder, ResumptionSurvivesTheBufferMoving) {
    // The decoder keeps offsets, not pointers: the caller may move its bytes between calls.
    const std::string full = "VALUE key 0 4\r\nabcd\r\n";
    Decoder d;
    Reply r;
    std::string first = full.substr(0, 17);
    ASSERT_EQ(d.parse(first, r).state, ParseState::need_more);
    first.assign(64, 'z');  // the old bytes are gone
    const std::string second = full;
    ASSERT_EQ(d.parse(second, r).state, ParseState::complete);
    EXPECT_EQ(r.key, "key");
    EXPECT_EQ(r.key.data(), second.data() + 6);
    EXPECT_EQ(r.data, "abcd");
}

TEST(AsciiDecoder, LineExactlyAtTheLimitIsAccepted) {
    Limits limits;
    limits.max_line_length = 32;
    const std::string text_body(32 - std::string_view("SERVER_ERROR \r\n").size(), 'x');
    expect_replies("SERVER_ERROR " + text_body + "\r\n", {text(ReplyKind::server_error, text_body)},
                   limits);
    expect_rejected("SERVER_ERROR " + text_body + "y\r\n", reason::line_too_long, 0, limits);
}

TEST(AsciiDecoder, NeedMoreForEmptyAndPartialInput) {
    Decoder d;
    Reply r;
    for (std::string_view in : {""sv, "E"sv, "EN"sv, "END"sv, "END\r"sv, "STORED"sv, "VALUE k"sv}) {
        const ParseResult res = d.parse(in, r);
        EXPECT_EQ(res.state, ParseState::need_more) << in;
        EXPECT_EQ(res.consumed, 0u);
        EXPECT_GE(res.needed, 1u);
        d.reset();
    }
}

// ---- hostile servers -----------------------------------------------------------------------

TEST(AsciiDecoder, RejectsLinesLongerThanTheLimit) {
    Limits limits;
    limits.max_line_length = 64;
    // No line end at all: rejected once the limit is reached, without waiting for more.
    expect_rejected("SERVER_ERROR " + std::string(200, 'x'), reason::line_too_long, 0, limits);
    // A line end beyond the limit is no better.
    expect_rejected("STAT a " + std::string(100, 'b') + "\r\n", reason::line_too_long, 0, limits);
    // After good replies, the offset is relative to the reply being parsed.
    expect_rejected("END\r\nVERSION " + std::string(100, '1') + "\r\n", reason::line_too_long, 0,
                    limits, 1);
}

TEST(AsciiDecoder, RejectsValueSizeOverTheLimitOnItsHeader) {
    Limits limits;
    limits.max_value_size = 16;
    expect_replies("VALUE k 0 16\r\n0123456789abcdef\r\n", {value("k", "0123456789abcdef")},
                   limits);
    // Refused as soon as the header is complete, with no body sent at all.
    expect_rejected("VALUE k 0 17\r\n", reason::value_too_large, 0, limits);
    Decoder d(limits);
    Reply r;
    EXPECT_EQ(d.parse("VALUE k 0 1048576\r\n", r).state, ParseState::error);
    EXPECT_STREQ(d.error().reason, reason::value_too_large);
}

TEST(AsciiDecoder, RejectsDataBlockWithoutCrlf) {
    expect_rejected("VALUE k 0 3\r\nfooX\r\nEND\r\n", reason::bad_data_terminator, 16);
    expect_rejected("VALUE k 0 3\r\nfoo\rX\r\n", reason::bad_data_terminator, 16);
    expect_rejected("VALUE k 0 3\r\nfoo\n\r\n", reason::bad_data_terminator, 16);
    // A server that sent fewer bytes than announced shows up the same way.
    expect_rejected("VALUE k 0 5\r\nfoo\r\nEND\r\n", reason::bad_data_terminator, 18);
}

TEST(AsciiDecoder, RejectsBareNewline) {
    expect_rejected("END\n", reason::bare_newline, 3);
    expect_rejected("STORED\n", reason::bare_newline, 6);
    expect_rejected("VALUE k 0 1\nx\r\n", reason::bare_newline, 11);
    expect_rejected("STORED\r\nOK\n", reason::bare_newline, 2, {}, 1);
}

TEST(AsciiDecoder, RejectsUnknownReplies) {
    for (std::string_view in : {"FOO\r\n"sv,
                                "HTTP/1.1 400 Bad Request\r\n"sv,
                                "\r\n"sv,
                                " END\r\n"sv,
                                "ENDX\r\n"sv,
                                "END \r\n"sv,
                                "end\r\n"sv,
                                "STORED \r\n"sv,
                                "ERRORS\r\n"sv,
                                "OKAY\r\n"sv,
                                "EXISTSX\r\n"sv,
                                "NOT_FOUNDX\r\n"sv,
                                "DELETED!\r\n"sv,
                                "TOUCHE\r\n"sv,
                                "VERSIONX\r\n"sv,
                                "VALUE\r\n"sv,
                                "SERVER_ERRORX\r\n"sv,
                                "CLIENT_ERROR_\r\n"sv,
                                "12a\r\n"sv,
                                "12 \r\n"sv,
                                "\x00\r\n"sv.substr(0, 3),
                                "\x16\x03\x01"sv}) {
        expect_rejected(in, reason::unknown_reply, 0);
    }
}

TEST(AsciiDecoder, RejectsNumbersThatOverflow) {
    expect_rejected("18446744073709551616\r\n", reason::number_overflow, 0);
    expect_rejected("99999999999999999999999\r\n", reason::number_overflow, 0);
    expect_rejected("VALUE k 4294967296 1\r\nx\r\n", reason::number_overflow, 8);
    expect_rejected("VALUE k 0 18446744073709551616\r\n", reason::number_overflow, 10);
    expect_rejected("VALUE k 0 1 18446744073709551616\r\nx\r\n", reason::number_overflow, 12);
}

TEST(AsciiDecoder, RejectsMalformedValueHeaders) {
    struct Case {
        std::string in;
        std::size_t offset;
    };
    const std::vector<Case> cases = {
        {"VALUE k\r\n", 0},                                       // no flags, no size
        {"VALUE k 0\r\n", 8},                                     // no size
        {"VALUE k 0 \r\n", 10},                                   // empty size
        {"VALUE  0 1\r\n", 0},                                    // empty key
        {"VALUE k 0 1 2 3\r\nx\r\n", 12},                         // extra field
        {"VALUE k x 1\r\nx\r\n", 8},                              // non-digit flags
        {"VALUE k 0 1x\r\nx\r\n", 10},                            // non-digit size
        {"VALUE k 0 1 \r\nx\r\n", 12},                            // empty cas
        {"VALUE k 0 1 9z\r\nx\r\n", 12},                          // non-digit cas
        {"VALUE k -1 1\r\nx\r\n", 8},                             // negative flags
        {"VALUE k  0 1\r\nx\r\n", 8},                             // double space
        {"VALUE k 0 +1\r\nx\r\n", 10},                            // sign
        {"VALUE " + std::string(251, 'k') + " 0 1\r\nx\r\n", 0},  // key over 250 bytes
    };
    for (const auto& c : cases)
        expect_rejected(c.in, reason::malformed_value, c.offset);
    // 250 bytes is fine.
    const std::string key(250, 'k');
    expect_replies("VALUE " + key + " 0 1\r\nx\r\n", {value(key, "x")});
}

TEST(AsciiDecoder, RejectsStatWithoutName) {
    expect_rejected("STAT \r\n", reason::malformed_stat, 0);
    expect_rejected("STAT  x\r\n", reason::malformed_stat, 0);
}

TEST(AsciiDecoder, ErrorsAreStickyUntilReset) {
    Decoder d;
    Reply r;
    EXPECT_EQ(d.parse("BOGUS\r\n", r).state, ParseState::error);
    EXPECT_TRUE(d.failed());
    const ParseResult again = d.parse("END\r\n", r);
    EXPECT_EQ(again.state, ParseState::error);
    EXPECT_EQ(again.consumed, 0u);
    EXPECT_STREQ(d.error().reason, reason::unknown_reply);
    d.reset();
    EXPECT_FALSE(d.failed());
    EXPECT_EQ(d.parse("END\r\n", r).state, ParseState::complete);
}

TEST(AsciiDecoder, ResetForgetsAPartialValue) {
    Decoder d;
    Reply r;
    EXPECT_EQ(d.parse("VALUE k 0 100\r\nabc", r).state, ParseState::need_more);
    d.reset();
    const ParseResult res = d.parse("STORED\r\n", r);
    EXPECT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(r.kind, ReplyKind::stored);
}

TEST(AsciiDecoder, ErrorMessageEscapesTheOffendingBytes) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("Z\t\x01\xff\\\"\r\n", r).state, ParseState::error);
    EXPECT_EQ(std::string_view(d.error().context, d.error().context_size),
              R"(Z\t\x01\xff\\\"\r\n)");
    EXPECT_EQ(d.error().context[d.error().context_size], '\0');
    EXPECT_EQ(d.error().message(), R"(unknown reply at offset 0: "Z\t\x01\xff\\\"\r\n")");
}

TEST(AsciiDecoder, ErrorContextIsTruncatedNeverSplittingAnEscape) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("ERRORX" + std::string(100, '\x01') + "\r\n", r).state, ParseState::error);
    const std::string_view ctx(d.error().context, d.error().context_size);
    EXPECT_LT(ctx.size(), sizeof(d.error().context));
    EXPECT_TRUE(ctx.starts_with("ERRORX\\x01"));
    EXPECT_TRUE(ctx.ends_with("\\x01...")) << ctx;
    EXPECT_EQ(d.error().context[ctx.size()], '\0');
}

TEST(AsciiDecoder, ValueErrorReportsTheOffendingToken) {
    Decoder d;
    Reply r;
    ASSERT_EQ(d.parse("VALUE k 4294967296 1\r\nx\r\n", r).state, ParseState::error);
    EXPECT_EQ(d.error().offset, 8u);
    EXPECT_EQ(std::string_view(d.error().context, d.error().context_size), "4294967296 1");
}

}  // namespace
