#include "folsom/protocol/binary_decoder.hpp"

#include "support/counting_operator_new.hpp"
#include "support/split_feed.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

// Packets below are written with designated initializers that name only the fields that
// matter; the rest keep their defaults on purpose, which GCC would otherwise warn about.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

using namespace folsom::protocol;
using namespace folsom::protocol::binary;
using namespace std::string_view_literals;
using namespace std::string_literals;

// ---- building response packets (independently of the encoder under test elsewhere) ---------

struct Packet {
    Opcode opcode = Opcode::get;
    ResponseStatus status = ResponseStatus::no_error;
    std::string extras;
    std::string key;
    std::string value;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    // Hostile packets override the header fields the body would otherwise imply.
    std::uint8_t magic = response_magic;
    std::uint8_t data_type = 0;
    std::optional<std::uint16_t> key_length;
    std::optional<std::uint8_t> extras_length;
    std::optional<std::uint32_t> body_length;
};

void put_be(std::string& s, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i)
        s += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string be32(std::uint32_t v) {
    std::string s;
    put_be(s, v, 4);
    return s;
}

std::string be64(std::uint64_t v) {
    std::string s;
    put_be(s, v, 8);
    return s;
}

std::string bytes(const Packet& p) {
    std::string s;
    s += static_cast<char>(p.magic);
    s += static_cast<char>(p.opcode);
    put_be(s, p.key_length.value_or(static_cast<std::uint16_t>(p.key.size())), 2);
    put_be(s, p.extras_length.value_or(static_cast<std::uint8_t>(p.extras.size())), 1);
    s += static_cast<char>(p.data_type);
    put_be(s, static_cast<std::uint16_t>(p.status), 2);
    put_be(s,
           p.body_length.value_or(
               static_cast<std::uint32_t>(p.extras.size() + p.key.size() + p.value.size())),
           4);
    put_be(s, p.opaque, 4);
    put_be(s, p.cas, 8);
    return s + p.extras + p.key + p.value;
}

// Hex figure ("81 00 00 05 ...", whitespace ignored) to bytes: the spec's example packets.
std::string unhex(std::string_view figure) {
    std::string out;
    std::string digits;
    for (char c : figure) {
        if (c == ' ' || c == '\n') continue;
        digits += c;
        if (digits.size() == 2) {
            out += static_cast<char>(std::stoi(digits, nullptr, 16));
            digits.clear();
        }
    }
    return out;
}

// ---- an owning copy of a Response, comparable and printable --------------------------------

