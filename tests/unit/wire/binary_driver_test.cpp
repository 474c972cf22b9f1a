// BinaryDriver against scripted reply bytes: what every OpCode puts on the wire, how every
// reply status maps to an outcome, multi-get positions from opaques, out-of-step replies, and
// replies split at every byte boundary.
#include "wire/binary_driver.hpp"

#include "folsom/error.hpp"

#include "support/recording_operation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;
using detail::Request;
using protocol::binary::Opcode;
using protocol::binary::ResponseStatus;
using test::done_event;
using test::error_event;
using test::Event;
using test::stat_event;
using test::value_event;

// ---- wire helpers (written from the protocol spec, independently of the codec) ------------

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
std::uint64_t get_be(std::string_view s, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

/// One response packet.
std::string reply(Opcode op, ResponseStatus status, std::uint32_t opaque, std::string key = {},
                  std::string value = {}, std::string extras = {}, std::uint64_t cas = 0) {
    std::string s;
    s += static_cast<char>(0x81);
    s += static_cast<char>(op);
    put_be(s, key.size(), 2);
    s += static_cast<char>(extras.size());
    s += '\0';
    put_be(s, static_cast<std::uint16_t>(status), 2);
    put_be(s, extras.size() + key.size() + value.size(), 4);
    put_be(s, opaque, 4);
    put_be(s, cas, 8);
    return s + extras + key + value;
}
std::string ok(Opcode op, std::uint32_t opaque, std::string value = {}) {
    return reply(op, ResponseStatus::no_error, opaque, {}, std::move(value));
}
std::string hit(Opcode op, std::uint32_t opaque, std::string key, std::string value,
                std::uint32_t flags, std::uint64_t cas) {
    return reply(op, ResponseStatus::no_error, opaque, std::move(key), std::move(value),
                 be32(flags), cas);
}
std::string status_only(Opcode op, ResponseStatus s, std::uint32_t opaque, std::string text = {}) {
    return reply(op, s, opaque, {}, std::move(text));
}

/// One request packet as sent.
struct Sent {
    Opcode opcode;
    std::string extras, key, value;
    std::uint32_t opaque;
    std::uint64_t cas;
};
std::vector<Sent> parse_requests(std::string_view s) {
    std::vector<Sent> out;
    while (!s.empty()) {
        EXPECT_GE(s.size(), 24u);
        if (s.size() < 24) break;
        EXPECT_EQ(static_cast<unsigned char>(s[0]), 0x80);
        const auto key_len = get_be(s, 2, 2);
        const auto ext_len = static_cast<unsigned char>(s[4]);
        const auto body = get_be(s, 8, 4);
        Sent r{static_cast<Opcode>(s[1]),
               std::string(s.substr(24, ext_len)),
               std::string(s.substr(24 + ext_len, key_len)),
               std::string(s.substr(24 + ext_len + key_len, body - ext_len - key_len)),
               static_cast<std::uint32_t>(get_be(s, 12, 4)),
               get_be(s, 16, 8)};
        out.push_back(r);
        s.remove_prefix(24 + body);
    }
    return out;
}

Options binary_options() {
    Options o;
    o.protocol = Protocol::binary;
    return o;
}

struct BinaryHarness : test::DriverHarness {
    explicit BinaryHarness(const Options& o = binary_options())
        : DriverHarness(std::make_unique<detail::BinaryDriver>(o)) {}
    /// Submits `r`, which must encode, and returns its single request packet.
    Sent send(const Request& r, std::uint32_t part = 0) {
        EXPECT_FALSE(submit(r, part));
        auto sent = parse_requests(take_output());
        EXPECT_EQ(sent.size(), 1u);
        return sent.empty() ? Sent{} : sent.front();
    }
};

Request keyed(OpCode code, std::string_view key) {
    Request r;
    r.code = code;
    r.key = key;
    return r;
}

/// Retrievals carry their keys in `keys` (the Client points it at `key` for one key).
struct Retrieval {
    Retrieval(OpCode code, std::vector<std::string_view> k, std::uint32_t exptime = 0)
        : keys(std::move(k)) {
        r.code = code;
        r.keys = keys;
        r.key = keys.empty() ? std::string_view{} : keys.front();
        r.exptime = exptime;
    }
    std::vector<std::string_view> keys;
    Request r;
};

// ---- retrievals ---------------------------------------------------------------------------

TEST(BinaryDriver, GetIsGetkAndAHitCarriesFlagsAndCas) {
    BinaryHarness h;
    Retrieval get(OpCode::get, {"k"});
    const Sent s = h.send(get.r, 3);
    EXPECT_EQ(s.opcode, Opcode::getk);
    EXPECT_EQ(s.key, "k");
    EXPECT_TRUE(s.extras.empty());
    ASSERT_FALSE(h.feed(hit(Opcode::getk, s.opaque, "k", "hello", 7, 99)));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{value_event(3, 0, "k", "hello", 7, 99), done_event(3)}));
    EXPECT_TRUE(h.inflight.empty());
}

