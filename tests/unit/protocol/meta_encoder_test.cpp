#include "folsom/protocol/meta_encoder.hpp"

#include "folsom/error.hpp"
#include "folsom/protocol/base64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace folsom::protocol::meta {
namespace {

std::string bytes(const OutputBuffer& out) {
    return out.contiguous();
}

template <class Encode>
std::string encoded(Encode&& encode) {
    OutputBuffer out;
    EXPECT_FALSE(encode(out));
    return bytes(out);
}

// ---- mg -------------------------------------------------------------------------------------

TEST(MetaEncoder, GetWithoutFlags) {
    EXPECT_EQ(encoded([](auto& o) { return encode_get(o, "foo"); }), "mg foo\r\n");
}

TEST(MetaEncoder, GetEachFlagAlone) {
    const auto one = [](auto set) {
        GetFlags f;
        set(f);
        return encoded([&](auto& o) { return encode_get(o, "k", f); });
    };
    EXPECT_EQ(one([](GetFlags& f) { f.value = true; }), "mg k v\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.key = true; }), "mg k k\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.cas = true; }), "mg k c\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.client_flags = true; }), "mg k f\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.ttl = true; }), "mg k t\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.size = true; }), "mg k s\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.hit_before = true; }), "mg k h\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.last_access = true; }), "mg k l\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.no_bump = true; }), "mg k u\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.quiet = true; }), "mg k q\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.opaque = "42"; }), "mg k O42\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.touch_ttl = 30; }), "mg k T30\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.touch_ttl = 0; }), "mg k T0\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.vivify_ttl = 60; }), "mg k N60\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.recache_ttl = 5; }), "mg k R5\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.new_cas = 18446744073709551615ull; }),
              "mg k E18446744073709551615\r\n");
    EXPECT_EQ(one([](GetFlags& f) { f.base64_key = true; }), "mg aw== b\r\n");
}

TEST(MetaEncoder, GetAllFlagsInFixedOrder) {
    GetFlags f;
    f.base64_key = f.value = f.key = f.cas = f.client_flags = f.ttl = f.size = true;
    f.hit_before = f.last_access = f.no_bump = f.quiet = true;
    f.opaque = "op";
    f.touch_ttl = 1;
    f.vivify_ttl = 2;
    f.recache_ttl = 3;
    f.new_cas = 4;
    EXPECT_EQ(encoded([&](auto& o) { return encode_get(o, "foo", f); }),
              "mg Zm9v b v k c f t s h l u q Oop T1 N2 R3 E4\r\n");
}

// ---- ms -------------------------------------------------------------------------------------

TEST(MetaEncoder, SetPlain) {
    EXPECT_EQ(encoded([](auto& o) { return encode_set(o, "foo", "bar"); }), "ms foo 3\r\nbar\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_set(o, "foo", ""); }), "ms foo 0\r\n\r\n");
}

TEST(MetaEncoder, SetModes) {
    const auto mode = [](SetMode m) {
        SetFlags f;
        f.mode = m;
        return encoded([&](auto& o) { return encode_set(o, "k", "v", f); });
    };
    EXPECT_EQ(mode(SetMode::set), "ms k 1\r\nv\r\n");  // the default is not written
    EXPECT_EQ(mode(SetMode::add), "ms k 1 ME\r\nv\r\n");
    EXPECT_EQ(mode(SetMode::replace), "ms k 1 MR\r\nv\r\n");
    EXPECT_EQ(mode(SetMode::append), "ms k 1 MA\r\nv\r\n");
    EXPECT_EQ(mode(SetMode::prepend), "ms k 1 MP\r\nv\r\n");
}

TEST(MetaEncoder, SetEachFlagAlone) {
    const auto one = [](auto set) {
        SetFlags f;
        set(f);
        return encoded([&](auto& o) { return encode_set(o, "k", "xy", f); });
    };
    EXPECT_EQ(one([](SetFlags& f) { f.client_flags = 4294967295u; }),
              "ms k 2 F4294967295\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.client_flags = 0; }), "ms k 2\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.ttl = 0; }), "ms k 2 T0\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.ttl = 3600; }), "ms k 2 T3600\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.compare_cas = 99; }), "ms k 2 C99\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.new_cas = 7; }), "ms k 2 E7\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.invalidate = true; }), "ms k 2 I\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.return_key = true; }), "ms k 2 k\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.return_cas = true; }), "ms k 2 c\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.quiet = true; }), "ms k 2 q\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.opaque = "abc"; }), "ms k 2 Oabc\r\nxy\r\n");
    EXPECT_EQ(one([](SetFlags& f) { f.base64_key = true; }), "ms aw== 2 b\r\nxy\r\n");
}

TEST(MetaEncoder, SetAllFlagsInFixedOrder) {
    SetFlags f;
    f.base64_key = true;
    f.mode = SetMode::append;
    f.client_flags = 5;
    f.ttl = 6;
    f.compare_cas = 7;
    f.new_cas = 8;
    f.invalidate = f.return_key = f.return_cas = f.quiet = true;
    f.opaque = "9";
    EXPECT_EQ(encoded([&](auto& o) { return encode_set(o, "foo", "data", f); }),
              "ms Zm9v 4 b MA F5 T6 C7 E8 I k c q O9\r\ndata\r\n");
}