struct Decoded {
    Opcode opcode;
    ResponseStatus status;
    std::uint32_t opaque;
    std::uint64_t cas;
    std::string extras, key, value;
    std::uint32_t flags;
    bool has_flags;
    std::uint64_t number;
    std::size_t consumed;
    bool operator==(const Decoded&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Decoded& d) {
    return os << "{op=" << int(d.opcode) << " status=" << to_string(d.status)
              << " opaque=" << d.opaque << " cas=" << d.cas << " extras=" << d.extras.size()
              << "B key=\"" << d.key << "\" value=\"" << d.value << "\" flags=" << d.flags
              << (d.has_flags ? "" : "(none)") << " number=" << d.number
              << " consumed=" << d.consumed << "}";
}

Decoded own(const Response& r, std::size_t consumed) {
    return {r.opcode,
            r.status,
            r.opaque,
            r.cas,
            std::string(r.extras),
            std::string(r.key),
            std::string(r.value),
            r.flags,
            r.has_flags,
            r.number,
            consumed};
}

Decoded own_without_size(Decoded d) {
    d.consumed = 0;
    return d;
}

/// Decodes everything in `stream` in one go; expects it to end on a packet boundary.
std::vector<Decoded> decode_all(std::string_view stream) {
    Decoder d;
    Response r;
    std::vector<Decoded> out;
    for (;;) {
        const ParseResult res = d.parse(stream, r);
        if (res.state != ParseState::complete) {
            EXPECT_EQ(res.state, ParseState::need_more) << d.error().message();
            EXPECT_TRUE(stream.empty()) << stream.size() << " bytes left undecoded";
            EXPECT_EQ(res.needed, header_size - stream.size());
            return out;
        }
        out.push_back(own(r, res.consumed));
        stream.remove_prefix(res.consumed);
    }
}

/// As a connection would: bytes arrive in chunks ending at the given offsets, are appended to
/// a buffer, and everything decodable is decoded after each arrival. Each parse() sees an
/// exact-size heap copy of the unconsumed bytes, so a read past the input trips ASan.
/// Checks every need_more's `needed` against the packet sizes `expected` says there are.
std::vector<Decoded> decode_in_chunks(std::string_view stream, std::vector<std::size_t> ends,
                                      const std::vector<Decoded>& expected) {
    Decoder d;
    Response r;
    std::vector<Decoded> out;
    std::size_t start = 0;     // stream offset of the first unconsumed byte
    std::size_t received = 0;  // stream bytes delivered so far
    ends.push_back(stream.size());
    for (std::size_t end : ends) {
        received = std::max(received, end);
        for (;;) {
            const std::size_t n = received - start;
            std::unique_ptr<char[]> copy(new char[n == 0 ? 1 : n]);
            std::copy(stream.begin() + start, stream.begin() + received, copy.get());
            const ParseResult res = d.parse(std::string_view(copy.get(), n), r);
            if (res.state == ParseState::error) {
                ADD_FAILURE() << d.error().message();
                return out;
            }
            if (res.state == ParseState::need_more) {
                EXPECT_EQ(res.consumed, 0u);
                // Exactly the rest of the header, or of the whole packet once the header is in.
                std::size_t want = header_size;
                if (n >= header_size && out.size() < expected.size())
                    want = expected[out.size()].consumed;
                EXPECT_EQ(res.needed, want - n) << "at stream offset " << received;
                break;
            }
            out.push_back(own(r, res.consumed));
            start += res.consumed;
        }
    }
    return out;
}

// A Response as the split feeder keeps it (without `consumed`, which the feeder does not pass).
struct Owned {
    Decoded d;
    explicit Owned(const Response& r) : d(own(r, 0)) {}
    bool operator==(const Owned&) const = default;
    friend std::ostream& operator<<(std::ostream& os, const Owned& o) { return os << o.d; }
};

void expect_same_at_every_split(std::string_view stream) {
    const std::vector<Decoded> whole = decode_all(stream);
    // Whole, split at every byte and byte by byte decode the same packets (split_feed.hpp).
    const auto fed =
        folsom::test::expect_split_invariant<Decoder, Response, Owned>(Limits{}, stream);
    EXPECT_FALSE(fed.failed) << fed.error_reason;
    EXPECT_EQ(fed.leftover, 0u);
    EXPECT_EQ(fed.contract_violations, 0u);
    ASSERT_EQ(fed.replies.size(), whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i)
        EXPECT_EQ(fed.replies[i].d, own_without_size(whole[i])) << "packet " << i;
    // Byte by byte, every need_more names exactly what its header or packet still lacks.
    std::vector<std::size_t> every_byte;
    for (std::size_t i = 1; i < stream.size(); ++i)
        every_byte.push_back(i);
    ASSERT_EQ(decode_in_chunks(stream, every_byte, whole), whole) << "byte by byte";
}

// ---- the example packets of memcached's doc/protocol-binary.xml ---------------------------

TEST(BinaryDecoder, SpecExampleGetHit) {
    const auto packet = unhex(
        "81 00 00 00 04 00 00 00 00 00 00 09 00 00 00 00 00 00 00 00 00 00 00 01"
        "de ad be ef 57 6f 72 6c 64");
    const auto got = decode_all(packet);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode, Opcode::get);
    EXPECT_EQ(got[0].status, ResponseStatus::no_error);
    EXPECT_EQ(got[0].cas, 1u);
    EXPECT_TRUE(got[0].has_flags);
    EXPECT_EQ(got[0].flags, 0xdeadbeef);
    EXPECT_EQ(got[0].extras, "\xde\xad\xbe\xef");
    EXPECT_EQ(got[0].key, "");
    EXPECT_EQ(got[0].value, "World");
    EXPECT_EQ(got[0].consumed, 33u);
}