TEST(BinaryDriver, GetMissIsAnEmptyCompletion) {
    BinaryHarness h;
    Retrieval get(OpCode::gets, {"absent"});
    const Sent s = h.send(get.r);
    EXPECT_EQ(s.opcode, Opcode::getk);
    ASSERT_FALSE(h.feed(
        reply(Opcode::getk, ResponseStatus::key_not_found, s.opaque, "absent", "Not found")));
    EXPECT_EQ(h.op.events, std::vector<Event>{done_event(0)});
}

TEST(BinaryDriver, GatAndGatsAreGatkWithTheExptime) {
    for (OpCode code : {OpCode::gat, OpCode::gats}) {
        BinaryHarness h;
        Retrieval gat(code, {"k"}, 300);
        const Sent s = h.send(gat.r);
        EXPECT_EQ(s.opcode, Opcode::gatk);
        EXPECT_EQ(s.extras, be32(300));
        EXPECT_EQ(s.key, "k");
        ASSERT_FALSE(h.feed(hit(Opcode::gatk, s.opaque, "k", "v", 1, 5)));
        EXPECT_EQ(h.op.events,
                  (std::vector<Event>{value_event(0, 0, "k", "v", 1, 5), done_event(0)}));
    }
}

TEST(BinaryDriver, MultiGetIsQuietGetsClosedByANoopAndPositionsComeFromOpaques) {
    BinaryHarness h;
    // A command before it moves the opaque base away from 0.
    ASSERT_FALSE(h.submit(keyed(OpCode::touch, "x")));
    const std::uint32_t touch_opaque = h.last.opaque;
    Retrieval multi(OpCode::gets, {"a", "b", "c", "a", "e"});
    ASSERT_FALSE(h.submit(multi.r, 2));
    const std::uint32_t base = h.last.opaque;
    const auto sent = parse_requests(h.take_output());
    ASSERT_EQ(sent.size(), 7u);
    EXPECT_EQ(sent[0].opcode, Opcode::touch);
    for (std::uint32_t i = 0; i < 5; ++i) {
        EXPECT_EQ(sent[1 + i].opcode, Opcode::getkq);
        EXPECT_EQ(sent[1 + i].key, multi.keys[i]);
        EXPECT_EQ(sent[1 + i].opaque, base + i);
    }
    EXPECT_EQ(sent[6].opcode, Opcode::noop);
    EXPECT_EQ(sent[6].opaque, base + 5);
    EXPECT_NE(base, touch_opaque);

    // Hits only (b and e miss); the duplicate key answers at both of its positions.
    const std::string replies =
        ok(Opcode::touch, touch_opaque) + hit(Opcode::getkq, base + 0, "a", "1", 0, 10) +
        hit(Opcode::getkq, base + 2, "c", "3", 4, 30) +
        hit(Opcode::getkq, base + 3, "a", "1", 0, 10) + ok(Opcode::noop, base + 5);
    ASSERT_FALSE(h.feed(replies));
    EXPECT_EQ(h.op.events, (std::vector<Event>{done_event(0, Status::touched),
                                               value_event(2, 0, "a", "1", 0, 10),
                                               value_event(2, 2, "c", "3", 4, 30),
                                               value_event(2, 3, "a", "1", 0, 10), done_event(2)}));
    EXPECT_TRUE(h.inflight.empty());
}

TEST(BinaryDriver, MultiGatIsGatkqWithTheExptime) {
    BinaryHarness h;
    Retrieval multi(OpCode::gat, {"a", "b"}, 77);
    ASSERT_FALSE(h.submit(multi.r));
    const auto base = h.last.opaque;
    const auto sent = parse_requests(h.take_output());
    ASSERT_EQ(sent.size(), 3u);
    EXPECT_EQ(sent[0].opcode, Opcode::gatkq);
    EXPECT_EQ(sent[0].extras, be32(77));
    EXPECT_EQ(sent[1].opcode, Opcode::gatkq);
    EXPECT_EQ(sent[2].opcode, Opcode::noop);
    ASSERT_FALSE(h.feed(hit(Opcode::gatkq, base + 1, "b", "B", 0, 1) + ok(Opcode::noop, base + 2)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{value_event(0, 1, "b", "B", 0, 1), done_event(0)}));
}

