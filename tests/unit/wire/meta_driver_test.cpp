// MetaDriver against scripted reply bytes: what every OpCode puts on the wire, how every reply
// maps to an outcome, multi-get positions from opaques, classic text commands on the same
// connection, out-of-step replies, and replies split at every byte boundary.
#include "wire/meta_driver.hpp"

#include "folsom/error.hpp"

#include "support/recording_operation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;
using detail::Request;
using test::done_event;
using test::error_event;
using test::Event;
using test::stat_event;
using test::value_event;

Options meta_options() {
    Options o;
    o.protocol = Protocol::meta;
    return o;
}

struct MetaHarness : test::DriverHarness {
    MetaHarness() : DriverHarness(std::make_unique<detail::MetaDriver>(meta_options())) {}
    /// Submits `r`, which must encode, and returns the bytes it wrote.
    std::string send(const Request& r, std::uint32_t part = 0) {
        EXPECT_FALSE(submit(r, part));
        return take_output();
    }
};

Request keyed(OpCode code, std::string_view key) {
    Request r;
    r.code = code;
    r.key = key;
    return r;
}

Request server_wide(OpCode code) {
    Request r;
    r.code = code;
    return r;
}

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

TEST(MetaDriver, SingleRetrievalsAreMgWithValueFlagsAndCasWhenAsked) {
    struct Case {
        OpCode code;
        std::string wire;
    };
    for (const Case& c :
         {Case{OpCode::get, "mg k v f\r\n"}, Case{OpCode::gets, "mg k v c f\r\n"},
          Case{OpCode::gat, "mg k v f T300\r\n"}, Case{OpCode::gats, "mg k v c f T300\r\n"}}) {
        MetaHarness h;
        Retrieval get(c.code, {"k"}, 300);
        EXPECT_EQ(h.send(get.r, 2), c.wire);
        ASSERT_FALSE(h.feed("VA 5 f7 c99\r\nhello\r\n"));
        EXPECT_EQ(h.op.events,
                  (std::vector<Event>{value_event(2, 0, "", "hello", 7, 99), done_event(2)}));
        // A miss.
        EXPECT_EQ(h.send(get.r, 3), c.wire);
        ASSERT_FALSE(h.feed("EN\r\n"));
        EXPECT_EQ(h.op.events.back(), done_event(3));
        EXPECT_TRUE(h.inflight.empty());
    }
}

TEST(MetaDriver, MultiGetAndGetsAreOneClassicLineAnsweredWhole) {
    // memcached answers at most -R commands per event: one line of keys comes back whole,
    // where one mg per key came back in pieces of 20.
    MetaHarness h;
    Retrieval multi(OpCode::get, {"a", "b", "c", "a"});
    EXPECT_EQ(h.send(multi.r, 1), "get a b c a\r\n");
    // b misses (nothing is sent for it); each VALUE names its key.
    ASSERT_FALSE(h.feed("VALUE a 5 1\r\n1\r\nVALUE c 0 1\r\n3\r\n"));
    EXPECT_TRUE(h.op.completions().empty());
    ASSERT_FALSE(h.feed("END\r\n"));
    const std::uint32_t keyed = folsom::detail::Operation::unknown_position;
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{value_event(1, keyed, "a", "1", 5),
                                  value_event(1, keyed, "c", "3"), done_event(1)}));
    EXPECT_EQ(h.inflight.size(), 0u);

    Retrieval gets(OpCode::gets, {"a", "b"});
    EXPECT_EQ(h.send(gets.r, 2), "gets a b\r\n");
    ASSERT_FALSE(h.feed("VALUE b 0 1 77\r\nB\r\nEND\r\n"));
    EXPECT_EQ(h.op.events.back(), done_event(2));
    EXPECT_EQ(h.op.events[h.op.events.size() - 2], value_event(2, keyed, "b", "B", 0, 77));

    // An error line fails the part as a whole (the keys were checked before sending).
    h.send(multi.r, 3);
    ASSERT_FALSE(h.feed("SERVER_ERROR out of memory\r\n"));
    EXPECT_EQ(h.op.events.back().kind, Event::Kind::complete);
    EXPECT_EQ(h.op.events.back().part, 3u);
    EXPECT_EQ(h.op.events.back().ec, make_error_code(errc::server_error));
    // A gets hit without its cas, or a get hit with one, is out of step.
    h.send(gets.r, 4);
    EXPECT_EQ(h.feed("VALUE a 0 1\r\nA\r\nEND\r\n"), errc::protocol_error);
}