// The spec's getk figure says total body 0x09, which contradicts its own field list (4-byte
// extras + 5-byte key + 5-byte value = 14) and what memcached sends; 0x0e is used here.
TEST(BinaryDecoder, SpecExampleGetkHit) {
    const auto packet = unhex(
        "81 00 00 05 04 00 00 00 00 00 00 0e 00 00 00 00 00 00 00 00 00 00 00 01"
        "de ad be ef 48 65 6c 6c 6f 57 6f 72 6c 64");
    const auto got = decode_all(packet);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].key, "Hello");
    EXPECT_EQ(got[0].value, "World");
    EXPECT_EQ(got[0].flags, 0xdeadbeef);
    EXPECT_EQ(got[0].consumed, 38u);
}

TEST(BinaryDecoder, SpecExampleNotFound) {
    const auto got =
        decode_all(unhex("81 00 00 00 00 00 00 01 00 00 00 09 00 00 00 00 00 00 00 00 00 00 00 00"
                         "4e 6f 74 20 66 6f 75 6e 64"));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, ResponseStatus::key_not_found);
    EXPECT_EQ(got[0].value, "Not found");
    EXPECT_FALSE(got[0].has_flags);
}

TEST(BinaryDecoder, SpecExampleAddResponse) {
    const auto got = decode_all(
        unhex("81 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01"));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode, Opcode::add);
    EXPECT_EQ(got[0].cas, 1u);
    EXPECT_EQ(got[0].consumed, 24u);
}

TEST(BinaryDecoder, SpecExampleIncrementResponse) {
    const auto got =
        decode_all(unhex("81 05 00 00 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00 00 00 00 00 05"
                         "00 00 00 00 00 00 00 00"));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode, Opcode::increment);
    EXPECT_EQ(got[0].number, 0u);
    EXPECT_EQ(got[0].cas, 5u);
}

TEST(BinaryDecoder, SpecExampleVersionResponse) {
    const auto got =
        decode_all(unhex("81 0b 00 00 00 00 00 00 00 00 00 05 00 00 00 00 00 00 00 00 00 00 00 00"
                         "31 2e 33 2e 31"));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode, Opcode::version);
    EXPECT_EQ(got[0].value, "1.3.1");
}

TEST(BinaryDecoder, SpecExampleStatResponse) {
    const auto got =
        decode_all(unhex("81 10 00 03 00 00 00 00 00 00 00 07 00 00 00 00 00 00 00 00 00 00 00 00"
                         "70 69 64 33 30 37 38"));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode, Opcode::stat);
    EXPECT_EQ(got[0].key, "pid");
    EXPECT_EQ(got[0].value, "3078");
}

// ---- every response kind, as one pipelined stream --------------------------------------------