TEST(BinaryDriver, AKeyFailureInAMultiGetFailsThePartWhenTheNoopArrives) {
    BinaryHarness h;
    Retrieval multi(OpCode::get, {"a", "b", "c"});
    ASSERT_FALSE(h.submit(multi.r));
    const auto base = h.last.opaque;
    ASSERT_FALSE(h.feed(hit(Opcode::getkq, base, "a", "1", 0, 1) +
                        status_only(Opcode::getkq, ResponseStatus::internal_error, base + 1) +
                        hit(Opcode::getkq, base + 2, "c", "3", 0, 3)));
    EXPECT_EQ(h.op.completions().size(), 0u);  // not before the NOOP
    ASSERT_FALSE(h.feed(ok(Opcode::noop, base + 3)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{value_event(0, 0, "a", "1", 0, 1),
                                               value_event(0, 2, "c", "3", 0, 3),
                                               error_event(0, errc::server_error)}));
    // The next multi-get starts clean.
    ASSERT_FALSE(h.submit(multi.r, 1));
    ASSERT_FALSE(h.feed(ok(Opcode::noop, h.last.opaque + 3)));
    EXPECT_EQ(h.op.events.back(), done_event(1));
}

TEST(BinaryDriver, AMultiGetWithAnInvalidKeyAppendsNothing) {
    BinaryHarness h;
    Retrieval multi(OpCode::get, {"good", "bad key", "also-good"});
    EXPECT_EQ(h.submit(multi.r), errc::invalid_key);
    EXPECT_TRUE(h.out.empty());
    EXPECT_TRUE(h.inflight.empty());
    Retrieval none(OpCode::get, {});
    EXPECT_EQ(h.submit(none.r), errc::invalid_argument);
    EXPECT_TRUE(h.out.empty());
}

TEST(BinaryDriver, RawKeysCarryAnyBytesOnlyWhenAsked) {
    const std::string odd("a key\r\n\0\x01 \x7f\xff", 13);
    {
        BinaryHarness checked;
        EXPECT_EQ(checked.submit(keyed(OpCode::set, odd)), errc::invalid_key);
        EXPECT_TRUE(checked.out.empty());
    }
    Options o = binary_options();
    o.raw_binary_protocol_keys = true;
    BinaryHarness h(o);
    Request set = keyed(OpCode::set, odd);
    set.value = "v";
    const Sent s = h.send(set);
    EXPECT_EQ(s.opcode, Opcode::set);
    EXPECT_EQ(s.key, odd);
    Retrieval multi(OpCode::get, {odd, "plain"});
    ASSERT_FALSE(h.submit(multi.r));
    const auto sent = parse_requests(h.take_output());
    ASSERT_EQ(sent.size(), 3u);  // two GETKQ and the NOOP
    EXPECT_EQ(sent[0].key, odd);
    EXPECT_EQ(sent[1].key, "plain");
    // The length is still checked: 1..250 bytes.
    EXPECT_EQ(h.submit(keyed(OpCode::del, std::string(251, 'k'))), errc::invalid_key);
    EXPECT_EQ(h.submit(keyed(OpCode::del, "")), errc::invalid_key);
    Retrieval too_long(OpCode::get, {"ok", std::string(251, 'k')});
    EXPECT_EQ(h.submit(too_long.r), errc::invalid_key);
    EXPECT_TRUE(h.out.empty());
}

// ---- stores ---------------------------------------------------------------------------------