TEST(MetaDriver, MultiGatIsQuietMgWithPositionsAsOpaquesClosedByMn) {
    MetaHarness h;
    Retrieval multi(OpCode::gat, {"a", "b", "c", "a"}, 60);
    EXPECT_EQ(h.send(multi.r, 1),
              "mg a v k f q O0 T60\r\nmg b v k f q O1 T60\r\nmg c v k f q O2 T60\r\n"
              "mg a v k f q O3 T60\r\nmn\r\n");
    // b misses (quiet); the duplicate answers at both positions; order does not matter.
    ASSERT_FALSE(h.feed("VA 1 f0 kc O2\r\n3\r\nVA 1 f5 ka O0\r\n1\r\nVA 1 f5 ka O3\r\n1\r\n"));
    EXPECT_TRUE(h.op.completions().empty());
    ASSERT_FALSE(h.feed("MN\r\n"));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{value_event(1, 2, "c", "3"), value_event(1, 0, "a", "1", 5),
                                  value_event(1, 3, "a", "1", 5), done_event(1)}));
}

TEST(MetaDriver, MultiGatsAndMultiGatAskForCasAndTouch) {
    MetaHarness h;
    Retrieval gets(OpCode::gats, {"a", "b"}, 60);
    EXPECT_EQ(h.send(gets.r), "mg a v k c f q O0 T60\r\nmg b v k c f q O1 T60\r\nmn\r\n");
    ASSERT_FALSE(h.feed("VA 1 kb c77 f0 O1\r\nB\r\nMN\r\n"));
    Retrieval gat(OpCode::gat, {"a", "b"}, 60);
    EXPECT_EQ(h.send(gat.r, 1), "mg a v k f q O0 T60\r\nmg b v k f q O1 T60\r\nmn\r\n");
    // A server that does send EN for a quiet miss (with its opaque) is still in step.
    ASSERT_FALSE(h.feed("EN O0\r\nMN\r\n"));
    EXPECT_EQ(h.op.events, (std::vector<Event>{value_event(0, 1, "b", "B", 0, 77), done_event(0),
                                               done_event(1)}));
}

TEST(MetaDriver, AKeyFailureInAMultiGatFailsThePartOnMn) {
    MetaHarness h;
    Retrieval multi(OpCode::gat, {"a", "b"}, 60);
    h.send(multi.r);
    ASSERT_FALSE(h.feed("CLIENT_ERROR bad command line format\r\nVA 1 kb O1\r\nx\r\n"));
    EXPECT_TRUE(h.op.completions().empty());
    ASSERT_FALSE(h.feed("MN\r\n"));
    EXPECT_EQ(h.op.events, (std::vector<Event>{value_event(0, 1, "b", "x"),
                                               error_event(0, errc::client_error)}));
    h.send(multi.r, 1);
    ASSERT_FALSE(h.feed("MN\r\n"));
    EXPECT_EQ(h.op.events.back(), done_event(1));  // the error does not leak into the next
}

TEST(MetaDriver, InvalidKeysAreRefusedAndNothingIsAppended) {
    MetaHarness h;
    Retrieval multi(OpCode::get, {"good", "bad key"});
    EXPECT_EQ(h.submit(multi.r), errc::invalid_key);
    Retrieval none(OpCode::get, {});
    EXPECT_EQ(h.submit(none.r), errc::invalid_argument);
    for (OpCode code : {OpCode::set, OpCode::del, OpCode::incr, OpCode::touch}) {
        EXPECT_EQ(h.submit(keyed(code, "inject\r\nflush_all")), errc::invalid_key);
        EXPECT_EQ(h.submit(keyed(code, std::string(251, 'k'))), errc::invalid_key);
        EXPECT_EQ(h.submit(keyed(code, "")), errc::invalid_key);
    }
    Request cas = keyed(OpCode::cas, "k");
    EXPECT_EQ(h.submit(cas), errc::invalid_argument);  // a cas of 0 can never match
    std::string big(meta_options().max_value_size + 1, 'x');
    Request set = keyed(OpCode::set, "k");
    set.value = big;
    EXPECT_EQ(h.submit(set), errc::value_too_large);
    EXPECT_TRUE(h.out.empty());
    EXPECT_TRUE(h.inflight.empty());
}