std::vector<Packet> every_kind() {
    const std::string flags = be32(0x01020304);
    return {
        {.opcode = Opcode::get, .extras = flags, .value = "hit", .opaque = 1, .cas = 77},
        {.opcode = Opcode::get, .status = ResponseStatus::key_not_found, .value = "Not found"},
        {.opcode = Opcode::getq, .extras = be32(0), .value = "", .opaque = 3, .cas = 2},
        {.opcode = Opcode::getk, .extras = flags, .key = "k", .value = "v", .opaque = 4},
        {.opcode = Opcode::getkq, .extras = flags, .key = "kq", .value = "vq", .opaque = 5},
        {.opcode = Opcode::gat, .extras = flags, .value = "g"},
        {.opcode = Opcode::gatq, .extras = flags, .value = "gq"},
        {.opcode = Opcode::gatk, .extras = flags, .key = "gk", .value = "v"},
        {.opcode = Opcode::gatkq, .extras = flags, .key = "gkq", .value = "v"},
        {.opcode = Opcode::set, .cas = 0x1122334455667788},
        {.opcode = Opcode::add, .status = ResponseStatus::key_exists, .value = "Data exists"},
        {.opcode = Opcode::replace,
         .status = ResponseStatus::item_not_stored,
         .value = "Not stored"},
        {.opcode = Opcode::setq, .status = ResponseStatus::value_too_large, .value = "Too large"},
        {.opcode = Opcode::append, .cas = 9},
        {.opcode = Opcode::prepend, .cas = 10},
        {.opcode = Opcode::delete_},
        {.opcode = Opcode::deleteq, .status = ResponseStatus::key_not_found, .value = "Not found"},
        {.opcode = Opcode::increment, .value = be64(0xfffffffffffffffe), .cas = 3},
        {.opcode = Opcode::decrement, .value = be64(0)},
        {.opcode = Opcode::incrementq,
         .status = ResponseStatus::non_numeric,
         .value = "Non-numeric server-side value for incr or decr"},
        {.opcode = Opcode::touch},
        {.opcode = Opcode::flush},
        {.opcode = Opcode::verbosity},
        {.opcode = Opcode::version, .value = "1.6.18"},
        {.opcode = Opcode::stat, .key = "pid", .value = "1234"},
        {.opcode = Opcode::stat, .key = "uptime", .value = "5"},
        {.opcode = Opcode::stat},  // the end of a stat listing: no key, no value
        {.opcode = Opcode::sasl_list_mechs, .value = "PLAIN CRAM-MD5"},
        {.opcode = Opcode::sasl_auth, .status = ResponseStatus::auth_continue, .value = "nonce"},
        {.opcode = Opcode::sasl_step,
         .status = ResponseStatus::auth_error,
         .value = "Auth failure"},
        {.opcode = static_cast<Opcode>(0x42),
         .status = ResponseStatus::unknown_command,
         .value = "Unknown command"},
        {.opcode = Opcode::quit},
        {.opcode = Opcode::noop, .opaque = 0xfedcba98},
    };
}

std::string stream_of(const std::vector<Packet>& packets) {
    std::string s;
    for (const auto& p : packets)
        s += bytes(p);
    return s;
}

TEST(BinaryDecoder, EveryResponseKindDecodesToItsFields) {
    const auto packets = every_kind();
    const auto got = decode_all(stream_of(packets));
    ASSERT_EQ(got.size(), packets.size());
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const Packet& p = packets[i];
        const Decoded& g = got[i];
        SCOPED_TRACE(::testing::Message() << "packet " << i << ": " << g);
        EXPECT_EQ(g.opcode, p.opcode);
        EXPECT_EQ(g.status, p.status);
        EXPECT_EQ(g.opaque, p.opaque);
        EXPECT_EQ(g.cas, p.cas);
        EXPECT_EQ(g.extras, p.extras);
        EXPECT_EQ(g.key, p.key);
        EXPECT_EQ(g.value, p.value);
        EXPECT_EQ(g.consumed, bytes(p).size());
        const bool hit_with_flags = is_retrieval(p.opcode) && p.extras.size() == 4;
        EXPECT_EQ(g.has_flags, hit_with_flags);
        const std::uint32_t flags =
            hit_with_flags ? (p.extras == "\x01\x02\x03\x04" ? 0x01020304u : 0u) : 0u;
        EXPECT_EQ(g.flags, flags) << "flags must not leak over";
    }
    EXPECT_EQ(got[2].flags, 0u);  // getq hit with flags 0
    EXPECT_TRUE(got[2].has_flags);
    EXPECT_EQ(got[17].number, 0xfffffffffffffffe);
    EXPECT_EQ(got[18].number, 0u);
    EXPECT_EQ(got[19].number, 0u);  // a failed incr carries text, not a number
    EXPECT_EQ(got[20].number, 0u);  // and numbers do not leak into the next response
}