TEST(BinaryDriver, StoresCarryFlagsExptimeAndCas) {
    struct Case {
        OpCode code;
        Opcode wire;
        bool extras;
    };
    for (const Case& c :
         {Case{OpCode::set, Opcode::set, true}, Case{OpCode::add, Opcode::add, true},
          Case{OpCode::replace, Opcode::replace, true}, Case{OpCode::cas, Opcode::set, true},
          Case{OpCode::append, Opcode::append, false},
          Case{OpCode::prepend, Opcode::prepend, false}}) {
        BinaryHarness h;
        Request r = keyed(c.code, "k");
        r.value = "data";
        r.flags = 0xdeadbeef;
        r.exptime = 60;
        r.cas = 1234;
        const Sent s = h.send(r);
        EXPECT_EQ(s.opcode, c.wire) << static_cast<int>(c.code);
        EXPECT_EQ(s.key, "k");
        EXPECT_EQ(s.value, "data");
        EXPECT_EQ(s.cas, 1234u);
        EXPECT_EQ(s.extras, c.extras ? be32(0xdeadbeef) + be32(60) : std::string());
        ASSERT_FALSE(h.feed(reply(c.wire, ResponseStatus::no_error, s.opaque, {}, {}, {}, 1235)));
        EXPECT_EQ(h.op.events, std::vector<Event>{done_event(0, Status::stored)});
    }
}

TEST(BinaryDriver, StoreStatusesMeanWhatTheTextProtocolSays) {
    struct Case {
        OpCode code;
        std::uint64_t cas;
        ResponseStatus status;
        Status expected;
    };
    const Case cases[] = {
        // add on an existing key: KEY_EXISTS on the wire, NOT_STORED over text.
        {OpCode::add, 0, ResponseStatus::key_exists, Status::not_stored},
        // replace of a missing key: KEY_NOT_FOUND on the wire, NOT_STORED over text.
        {OpCode::replace, 0, ResponseStatus::key_not_found, Status::not_stored},
        {OpCode::replace, 7, ResponseStatus::key_not_found, Status::not_found},
        {OpCode::replace, 7, ResponseStatus::key_exists, Status::exists},
        {OpCode::set, 7, ResponseStatus::key_exists, Status::exists},
        {OpCode::set, 7, ResponseStatus::key_not_found, Status::not_found},
        {OpCode::cas, 7, ResponseStatus::key_exists, Status::exists},
        {OpCode::cas, 7, ResponseStatus::key_not_found, Status::not_found},
        {OpCode::append, 0, ResponseStatus::item_not_stored, Status::not_stored},
        {OpCode::prepend, 0, ResponseStatus::item_not_stored, Status::not_stored},
        {OpCode::append, 9, ResponseStatus::key_exists, Status::exists},
        {OpCode::set, 0, ResponseStatus::value_too_large, Status::value_too_large},
        {OpCode::set, 0, ResponseStatus::out_of_memory, Status::out_of_memory},
    };
    for (const Case& c : cases) {
        BinaryHarness h;
        Request r = keyed(c.code, "k");
        r.value = "v";
        r.cas = c.cas;
        const Sent s = h.send(r);
        ASSERT_FALSE(h.feed(status_only(s.opcode, c.status, s.opaque, "text")));
        ASSERT_EQ(h.op.events.size(), 1u);
        EXPECT_FALSE(h.op.events[0].ec);
        EXPECT_EQ(h.op.events[0].status, c.expected)
            << static_cast<int>(c.code) << " " << to_string(c.status);
    }
}

TEST(BinaryDriver, CasWithoutACasAndOverLargeValuesAreRefusedBeforeSending) {
    BinaryHarness h;
    Request r = keyed(OpCode::cas, "k");
    r.value = "v";
    EXPECT_EQ(h.submit(r), errc::invalid_argument);
    std::string big(binary_options().max_value_size + 1, 'x');
    Request s = keyed(OpCode::set, "k");
    s.value = big;
    EXPECT_EQ(h.submit(s), errc::value_too_large);
    Request bad = keyed(OpCode::set, "has space");
    EXPECT_EQ(h.submit(bad), errc::invalid_key);
    Request ctl = keyed(OpCode::del, std::string_view("nul\0", 4));
    EXPECT_EQ(h.submit(ctl), errc::invalid_key);
    EXPECT_TRUE(h.out.empty());
    EXPECT_TRUE(h.inflight.empty());
}

TEST(BinaryDriver, LargeStableValuesAreReferencedNotCopied) {
    BinaryHarness h;
    std::string big(64 * 1024, 'b');
    Request r = keyed(OpCode::set, "k");
    r.value = big;
    r.value_is_stable = true;
    ASSERT_FALSE(h.submit(r));
    EXPECT_EQ(h.out.ref_count(), 1u);
    r.value_is_stable = false;
    ASSERT_FALSE(h.submit(r));
    EXPECT_EQ(h.out.ref_count(), 1u);
}

// ---- other keyed commands -------------------------------------------------------------------

