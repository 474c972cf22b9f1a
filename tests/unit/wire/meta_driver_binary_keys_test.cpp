// MetaDriver with Options::binary_keys: every command sends its key in base64 with the 'b'
// flag, keys of any byte value (1..186 bytes) are accepted and nothing else is, a multi-key
// get holding a binary key goes as one mg per key (the classic line has no base64 form; one of
// text keys keeps the line), and a hit's key the server returns in base64 reaches the
// operation as the caller's raw bytes.
#include "folsom/error.hpp"
#include "folsom/protocol/base64.hpp"

#include "support/recording_operation.hpp"
#include "wire/meta_driver.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;
using detail::Request;
using test::done_event;
using test::Event;
using test::value_event;

Options binary_key_options() {
    Options o;
    o.protocol = Protocol::meta;
    o.binary_keys = true;
    return o;
}

struct BinaryKeyHarness : test::DriverHarness {
    BinaryKeyHarness()
        : DriverHarness(std::make_unique<detail::MetaDriver>(binary_key_options())) {}
    std::string send(const Request& r, std::uint32_t part = 0) {
        EXPECT_FALSE(submit(r, part));
        return take_output();
    }
};

std::string b64(std::string_view raw) {
    std::string out(protocol::base64_encoded_size(raw.size()), '\0');
    out.resize(protocol::base64_encode(raw, out.data()));
    return out;
}