// ---- stores, delete, arithmetic, touch ------------------------------------------------------

TEST(MetaDriver, StoresAreMsWithModeFlagsTtlAndCas) {
    struct Case {
        OpCode code;
        std::uint64_t cas;
        std::string wire;
    };
    const Case cases[] = {
        {OpCode::set, 0, "ms k 4 F7 T60\r\ndata\r\n"},
        {OpCode::set, 12, "ms k 4 F7 T60 C12\r\ndata\r\n"},
        {OpCode::add, 0, "ms k 4 ME F7 T60\r\ndata\r\n"},
        {OpCode::replace, 0, "ms k 4 MR F7 T60\r\ndata\r\n"},
        {OpCode::cas, 12, "ms k 4 F7 T60 C12\r\ndata\r\n"},
        // append/prepend keep the item's flags and ttl.
        {OpCode::append, 0, "ms k 4 MA\r\ndata\r\n"},
        {OpCode::prepend, 12, "ms k 4 MP C12\r\ndata\r\n"},
    };
    for (const Case& c : cases) {
        MetaHarness h;
        Request r = keyed(c.code, "k");
        r.value = "data";
        r.flags = 7;
        r.exptime = 60;
        r.cas = c.cas;
        EXPECT_EQ(h.send(r), c.wire);
    }
    MetaHarness h;
    Request r = keyed(OpCode::set, "k");
    r.value = "";
    EXPECT_EQ(h.send(r), "ms k 0\r\n\r\n");  // no flags, no ttl: the server's defaults
}

TEST(MetaDriver, StoreReplies) {
    struct Case {
        std::string reply;
        Event expected;
    };
    const Case cases[] = {
        {"HD\r\n", done_event(0, Status::stored)},
        {"NS\r\n", done_event(0, Status::not_stored)},
        {"EX\r\n", done_event(0, Status::exists)},
        {"NF\r\n", done_event(0, Status::not_found)},
        {"SERVER_ERROR object too large for cache\r\n",
         done_event(0, Status::value_too_large, 0, "object too large for cache")},
        {"SERVER_ERROR out of memory storing object\r\n",
         done_event(0, Status::out_of_memory, 0, "out of memory storing object")},
        {"SERVER_ERROR something else\r\n", error_event(0, errc::server_error, "something else")},
        {"CLIENT_ERROR bad data chunk\r\n", error_event(0, errc::client_error, "bad data chunk")},
        {"ERROR\r\n", error_event(0, errc::unsupported)},
    };
    for (const Case& c : cases) {
        MetaHarness h;
        Request r = keyed(OpCode::set, "k");
        r.value = "v";
        h.send(r);
        ASSERT_FALSE(h.feed(c.reply)) << c.reply;
        EXPECT_EQ(h.op.events, std::vector<Event>{c.expected}) << c.reply;
    }
}

TEST(MetaDriver, DeleteWithAndWithoutCas) {
    MetaHarness h;
    Request r = keyed(OpCode::del, "k");
    EXPECT_EQ(h.send(r), "md k\r\n");
    ASSERT_FALSE(h.feed("HD\r\n"));
    r.cas = 55;
    EXPECT_EQ(h.send(r, 1), "md k C55\r\n");
    ASSERT_FALSE(h.feed("EX\r\n"));
    h.send(r, 2);
    ASSERT_FALSE(h.feed("NF\r\n"));
    h.send(r, 3);
    ASSERT_FALSE(h.feed("SERVER_ERROR out of memory storing object\r\n"));  // not a store
    EXPECT_EQ(
        h.op.events,
        (std::vector<Event>{done_event(0, Status::deleted), done_event(1, Status::exists),
                            done_event(2, Status::not_found),
                            error_event(3, errc::server_error, "out of memory storing object")}));
}