TEST(BinaryDriver, DeleteWithAndWithoutCas) {
    BinaryHarness h;
    Request r = keyed(OpCode::del, "k");
    Sent s = h.send(r);
    EXPECT_EQ(s.opcode, Opcode::delete_);
    EXPECT_EQ(s.cas, 0u);
    ASSERT_FALSE(h.feed(ok(Opcode::delete_, s.opaque)));
    r.cas = 55;
    s = h.send(r, 1);
    EXPECT_EQ(s.cas, 55u);
    ASSERT_FALSE(h.feed(status_only(Opcode::delete_, ResponseStatus::key_exists, s.opaque)));
    s = h.send(r, 2);
    ASSERT_FALSE(h.feed(status_only(Opcode::delete_, ResponseStatus::key_not_found, s.opaque)));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{done_event(0, Status::deleted), done_event(1, Status::exists),
                                  done_event(2, Status::not_found)}));
}

TEST(BinaryDriver, IncrDecrWithoutInitialNeverCreateAndWithInitialDo) {
    BinaryHarness h;
    Request r = keyed(OpCode::incr, "n");
    r.delta = 5;
    r.exptime = 100;  // ignored without an initial value
    Sent s = h.send(r);
    EXPECT_EQ(s.opcode, Opcode::increment);
    EXPECT_EQ(s.extras, be64(5) + be64(0) + be32(0xffffffff));
    ASSERT_FALSE(h.feed(ok(Opcode::increment, s.opaque, be64(15))));

    r.code = OpCode::decr;
    r.initial = 42;
    s = h.send(r, 1);
    EXPECT_EQ(s.opcode, Opcode::decrement);
    EXPECT_EQ(s.extras, be64(5) + be64(42) + be32(100));
    ASSERT_FALSE(h.feed(ok(Opcode::decrement, s.opaque, be64(42))));

    r.initial.reset();
    s = h.send(r, 2);
    ASSERT_FALSE(h.feed(status_only(Opcode::decrement, ResponseStatus::key_not_found, s.opaque)));
    s = h.send(r, 3);
    ASSERT_FALSE(h.feed(status_only(Opcode::decrement, ResponseStatus::non_numeric, s.opaque,
                                    "Non-numeric server-side value for incr or decr")));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{done_event(0, Status::ok, 15), done_event(1, Status::ok, 42),
                                  done_event(2, Status::not_found),
                                  error_event(3, errc::client_error,
                                              "Non-numeric server-side value for incr or decr")}));
}

TEST(BinaryDriver, Touch) {
    BinaryHarness h;
    Request r = keyed(OpCode::touch, "k");
    r.exptime = 30;
    Sent s = h.send(r);
    EXPECT_EQ(s.opcode, Opcode::touch);
    EXPECT_EQ(s.extras, be32(30));
    ASSERT_FALSE(h.feed(ok(Opcode::touch, s.opaque)));
    s = h.send(r, 1);
    ASSERT_FALSE(h.feed(status_only(Opcode::touch, ResponseStatus::key_not_found, s.opaque)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{done_event(0, Status::touched),
                                               done_event(1, Status::not_found)}));
}

// ---- server-wide commands -------------------------------------------------------------------

TEST(BinaryDriver, FlushAllWithAndWithoutDelay) {
    BinaryHarness h;
    Request r;
    r.code = OpCode::flush_all;
    Sent s = h.send(r);
    EXPECT_EQ(s.opcode, Opcode::flush);
    EXPECT_TRUE(s.extras.empty());
    ASSERT_FALSE(h.feed(ok(Opcode::flush, s.opaque)));
    r.delay = 10;
    s = h.send(r, 1);
    EXPECT_EQ(s.extras, be32(10));
    ASSERT_FALSE(h.feed(ok(Opcode::flush, s.opaque)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{done_event(0), done_event(1)}));
}

TEST(BinaryDriver, StatsUntilTheEmptyKeyTerminator) {
    BinaryHarness h;
    Request r;
    r.code = OpCode::stats;
    r.group = "settings";
    Sent s = h.send(r, 4);
    EXPECT_EQ(s.opcode, Opcode::stat);
    EXPECT_EQ(s.key, "settings");
    ASSERT_FALSE(
        h.feed(reply(Opcode::stat, ResponseStatus::no_error, s.opaque, "maxbytes", "64") +
               reply(Opcode::stat, ResponseStatus::no_error, s.opaque, "evictions", "on")));
    EXPECT_EQ(h.op.completions().size(), 0u);
    ASSERT_FALSE(h.feed(ok(Opcode::stat, s.opaque)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{stat_event(4, "maxbytes", "64"),
                                               stat_event(4, "evictions", "on"), done_event(4)}));
    // A refused group fails the part.
    s = h.send(r, 5);
    ASSERT_FALSE(h.feed(status_only(Opcode::stat, ResponseStatus::key_not_found, s.opaque)));
    EXPECT_EQ(h.op.events.back(), error_event(5, errc::server_error));
}