TEST(BinaryDecoder, EveryStatusIsReported) {
    const ResponseStatus all[] = {
        ResponseStatus::no_error,
        ResponseStatus::key_not_found,
        ResponseStatus::key_exists,
        ResponseStatus::value_too_large,
        ResponseStatus::invalid_arguments,
        ResponseStatus::item_not_stored,
        ResponseStatus::non_numeric,
        ResponseStatus::vbucket,
        ResponseStatus::auth_error,
        ResponseStatus::auth_continue,
        ResponseStatus::unknown_command,
        ResponseStatus::out_of_memory,
        ResponseStatus::not_supported,
        ResponseStatus::internal_error,
        ResponseStatus::busy,
        ResponseStatus::temporary_failure,
    };
    const std::uint16_t wire[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                  0x20, 0x21, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86};
    for (std::size_t i = 0; i < std::size(all); ++i) {
        EXPECT_EQ(static_cast<std::uint16_t>(all[i]), wire[i]);
        EXPECT_TRUE(is_known(all[i]));
        EXPECT_NE(to_string(all[i]), "UNKNOWN_STATUS");
        std::vector<Packet> ps;
        ps.push_back(Packet{.opcode = Opcode::set, .status = all[i], .value = "text"});
        const auto got = decode_all(stream_of(ps));
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].status, all[i]);
        EXPECT_EQ(got[0].value, "text");
    }
}

TEST(BinaryDecoder, UnknownStatusIsPassedThrough) {
    const auto got = decode_all(bytes(
        {.opcode = Opcode::increment, .status = static_cast<ResponseStatus>(0x22), .value = "x"}));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(static_cast<std::uint16_t>(got[0].status), 0x22);
    EXPECT_FALSE(is_known(got[0].status));
    EXPECT_EQ(to_string(got[0].status), "UNKNOWN_STATUS");
}

TEST(BinaryDecoder, LargeValueAndLongestKey) {
    std::vector<Packet> ps;
    ps.push_back({.opcode = Opcode::getk,
                  .extras = be32(5),
                  .key = std::string(250, 'k'),
                  .value = std::string(Limits{}.max_value_size, 'v')});
    const auto got = decode_all(stream_of(ps));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].key.size(), 250u);
    EXPECT_EQ(got[0].value.size(), Limits{}.max_value_size);
}

// ---- resumption --------------------------------------------------------------------------

TEST(BinaryDecoder, SameResultsAtEverySplitAndByteByByte) {
    expect_same_at_every_split(stream_of(every_kind()));
}

TEST(BinaryDecoder, NeededIsExact) {
    const std::string p = bytes({.opcode = Opcode::get, .extras = be32(1), .value = "World"});
    ASSERT_EQ(p.size(), 33u);
    Decoder d;
    Response r;
    auto res = d.parse({}, r);
    EXPECT_EQ(res.state, ParseState::need_more);
    EXPECT_EQ(res.needed, 24u);
    res = d.parse(std::string_view(p).substr(0, 10), r);
    EXPECT_EQ(res.state, ParseState::need_more);
    EXPECT_EQ(res.needed, 14u);
    res = d.parse(std::string_view(p).substr(0, 24), r);
    EXPECT_EQ(res.state, ParseState::need_more);
    EXPECT_EQ(res.needed, 9u);  // the whole body, known as soon as the header is in
    res = d.parse(std::string_view(p).substr(0, 30), r);
    EXPECT_EQ(res.needed, 3u);
    EXPECT_EQ(res.consumed, 0u);
    const std::string more = p + "\x81\x00"s;  // the next packet's first bytes: not consumed
    res = d.parse(more, r);
    EXPECT_EQ(res.state, ParseState::complete);
    EXPECT_EQ(res.consumed, 33u);
    EXPECT_EQ(r.value, "World");
}

TEST(BinaryDecoder, ViewsPointIntoTheInput) {
    const std::string p =
        bytes({.opcode = Opcode::getk, .extras = be32(1), .key = "key", .value = "value"});
    Decoder d;
    Response r;
    ASSERT_EQ(d.parse(p, r).state, ParseState::complete);
    EXPECT_EQ(r.extras.data(), p.data() + 24);
    EXPECT_EQ(r.key.data(), p.data() + 28);
    EXPECT_EQ(r.value.data(), p.data() + 31);
}