Request keyed(OpCode code, std::string_view key) {
    Request r;
    r.code = code;
    r.key = key;
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

const std::string nasty("a b\r\n\0\x7f\xff", 8);  // space, CR LF, NUL, DEL, 0xff

TEST(MetaDriverBinaryKeys, EveryKeyedCommandSendsTheKeyInBase64WithB) {
    ASSERT_EQ(b64(nasty), "YSBiDQoAf/8=");
    BinaryKeyHarness h;
    Retrieval get(OpCode::get, {nasty});
    EXPECT_EQ(h.send(get.r), "mg YSBiDQoAf/8= b v f\r\n");
    Retrieval gats(OpCode::gats, {nasty}, 60);
    EXPECT_EQ(h.send(gats.r), "mg YSBiDQoAf/8= b v c f T60\r\n");

    Request set = keyed(OpCode::set, nasty);
    set.value = "hello";
    set.flags = 3;
    set.exptime = 9;
    EXPECT_EQ(h.send(set), "ms YSBiDQoAf/8= 5 b F3 T9\r\nhello\r\n");
    Request cas = set;
    cas.code = OpCode::cas;
    cas.cas = 77;
    EXPECT_EQ(h.send(cas), "ms YSBiDQoAf/8= 5 b F3 T9 C77\r\nhello\r\n");
    Request append = keyed(OpCode::append, nasty);
    append.value = "x";
    EXPECT_EQ(h.send(append), "ms YSBiDQoAf/8= 1 b MA\r\nx\r\n");
    EXPECT_EQ(h.send(keyed(OpCode::del, nasty)), "md YSBiDQoAf/8= b\r\n");
    Request incr = keyed(OpCode::incr, nasty);
    incr.delta = 2;
    EXPECT_EQ(h.send(incr), "ma YSBiDQoAf/8= b D2 v\r\n");
    Request touch = keyed(OpCode::touch, nasty);
    touch.exptime = 30;
    EXPECT_EQ(h.send(touch), "mg YSBiDQoAf/8= b T30\r\n");

    Request mg = keyed(OpCode::meta_get, nasty);
    mg.meta.recache_ttl = 5;
    EXPECT_EQ(h.send(mg), "mg YSBiDQoAf/8= b v c f R5\r\n");
    Request ms = keyed(OpCode::meta_set, nasty);
    ms.value = "v";
    ms.meta.invalidate = true;
    EXPECT_EQ(h.send(ms), "ms YSBiDQoAf/8= 1 b I\r\nv\r\n");
    Request md = keyed(OpCode::meta_delete, nasty);
    md.meta.invalidate = true;
    EXPECT_EQ(h.send(md), "md YSBiDQoAf/8= b I\r\n");

    // A quiet delete carries its opaque as usual.
    Request quiet = keyed(OpCode::del, nasty);
    quiet.quiet = true;
    EXPECT_EQ(h.send(quiet), "md YSBiDQoAf/8= b q O0\r\n");
}

TEST(MetaDriverBinaryKeys, KeysOfEveryByteValueAreAcceptedUpTo186Bytes) {
    BinaryKeyHarness h;
    for (int b = 0; b < 256; ++b) {
        const std::string key(1, static_cast<char>(b));
        Request del = keyed(OpCode::del, key);
        ASSERT_EQ(h.send(del), "md " + b64(key) + " b\r\n") << b;
    }
    const std::string longest(186, '\x80');
    EXPECT_EQ(h.send(keyed(OpCode::del, longest)), "md " + b64(longest) + " b\r\n");
    EXPECT_EQ(b64(longest).size(), 248u);  // under memcached's 250 once encoded
    h.inflight = {};

    // Too long (187 raw bytes encode to 252) or empty: refused, nothing written or queued.
    const std::string too_long(187, 'k');
    for (OpCode code : {OpCode::get, OpCode::set, OpCode::del, OpCode::incr, OpCode::touch,
                        OpCode::meta_get, OpCode::meta_set, OpCode::meta_delete}) {
        Request r = keyed(code, too_long);
        std::string_view one = too_long;
        r.keys = {&one, 1};
        EXPECT_EQ(h.submit(r), errc::invalid_key) << int(code);
        r.key = {};
        std::string_view none;
        r.keys = {&none, 1};
        EXPECT_EQ(h.submit(r), errc::invalid_key) << int(code);
    }
    Retrieval multi(OpCode::get, {"fine", too_long});
    EXPECT_EQ(h.submit(multi.r), errc::invalid_key);
    EXPECT_TRUE(h.out.empty());  // all or nothing: the first key's mg is taken back
    EXPECT_TRUE(h.inflight.empty());
}

TEST(MetaDriverBinaryKeys, MultiGetIsOneMgPerKeyAndHitsComeBackUnderTheRawKey) {
    BinaryKeyHarness h;
    const std::string nul("\0", 1);
    Retrieval multi(OpCode::get, {nasty, "plain", nul});  // not all text keys: mg per key
    EXPECT_EQ(h.send(multi.r, 1),
              "mg YSBiDQoAf/8= b v k f q O0\r\nmg cGxhaW4= b v k f q O1\r\n"
              "mg AA== b v k f q O2\r\nmn\r\n");
    // memcached returns the key of an item stored with a binary key in base64 (with b), and
    // the key of one stored as text as it is: both reach the operation as raw bytes.
    ASSERT_FALSE(
        h.feed("VA 1 f2 kAA== b O2\r\nz\r\nVA 2 kplain O1\r\nok\r\n"
               "VA 3 kYSBiDQoAf/8= b O0\r\nyes\r\nMN\r\n"));
    EXPECT_EQ(h.op.events,
              (std::vector<Event>{value_event(1, 2, nul, "z", 2), value_event(1, 1, "plain", "ok"),
                                  value_event(1, 0, nasty, "yes"), done_event(1)}));

    Retrieval gets(OpCode::gets, {nasty, "x"});
    EXPECT_EQ(h.send(gets.r, 2),
              "mg YSBiDQoAf/8= b v k c f q O0\r\nmg eA== b v k c f q O1\r\nmn\r\n");
    ASSERT_FALSE(h.feed("VA 1 c9 keA== b O1\r\nX\r\nMN\r\n"));
    EXPECT_EQ(h.op.events[h.op.events.size() - 2], value_event(2, 1, "x", "X", 0, 9));
    EXPECT_EQ(h.op.events.back(), done_event(2));
}

TEST(MetaDriverBinaryKeys, AMultiGetOfTextKeysKeepsTheClassicLine) {
    // Valid text keys name the same items with or without b, and the classic VALUE line names
    // a key by its raw bytes: such a multi-get keeps the one line memcached answers whole.
    BinaryKeyHarness h;
    Retrieval multi(OpCode::get, {"a", "b", "c"});
    EXPECT_EQ(h.send(multi.r, 1), "get a b c\r\n");
    ASSERT_FALSE(h.feed("VALUE c 0 1\r\n3\r\nVALUE a 5 1\r\n1\r\nEND\r\n"));
    const std::uint32_t keyed = folsom::detail::Operation::unknown_position;
    EXPECT_EQ(h.op.events, (std::vector<Event>{value_event(1, keyed, "c", "3"),
                                               value_event(1, keyed, "a", "1", 5), done_event(1)}));
    Retrieval gets(OpCode::gets, {"a", "b"});
    EXPECT_EQ(h.send(gets.r, 2), "gets a b\r\n");
    ASSERT_FALSE(h.feed("VALUE b 0 1 77\r\nB\r\nEND\r\n"));
    EXPECT_EQ(h.op.events.back(), done_event(2));
    // One key the line cannot carry sends the whole part as mg per key; the next part of text
    // keys is a classic line again, each decoded by its own decoder.
    Retrieval mixed(OpCode::get, {"a", "b c"});
    EXPECT_EQ(h.send(mixed.r, 3), "mg YQ== b v k f q O0\r\nmg YiBj b v k f q O1\r\nmn\r\n");
    EXPECT_EQ(h.send(multi.r, 4), "get a b c\r\n");
    ASSERT_FALSE(h.feed("VA 1 kYiBj b O1\r\nx\r\nMN\r\nVALUE b 0 1\r\ny\r\nEND\r\n"));
    const std::size_t n = h.op.events.size();
    ASSERT_GE(n, 4u);
    EXPECT_EQ(h.op.events[n - 4], value_event(3, 1, "b c", "x"));
    EXPECT_EQ(h.op.events[n - 3], done_event(3));
    EXPECT_EQ(h.op.events[n - 2], value_event(4, keyed, "b", "y"));
    EXPECT_EQ(h.op.events[n - 1], done_event(4));
    // gat/gats keep their mg form, text keys or not.
    Retrieval gat(OpCode::gat, {"a", "b"}, 60);
    EXPECT_EQ(h.send(gat.r, 5), "mg YQ== b v k f q O0 T60\r\nmg Yg== b v k f q O1 T60\r\nmn\r\n");
}

TEST(MetaDriverBinaryKeys, AReturnedKeyThatIsNotBase64IsOutOfStep) {
    for (const char* reply : {"VA 1 k!!!! b O0\r\nz\r\n", "VA 1 kAA= b O0\r\nz\r\n"}) {
        BinaryKeyHarness h;
        Retrieval multi(OpCode::get, {"a", nasty});
        h.send(multi.r);
        EXPECT_EQ(h.feed(reply), errc::protocol_error) << reply;
    }
    // Longer than the encoding of any key a client may send.
    BinaryKeyHarness h;
    Retrieval multi(OpCode::get, {"a", nasty});
    h.send(multi.r);
    EXPECT_EQ(h.feed("VA 1 k" + b64(std::string(189, 'k')) + " b O0\r\nz\r\n"),
              errc::protocol_error);
}

TEST(MetaDriverBinaryKeys, QuietStoresCountTheEncodedKey) {
    // The quiet form is kept for stores too small to draw "object too large": the key counts
    // as sent (186 raw bytes are 248 on the wire).
    detail::MetaDriver driver(binary_key_options());
    Request r = keyed(OpCode::set, std::string(186, 'k'));
    r.quiet = true;
    const std::string value(300, 'v');  // 186 + 300 < 512, but 248 + 300 is not
    r.value = value;
    EXPECT_FALSE(driver.sends_quietly(r));
    r.value = std::string_view(value).substr(0, 200);
    EXPECT_TRUE(driver.sends_quietly(r));
}

}  // namespace