TEST(BinaryDriver, VersionVerbosityNoop) {
    BinaryHarness h;
    Request r;
    r.code = OpCode::version;
    Sent s = h.send(r);
    EXPECT_EQ(s.opcode, Opcode::version);
    ASSERT_FALSE(h.feed(ok(Opcode::version, s.opaque, "1.6.18")));
    r.code = OpCode::verbosity;
    r.level = 2;
    s = h.send(r, 1);
    EXPECT_EQ(s.opcode, Opcode::verbosity);
    EXPECT_EQ(s.extras, be32(2));
    ASSERT_FALSE(h.feed(ok(Opcode::verbosity, s.opaque)));
    r.code = OpCode::noop;
    s = h.send(r, 2);
    EXPECT_EQ(s.opcode, Opcode::noop);
    ASSERT_FALSE(h.feed(ok(Opcode::noop, s.opaque)));
    EXPECT_EQ(h.op.events, (std::vector<Event>{done_event(0, Status::ok, 0, "1.6.18"),
                                               done_event(1), done_event(2)}));
}

// ---- errors ---------------------------------------------------------------------------------

TEST(BinaryDriver, FailureStatusesMapToErrors) {
    struct Case {
        ResponseStatus status;
        errc expected;
    };
    const Case cases[] = {
        {ResponseStatus::auth_error, errc::auth_failed},
        {ResponseStatus::unknown_command, errc::unsupported},
        {ResponseStatus::not_supported, errc::unsupported},
        {ResponseStatus::invalid_arguments, errc::client_error},
        {ResponseStatus::non_numeric, errc::client_error},
        {ResponseStatus::internal_error, errc::server_error},
        {ResponseStatus::busy, errc::server_error},
        {ResponseStatus::temporary_failure, errc::server_error},
        {ResponseStatus::vbucket, errc::server_error},
        {static_cast<ResponseStatus>(0x0099), errc::server_error},  // unknown to us
    };
    for (const Case& c : cases) {
        for (OpCode code : {OpCode::get, OpCode::set, OpCode::del, OpCode::incr, OpCode::touch,
                            OpCode::version}) {
            BinaryHarness h;
            Retrieval get(code, {"k"});
            Request r = get.r;
            r.value = "v";
            const Sent s = h.send(r);
            ASSERT_FALSE(h.feed(status_only(s.opcode, c.status, s.opaque, "why")));
            EXPECT_EQ(h.op.events, std::vector<Event>{error_event(0, c.expected, "why")})
                << to_string(c.status) << " for " << static_cast<int>(code);
        }
    }
    // Outcomes that only stores have are errors elsewhere.
    BinaryHarness h;
    const Sent s = h.send(keyed(OpCode::touch, "k"));
    ASSERT_FALSE(h.feed(status_only(Opcode::touch, ResponseStatus::out_of_memory, s.opaque)));
    EXPECT_EQ(h.op.events, std::vector<Event>{error_event(0, errc::server_error)});
}