TEST(BinaryDecoder, DecodingAllocatesNothing) {
    const std::string stream = stream_of(every_kind());
    Decoder d;
    Response r;
    std::string_view rest = stream;
    std::size_t n = 0;
    const std::size_t before = folsom::test::heap_allocations();
    for (;;) {
        const auto res = d.parse(rest, r);
        if (res.state != ParseState::complete) break;
        rest.remove_prefix(res.consumed);
        ++n;
    }
    const std::size_t after = folsom::test::heap_allocations();
    EXPECT_EQ(after, before);
    EXPECT_EQ(n, every_kind().size());
    EXPECT_TRUE(rest.empty());
}

// ---- hostile input --------------------------------------------------------------------------

struct Hostile {
    const char* name;
    std::string input;
    const char* reason;
    std::size_t offset;
};

std::vector<Hostile> hostile_inputs() {
    return {
        {"request magic", bytes({.magic = request_magic}), "bad magic byte", 0},
        {"zero magic", bytes({.magic = 0}), "bad magic byte", 0},
        {"text protocol reply", std::string("VALUE k 0 1\r\nx\r\nEND\r\n"), "bad magic byte", 0},
        {"data type 1", bytes({.opcode = Opcode::noop, .data_type = 1}), "unknown data type", 5},
        {"key longer than body", bytes({.opcode = Opcode::getk, .key = "abc", .body_length = 2}),
         "key and extras longer than the body", 2},
        {"extras longer than body",
         bytes({.opcode = Opcode::get, .extras = be32(0), .body_length = 3}),
         "key and extras longer than the body", 2},
        {"key and extras together longer than body",
         bytes({.opcode = Opcode::getk, .extras = be32(0), .key = "ab", .body_length = 5}),
         "key and extras longer than the body", 2},
        {"key over 250 bytes",
         bytes({.opcode = Opcode::getk, .extras = be32(0), .key = std::string(251, 'k')}),
         "key length over limit", 2},
        {"body length 4 GiB",
         bytes({.opcode = Opcode::get, .extras = be32(0), .body_length = 0xffffffff}),
         "value size over limit", 8},
        {"value one byte over the limit",
         bytes({.opcode = Opcode::get,
                .extras = be32(0),
                .body_length = static_cast<std::uint32_t>(4 + Limits{}.max_value_size + 1)}),
         "value size over limit", 8},
        {"get with 8 bytes of extras", bytes({.opcode = Opcode::get, .extras = be64(0)}),
         "retrieval reply extras are not 0 or 4 bytes", 4},
        {"gatkq with 1 byte of extras", bytes({.opcode = Opcode::gatkq, .extras = "x"}),
         "retrieval reply extras are not 0 or 4 bytes", 4},
        {"incr success with a 4-byte value", bytes({.opcode = Opcode::increment, .value = "1234"}),
         "arithmetic reply is not an 8-byte number", 2},
        {"decr success with no value", bytes({.opcode = Opcode::decrement}),
         "arithmetic reply is not an 8-byte number", 2},
        {"incrq success with extras",
         bytes({.opcode = Opcode::incrementq, .extras = be64(1), .value = be64(1)}),
         "arithmetic reply is not an 8-byte number", 2},
        {"decrq success with a key",
         bytes({.opcode = Opcode::decrementq, .key = "k", .value = be64(1)}),
         "arithmetic reply is not an 8-byte number", 2},
    };
}

TEST(BinaryDecoder, HostileHeadersAreRejectedWithTheirReason) {
    for (const auto& h : hostile_inputs()) {
        SCOPED_TRACE(h.name);
        // Refused as soon as the header is in: the body (possibly huge) is never waited for.
        Decoder d;
        Response r;
        const auto res = d.parse(std::string_view(h.input).substr(0, header_size), r);
        EXPECT_EQ(res.state, ParseState::error);
        EXPECT_EQ(res.consumed, 0u);
        EXPECT_TRUE(d.failed());
        EXPECT_STREQ(d.error().reason, h.reason);
        EXPECT_EQ(d.error().offset, h.offset);
        EXPECT_GT(d.error().context_size, 0u);
        // And the same with the whole input.
        Decoder whole;
        EXPECT_EQ(whole.parse(h.input, r).state, ParseState::error);
        EXPECT_STREQ(whole.error().reason, h.reason);
    }
}