TEST(MetaDriver, IncrDecrAreMaWithTheValueReturned) {
    MetaHarness h;
    Request r = keyed(OpCode::incr, "n");
    r.delta = 5;
    r.exptime = 100;
    EXPECT_EQ(h.send(r), "ma n D5 v\r\n");
    ASSERT_FALSE(h.feed("VA 2\r\n15\r\n"));
    r.code = OpCode::decr;
    r.initial = 42;
    EXPECT_EQ(h.send(r, 1), "ma n MD D5 N100 J42 v\r\n");
    ASSERT_FALSE(h.feed("VA 2\r\n42\r\n"));
    r.initial.reset();
    h.send(r, 2);
    ASSERT_FALSE(h.feed("NF\r\n"));
    h.send(r, 3);
    ASSERT_FALSE(h.feed("CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"));
    r.code = OpCode::incr;
    h.send(r, 4);
    ASSERT_FALSE(h.feed("VA 20\r\n18446744073709551615\r\n"));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{done_event(0, Status::ok, 15), done_event(1, Status::ok, 42),
                                  done_event(2, Status::not_found),
                                  error_event(3, errc::client_error,
                                              "cannot increment or decrement non-numeric value"),
                                  done_event(4, Status::ok, 18446744073709551615ull)}));
}

TEST(MetaDriver, TouchIsMgWithATtl) {
    MetaHarness h;
    Request r = keyed(OpCode::touch, "k");
    r.exptime = 30;
    EXPECT_EQ(h.send(r), "mg k T30\r\n");
    ASSERT_FALSE(h.feed("HD\r\n"));
    h.send(r, 1);
    ASSERT_FALSE(h.feed("EN\r\n"));
    EXPECT_EQ(h.op.events, (std::vector<Event>{done_event(0, Status::touched),
                                               done_event(1, Status::not_found)}));
}

TEST(MetaDriver, NoopIsMn) {
    MetaHarness h;
    EXPECT_EQ(h.send(server_wide(OpCode::noop)), "mn\r\n");
    ASSERT_FALSE(h.feed("MN\r\n"));
    EXPECT_EQ(h.op.events, std::vector<Event>{done_event(0)});
}

// ---- classic text commands on the meta connection -------------------------------------------

TEST(MetaDriver, ServerWideCommandsAreClassicTextCommands) {
    MetaHarness h;
    Request flush = server_wide(OpCode::flush_all);
    EXPECT_EQ(h.send(flush), "flush_all\r\n");
    flush.delay = 10;
    EXPECT_EQ(h.send(flush, 1), "flush_all 10\r\n");
    Request stats = server_wide(OpCode::stats);
    stats.group = "settings";
    EXPECT_EQ(h.send(stats, 2), "stats settings\r\n");
    EXPECT_EQ(h.send(server_wide(OpCode::version), 3), "version\r\n");
    Request verbosity = server_wide(OpCode::verbosity);
    verbosity.level = 1;
    EXPECT_EQ(h.send(verbosity, 4), "verbosity 1\r\n");
    // And a meta command after them: the decoder switches back.
    Retrieval get(OpCode::get, {"k"});
    EXPECT_EQ(h.send(get.r, 5), "mg k v f\r\n");
    ASSERT_FALSE(
        h.feed("OK\r\nOK\r\nSTAT maxbytes 64\r\nSTAT evictions on\r\nEND\r\n"
               "VERSION 1.6.18\r\nOK\r\nVA 1 f0\r\nx\r\n"));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{done_event(0), done_event(1), stat_event(2, "maxbytes", "64"),
                                  stat_event(2, "evictions", "on"), done_event(2),
                                  done_event(3, Status::ok, 0, "1.6.18"), done_event(4),
                                  value_event(5, 0, "", "x"), done_event(5)}));
    // Errors of classic commands.
    h.send(stats, 6);
    ASSERT_FALSE(h.feed("ERROR\r\n"));
    h.send(flush, 7);
    ASSERT_FALSE(h.feed("CLIENT_ERROR bad command line format\r\n"));
    EXPECT_EQ(h.op.completions().back(),
              error_event(7, errc::client_error, "bad command line format"));
    EXPECT_EQ(h.op.completions()[h.op.completions().size() - 2], error_event(6, errc::unsupported));
}

// ---- out of step ----------------------------------------------------------------------------