TEST(MetaEncoder, SetValueWithCrlfInsideIsLengthFramed) {
    EXPECT_EQ(encoded([](auto& o) { return encode_set(o, "k", "a\r\nmn\r\n"); }),
              "ms k 7\r\na\r\nmn\r\n\r\n");
}

TEST(MetaEncoder, LargeValueIsReferencedNotCopied) {
    const std::string big(100, 'x');
    OutputBuffer out;
    ASSERT_FALSE(encode_set(out, "k", big, {}, {}, /*ref_threshold=*/64));
    EXPECT_EQ(out.ref_count(), 1u);
    EXPECT_EQ(out.arena_size(), std::string("ms k 100\r\n\r\n").size());
    EXPECT_EQ(out.contiguous(), "ms k 100\r\n" + big + "\r\n");
    bool saw_original = false;
    out.for_each_segment([&](OutputBuffer::Segment s) { saw_original |= s.data == big.data(); });
    EXPECT_TRUE(saw_original);
}

TEST(MetaEncoder, ValueOverLimitRefused) {
    Limits limits;
    limits.max_value_size = 4;
    OutputBuffer out;
    EXPECT_FALSE(encode_set(out, "k", "1234", {}, limits));
    out.clear();
    EXPECT_EQ(encode_set(out, "k", "12345", {}, limits), errc::value_too_large);
    EXPECT_TRUE(out.empty());
}

// ---- md -------------------------------------------------------------------------------------

TEST(MetaEncoder, DeleteFlags) {
    const auto one = [](auto set) {
        DeleteFlags f;
        set(f);
        return encoded([&](auto& o) { return encode_delete(o, "k", f); });
    };
    EXPECT_EQ(one([](DeleteFlags&) {}), "md k\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.quiet = true; }), "md k q\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.opaque = "1"; }), "md k O1\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.base64_key = true; }), "md aw== b\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.compare_cas = 12; }), "md k C12\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.new_cas = 13; }), "md k E13\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.invalidate = true; }), "md k I\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.ttl = 30; }), "md k T30\r\n");
    EXPECT_EQ(one([](DeleteFlags& f) { f.return_key = true; }), "md k k\r\n");
    DeleteFlags all;
    all.base64_key = all.invalidate = all.return_key = all.quiet = true;
    all.compare_cas = 1;
    all.new_cas = 2;
    all.ttl = 3;
    all.opaque = "x";
    EXPECT_EQ(encoded([&](auto& o) { return encode_delete(o, "foo", all); }),
              "md Zm9v b C1 E2 I T3 k q Ox\r\n");
}

// ---- ma -------------------------------------------------------------------------------------

TEST(MetaEncoder, ArithFlags) {
    const auto one = [](auto set) {
        ArithFlags f;
        set(f);
        return encoded([&](auto& o) { return encode_arith(o, "n", f); });
    };
    EXPECT_EQ(one([](ArithFlags&) {}), "ma n\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.mode = ArithMode::increment; }), "ma n\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.mode = ArithMode::decrement; }), "ma n MD\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.delta = 18446744073709551615ull; }),
              "ma n D18446744073709551615\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.vivify_ttl = 0; }), "ma n N0\r\n");
    EXPECT_EQ(one([](ArithFlags& f) {
                  f.vivify_ttl = 10;
                  f.initial = 100;
              }),
              "ma n N10 J100\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.ttl = 5; }), "ma n T5\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.compare_cas = 6; }), "ma n C6\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.new_cas = 7; }), "ma n E7\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.return_ttl = true; }), "ma n t\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.return_cas = true; }), "ma n c\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.return_value = true; }), "ma n v\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.return_key = true; }), "ma n k\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.quiet = true; }), "ma n q\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.opaque = "77"; }), "ma n O77\r\n");
    EXPECT_EQ(one([](ArithFlags& f) { f.base64_key = true; }), "ma bg== b\r\n");

    ArithFlags all;
    all.base64_key = true;
    all.mode = ArithMode::decrement;
    all.delta = 1;
    all.vivify_ttl = 2;
    all.initial = 3;
    all.ttl = 4;
    all.compare_cas = 5;
    all.new_cas = 6;
    all.return_ttl = all.return_cas = all.return_value = all.return_key = all.quiet = true;
    all.opaque = "o";
    EXPECT_EQ(encoded([&](auto& o) { return encode_arith(o, "foo", all); }),
              "ma Zm9v b MD D1 N2 J3 T4 C5 E6 t c v k q Oo\r\n");
}

TEST(MetaEncoder, ArithInitialWithoutVivifyRefused) {
    ArithFlags f;
    f.initial = 5;
    OutputBuffer out;
    EXPECT_EQ(encode_arith(out, "n", f), errc::invalid_argument);
    EXPECT_TRUE(out.empty());
}