TEST(BinaryDecoder, TextProtocolReplyFailsOnItsFirstByte) {
    for (std::string_view text : {"ERROR\r\n"sv, "E"sv, "END\r\n"sv}) {
        Decoder d;
        Response r;
        EXPECT_EQ(d.parse(text, r).state, ParseState::error) << text;
        EXPECT_STREQ(d.error().reason, "bad magic byte");
        EXPECT_EQ(d.error().message(), R"(bad magic byte at offset 0: "\x45")");
    }
}

TEST(BinaryDecoder, HostileHeaderAfterValidPacketsFailsThere) {
    const std::string good = bytes({.opcode = Opcode::noop});
    const std::string stream = good + good + bytes({.magic = 0x80});
    Decoder d;
    Response r;
    std::string_view rest = stream;
    EXPECT_EQ(d.parse(rest, r).state, ParseState::complete);
    rest.remove_prefix(24);
    EXPECT_EQ(d.parse(rest, r).state, ParseState::complete);
    rest.remove_prefix(24);
    EXPECT_EQ(d.parse(rest, r).state, ParseState::error);
    EXPECT_STREQ(d.error().reason, "bad magic byte");
}

TEST(BinaryDecoder, ValueLimitComesFromLimits) {
    Limits small;
    small.max_value_size = 100;
    const std::string at_limit = bytes(
        {.opcode = Opcode::getk, .extras = be32(0), .key = "k", .value = std::string(100, 'v')});
    const std::string over = bytes(
        {.opcode = Opcode::getk, .extras = be32(0), .key = "k", .value = std::string(101, 'v')});
    Response r;
    Decoder ok(small);
    EXPECT_EQ(ok.parse(at_limit, r).state, ParseState::complete);
    Decoder bad(small);
    EXPECT_EQ(bad.parse(over, r).state, ParseState::error);
    EXPECT_STREQ(bad.error().reason, "value size over limit");
    EXPECT_EQ(bad.limits().max_value_size, 100u);
}

TEST(BinaryDecoder, ErrorsAreStickyUntilReset) {
    Decoder d;
    Response r;
    ASSERT_EQ(d.parse(bytes({.magic = 0x00}), r).state, ParseState::error);
    const std::string good = bytes({.opcode = Opcode::noop});
    EXPECT_EQ(d.parse(good, r).state, ParseState::error);
    EXPECT_EQ(d.parse({}, r).state, ParseState::error);
    EXPECT_TRUE(d.failed());
    d.reset();
    EXPECT_FALSE(d.failed());
    EXPECT_STREQ(d.error().reason, "");
    EXPECT_EQ(d.parse(good, r).state, ParseState::complete);
}

TEST(BinaryDecoder, ErrorMessageNamesReasonOffsetAndBytes) {
    Decoder d;
    Response r;
    ASSERT_EQ(
        d.parse(bytes({.opcode = Opcode::get, .extras = be32(0), .body_length = 0x7fffffff}), r)
            .state,
        ParseState::error);
    EXPECT_EQ(d.error().message(), R"(value size over limit at offset 8: "\x7f\xff\xff\xff")");
    Decoder m;
    ASSERT_EQ(m.parse(bytes({.magic = 'V'}), r).state, ParseState::error);
    EXPECT_EQ(m.error().message(), R"(bad magic byte at offset 0: "\x56")");
}

TEST(BinaryDecoder, ErrorContextIsTruncatedToWholeEscapes) {
    Decoder d;
    Response r;
    ASSERT_EQ(d.parse(bytes({.opcode = Opcode::getk, .key = "abc", .body_length = 1}), r).state,
              ParseState::error);
    // 10 bytes of header (key length .. body length) as \xNN: 40 characters, fits in 64.
    EXPECT_EQ(d.error().context_size, 40u);
    EXPECT_EQ(d.error().context_size % 4, 0u);
}

}  // namespace