TEST(MetaDriver, OutOfStepRepliesAreProtocolErrors) {
    struct Case {
        OpCode code;
        std::vector<std::string_view> keys;
        std::string reply;
    };
    const Case cases[] = {
        {OpCode::get, {"k"}, "HD\r\n"},            // a get answered like a store
        {OpCode::get, {"k"}, "VA 1 O3\r\nx\r\n"},  // an opaque we did not send
        {OpCode::get, {"k"}, "MN\r\n"},
        {OpCode::get, {"k"}, "STORED\r\n"},                // a text reply: not meta at all
        {OpCode::get, {"a", "b"}, "VA 1 ka O2\r\nx\r\n"},  // a position beyond the keys
        {OpCode::get, {"a", "b"}, "VA 1 ka\r\nx\r\n"},     // no position at all
        {OpCode::get, {"a", "b"}, "HD O0\r\n"},
        {OpCode::set, {"k"}, "EN\r\n"},
        {OpCode::del, {"k"}, "NS\r\n"},
        {OpCode::incr, {"k"}, "HD\r\n"},
        {OpCode::incr, {"k"}, "VA 2\r\nxy\r\n"},  // not a number
        {OpCode::touch, {"k"}, "NF\r\n"},
        {OpCode::noop, {"k"}, "HD\r\n"},
        {OpCode::stats, {}, "HD\r\n"},  // a meta reply to a classic command
        {OpCode::stats, {}, "OK\r\n"},
        {OpCode::flush_all, {}, "END\r\n"},
        {OpCode::version, {}, "OK\r\n"},
    };
    for (const Case& c : cases) {
        MetaHarness h;
        Retrieval r(c.code, c.keys);
        r.r.value = "v";
        h.send(r.r);
        EXPECT_EQ(h.feed(c.reply), errc::protocol_error) << c.reply;
        EXPECT_TRUE(h.op.completions().empty()) << c.reply;
        EXPECT_FALSE(h.message.empty());
    }
    MetaHarness h;  // nothing in flight: even an incomplete reply is refused at once
    EXPECT_EQ(h.feed("V"), errc::protocol_error);
}

// ---- framing --------------------------------------------------------------------------------

struct Pipeline {
    MetaHarness h;
    std::string replies;
    Retrieval single{OpCode::gets, {"k"}};
    Retrieval multi{OpCode::gat, {"a", "b", "c"}, 60};
    Retrieval classic{OpCode::get, {"a", "b"}};

    Pipeline() {
        h.send(single.r, 0);
        replies += "VA 300 f3 c8\r\n" + std::string(300, 'v') + "\r\n";
        h.send(multi.r, 1);
        replies += "VA 1 f0 ka O0\r\nA\r\nVA 0 kc O2\r\n\r\nMN\r\n";
        h.send(classic.r, 1);
        replies += "VALUE b 2 3\r\nEND\r\nEND\r\n";  // a value that reads like END
        h.send(server_wide(OpCode::stats), 2);
        replies += "STAT pid 1\r\nSTAT uptime 5\r\nEND\r\n";
        h.send(keyed(OpCode::incr, "n"), 3);
        replies += "VA 1\r\n7\r\n";
        Request set = keyed(OpCode::set, "k");
        h.send(set, 4);
        replies += "SERVER_ERROR object too large for cache\r\n";
        Request touch = keyed(OpCode::touch, "k");
        h.send(touch, 5);
        replies += "HD\r\n";
        h.send(server_wide(OpCode::version), 6);
        replies += "VERSION 1.6.18\r\n";
        h.send(multi.r, 7);
        replies += "MN\r\n";
    }
};

TEST(MetaDriver, RepliesSplitAtEveryByteBoundaryDecodeTheSame) {
    Pipeline whole;
    ASSERT_FALSE(whole.h.feed(whole.replies));
    ASSERT_EQ(whole.h.op.completions().size(), 9u);
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

TEST(MetaDriver, ResetForgetsAPartialReplyAndAPendingMultiGetError) {
    MetaHarness h;
    Retrieval multi(OpCode::gat, {"a", "b"}, 60);
    h.send(multi.r);
    ASSERT_FALSE(h.feed("SERVER_ERROR busy\r\nVA 5 ka O0\r\nab"));
    h.driver->reset();  // the connection failed; its commands were failed elsewhere
    h.inflight.pop_front();
    h.pending.clear();
    h.op.events.clear();
    h.send(multi.r, 1);
    ASSERT_FALSE(h.feed("MN\r\n"));
    EXPECT_EQ(h.op.events, std::vector<Event>{done_event(1)});
}

}  // namespace