TEST(BinaryDriver, OutOfStepRepliesAreProtocolErrors) {
    {
        BinaryHarness h;  // nothing in flight
        EXPECT_EQ(h.feed(ok(Opcode::noop, 0)), errc::protocol_error);
    }
    {
        BinaryHarness h;  // wrong opaque
        const Sent s = h.send(keyed(OpCode::del, "k"));
        EXPECT_EQ(h.feed(ok(Opcode::delete_, s.opaque + 1)), errc::protocol_error);
        EXPECT_TRUE(h.op.events.empty());
        EXPECT_EQ(h.inflight.size(), 1u);  // the connection fails it
    }
    {
        BinaryHarness h;  // right opaque, wrong opcode
        const Sent s = h.send(keyed(OpCode::del, "k"));
        EXPECT_EQ(h.feed(ok(Opcode::touch, s.opaque)), errc::protocol_error);
    }
    {
        BinaryHarness h;  // a multi-get reply beyond its keys
        Retrieval multi(OpCode::get, {"a", "b"});
        ASSERT_FALSE(h.submit(multi.r));
        const auto base = h.last.opaque;
        EXPECT_EQ(h.feed(hit(Opcode::getkq, base + 4, "a", "", 0, 0)), errc::protocol_error);
    }
    {
        BinaryHarness h;  // the NOOP of a multi-get with the wrong opaque
        Retrieval multi(OpCode::get, {"a", "b"});
        ASSERT_FALSE(h.submit(multi.r));
        EXPECT_EQ(h.feed(ok(Opcode::noop, h.last.opaque)), errc::protocol_error);
    }
    {
        BinaryHarness h;  // a loud GETK answering a quiet batch
        Retrieval multi(OpCode::get, {"a", "b"});
        ASSERT_FALSE(h.submit(multi.r));
        EXPECT_EQ(h.feed(hit(Opcode::getk, h.last.opaque, "a", "", 0, 0)), errc::protocol_error);
    }
    {
        BinaryHarness h;  // a text reply on a binary connection
        ASSERT_FALSE(h.submit(keyed(OpCode::del, "k")));
        EXPECT_EQ(h.feed("ERROR\r\n"), errc::protocol_error);
        EXPECT_FALSE(h.message.empty());
    }
}

// ---- framing --------------------------------------------------------------------------------

/// A pipeline of every kind of reply; fed whole, and cut at every byte boundary.
struct Pipeline {
    BinaryHarness h;
    std::string replies;
    Retrieval single{OpCode::gets, {"k"}};
    Retrieval multi{OpCode::get, {"a", "b", "c"}};

    Pipeline() {
        std::uint32_t o = 0;
        EXPECT_FALSE(h.submit(single.r, 0));
        o = h.last.opaque;
        replies += hit(Opcode::getk, o, "k", std::string(300, 'v'), 3, 8);
        EXPECT_FALSE(h.submit(multi.r, 1));
        o = h.last.opaque;
        replies += hit(Opcode::getkq, o, "a", "A", 0, 1) +
                   hit(Opcode::getkq, o + 2, "c", "", 0, 3) + ok(Opcode::noop, o + 3);
        Request stats;
        stats.code = OpCode::stats;
        EXPECT_FALSE(h.submit(stats, 2));
        o = h.last.opaque;
        replies +=
            reply(Opcode::stat, ResponseStatus::no_error, o, "pid", "1") + ok(Opcode::stat, o);
        Request incr = keyed(OpCode::incr, "n");
        EXPECT_FALSE(h.submit(incr, 3));
        replies += ok(Opcode::increment, h.last.opaque, be64(7));
        Request set = keyed(OpCode::set, "k");
        EXPECT_FALSE(h.submit(set, 4));
        replies +=
            status_only(Opcode::set, ResponseStatus::value_too_large, h.last.opaque, "Too large.");
        h.take_output();
    }
};

TEST(BinaryDriver, RepliesSplitAtEveryByteBoundaryDecodeTheSame) {
    Pipeline whole;
    ASSERT_FALSE(whole.h.feed(whole.replies));
    ASSERT_EQ(whole.h.op.completions().size(), 5u);
    EXPECT_TRUE(whole.h.inflight.empty());
    for (std::size_t cut = 1; cut < whole.replies.size(); ++cut) {
        Pipeline split;
        ASSERT_FALSE(split.h.feed(split.replies, {cut})) << cut;
        ASSERT_EQ(split.h.op.events, whole.h.op.events) << "cut at " << cut;
    }
    Pipeline bytewise;
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < bytewise.replies.size(); ++i)
        cuts.push_back(i);
    ASSERT_FALSE(bytewise.h.feed(bytewise.replies, cuts));
    EXPECT_EQ(bytewise.h.op.events, whole.h.op.events);
}

// ---- SASL -----------------------------------------------------------------------------------

Options sasl_options(std::string user, std::string password) {
    Options o = binary_options();
    o.sasl = SaslCredentials{std::move(user), std::move(password)};
    return o;
}

TEST(BinaryDriver, NoHandshakeWithoutCredentials) {
    detail::BinaryDriver d(binary_options());
    protocol::OutputBuffer out;
    EXPECT_FALSE(d.handshake_request(out));
    EXPECT_TRUE(out.empty());
}