// ---- mn, me ---------------------------------------------------------------------------------

TEST(MetaEncoder, NoopAndDebug) {
    EXPECT_EQ(encoded([](auto& o) { return encode_noop(o); }), "mn\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_debug(o, "foo"); }), "me foo\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_debug(o, "foo", true); }), "me Zm9v b\r\n");
}

TEST(MetaEncoder, CommandsAppendInSequence) {
    OutputBuffer out;
    GetFlags q;
    q.quiet = q.value = true;
    ASSERT_FALSE(encode_get(out, "a", q));
    ASSERT_FALSE(encode_get(out, "b", q));
    ASSERT_FALSE(encode_noop(out));
    EXPECT_EQ(out.contiguous(), "mg a v q\r\nmg b v q\r\nmn\r\n");
}

// ---- refusals -------------------------------------------------------------------------------

TEST(MetaEncoder, InvalidTextKeysRefusedAndNothingAppended) {
    const std::string too_long(251, 'k');
    for (std::string_view key :
         {std::string_view{}, std::string_view{"a b"}, std::string_view{"a\r\nmn"},
          std::string_view{"tab\t"}, std::string_view{"nul\0x", 5}, std::string_view{"del\x7f"},
          std::string_view{too_long}}) {
        OutputBuffer out;
        out.append("prefix");
        EXPECT_EQ(encode_get(out, key), errc::invalid_key);
        EXPECT_EQ(encode_set(out, key, "v"), errc::invalid_key);
        EXPECT_EQ(encode_delete(out, key), errc::invalid_key);
        EXPECT_EQ(encode_arith(out, key), errc::invalid_key);
        EXPECT_EQ(encode_debug(out, key), errc::invalid_key);
        EXPECT_EQ(out.contiguous(), "prefix");
    }
    OutputBuffer out;
    EXPECT_FALSE(encode_get(out, std::string(250, 'k')));
}

TEST(MetaEncoder, Base64KeyLimits) {
    OutputBuffer out;
    GetFlags b;
    b.base64_key = true;
    EXPECT_EQ(encode_get(out, "", b), errc::invalid_key);
    // 187 bytes encode to 252 characters, over memcached's 250 (confirmed: it answers
    // "CLIENT_ERROR bad command line format").
    EXPECT_EQ(encode_get(out, std::string(max_base64_key_length + 1, '\xff'), b),
              errc::invalid_key);
    EXPECT_TRUE(out.empty());
    ASSERT_FALSE(encode_get(out, std::string(max_base64_key_length, '\xff'), b));
    EXPECT_EQ(out.contiguous().size(), std::string("mg  b\r\n").size() + 248);
}

TEST(MetaEncoder, Base64KeyMayHoldAnyBytesAndRoundTrips) {
    std::string key;
    for (int i = 0; i < 186; ++i)
        key.push_back(static_cast<char>(i * 37 + 11));
    key.replace(0, 6, " \r\nmn ");
    for (std::size_t n = 1; n <= key.size(); ++n) {
        const std::string_view k(key.data(), n);
        GetFlags f;
        f.base64_key = true;
        OutputBuffer out;
        ASSERT_FALSE(encode_get(out, k, f));
        const std::string line = out.contiguous();
        ASSERT_EQ(line.substr(0, 3), "mg ");
        ASSERT_EQ(line.substr(line.size() - 4), " b\r\n");
        const std::string b64 = line.substr(3, line.size() - 7);
        EXPECT_EQ(b64.size(), base64_encoded_size(n));
        EXPECT_EQ(b64.find_first_of(" \r\n"), std::string::npos);
        char decoded[max_base64_key_length];
        std::size_t decoded_size = 0;
        ASSERT_TRUE(base64_decode(b64, decoded, decoded_size));
        EXPECT_EQ(std::string_view(decoded, decoded_size), k);
    }
}

TEST(MetaEncoder, InvalidOpaqueRefused) {
    OutputBuffer out;
    GetFlags f;
    f.opaque = "has space";
    EXPECT_EQ(encode_get(out, "k", f), errc::invalid_argument);
    f.opaque = "a\r\nmn";
    EXPECT_EQ(encode_get(out, "k", f), errc::invalid_argument);
    const std::string long_opaque(max_opaque_length + 1, 'o');
    f.opaque = long_opaque;
    EXPECT_EQ(encode_get(out, "k", f), errc::invalid_argument);
    SetFlags s;
    s.opaque = "x y";
    EXPECT_EQ(encode_set(out, "k", "v", s), errc::invalid_argument);
    DeleteFlags d;
    d.opaque = "x\n";
    EXPECT_EQ(encode_delete(out, "k", d), errc::invalid_argument);
    ArithFlags a;
    a.opaque = "\x01";
    EXPECT_EQ(encode_arith(out, "k", a), errc::invalid_argument);
    EXPECT_TRUE(out.empty());
    f.opaque = std::string_view(long_opaque).substr(1);
    EXPECT_FALSE(encode_get(out, "k", f));
}

}  // namespace
}  // namespace folsom::protocol::meta