TEST(BinaryDriver, SaslPlainHandshake) {
    detail::BinaryDriver d(sasl_options("user", "secret"));
    protocol::OutputBuffer out;
    ASSERT_TRUE(d.handshake_request(out));
    // The mechanism list is asked in the same write, so a server without PLAIN is told apart
    // from a refused password at no extra round trip.
    const auto sent = parse_requests(out.contiguous());
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].opcode, Opcode::sasl_list_mechs);
    EXPECT_EQ(sent[1].opcode, Opcode::sasl_auth);
    EXPECT_EQ(sent[1].key, "PLAIN");
    EXPECT_EQ(sent[1].value, std::string("\0user\0secret", 12));

    const std::string success = ok(Opcode::sasl_list_mechs, sent[0].opaque, "CRAM-MD5 PLAIN") +
                                ok(Opcode::sasl_auth, 0, "Authenticated");
    // Byte by byte, as a connection feeds it (consumed bytes leave the buffer): needs more
    // until both packets are there, and consumes each whole packet once.
    std::string buffered;
    std::size_t consumed = 0;
    for (std::size_t n = 0; n + 1 < success.size(); ++n) {
        buffered += success[n];
        auto step = d.handshake_reply(buffered, out);
        EXPECT_FALSE(step.ec) << n;
        EXPECT_FALSE(step.done) << n;
        EXPECT_GT(step.needed, 0u);
        buffered.erase(0, step.consumed);
        consumed += step.consumed;
    }
    EXPECT_EQ(consumed, success.size() - ok(Opcode::sasl_auth, 0, "Authenticated").size());
    buffered += success.back();
    auto step = d.handshake_reply(buffered, out);
    EXPECT_FALSE(step.ec);
    EXPECT_TRUE(step.done);
    EXPECT_EQ(consumed + step.consumed, success.size());
}

TEST(BinaryDriver, SaslRefusals) {
    struct Case {
        std::string bytes;
        errc expected;
    };
    const std::string mechs = ok(Opcode::sasl_list_mechs, 1, "PLAIN");
    const Case cases[] = {
        {mechs + status_only(Opcode::sasl_auth, ResponseStatus::auth_error, 0, "Auth failure"),
         errc::auth_failed},
        {mechs + status_only(Opcode::sasl_auth, ResponseStatus::auth_continue, 0),
         errc::auth_failed},
        {mechs + status_only(Opcode::sasl_auth, ResponseStatus::unknown_command, 0),
         errc::unsupported},
        {mechs + ok(Opcode::noop, 0), errc::protocol_error},
        {"ERROR\r\n", errc::protocol_error},
        {ok(Opcode::noop, 1), errc::protocol_error},
        // A server that has no SASL at all refuses the list as an unknown command.
        {status_only(Opcode::sasl_list_mechs, ResponseStatus::unknown_command, 1),
         errc::unsupported},
        // memcached -S without Cyrus' plugins (libsasl2-modules) refuses even the list.
        {status_only(Opcode::sasl_list_mechs, ResponseStatus::auth_error, 1, "Auth failure.") +
             status_only(Opcode::sasl_auth, ResponseStatus::auth_error, 0, "Auth failure."),
         errc::no_sasl_mechanism},
        // A list without PLAIN ("PLAINX" is not PLAIN).
        {ok(Opcode::sasl_list_mechs, 1, "CRAM-MD5 PLAINX"), errc::no_sasl_mechanism},
    };
    for (const Case& c : cases) {
        detail::BinaryDriver d(sasl_options("user", "wrong"));
        protocol::OutputBuffer out;
        ASSERT_TRUE(d.handshake_request(out));
        const auto step = d.handshake_reply(c.bytes, out);
        EXPECT_EQ(step.ec, c.expected) << c.bytes.size();
        EXPECT_FALSE(step.done);
        EXPECT_FALSE(step.message.empty());
    }
}

TEST(BinaryDriver, CredentialsPlainCannotCarryAreRefusedUpFront) {
    try {
        detail::BinaryDriver d(sasl_options(std::string("us\0er", 5), "pw"));
        ADD_FAILURE() << "accepted a NUL in the user name";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
}

TEST(BinaryDriver, TheFactoryRefusesSaslOverTextProtocols) {
    for (Protocol p : {Protocol::ascii, Protocol::meta}) {
        Options o = sasl_options("u", "p");
        o.protocol = p;
        try {
            detail::make_protocol_driver(o);
            ADD_FAILURE() << "SASL accepted over protocol " << static_cast<int>(p);
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::unsupported);
        }
    }
    EXPECT_NE(detail::make_protocol_driver(sasl_options("u", "p")), nullptr);
}

}  // namespace
