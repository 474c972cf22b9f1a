#include "folsom/protocol/binary_encoder.hpp"

#include "folsom/error.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace {

using namespace folsom::protocol;
using namespace folsom::protocol::binary;
using folsom::errc;

// Bytes as "80 00 00 05 ...", so a mismatch shows which byte differs.
std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (!s.empty()) s += ' ';
        s += digits[u >> 4];
        s += digits[u & 0xf];
    }
    return s;
}

// The expected packet written as in the spec's figures: hex bytes, any whitespace, and 'c'
// characters in single quotes for readability. Normalised to hex() form.
std::string packet(std::string_view figure) {
    std::string bytes;
    for (std::size_t i = 0; i < figure.size();) {
        const char c = figure[i];
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (c == '\'') {  // 'text' -> its bytes
            const auto end = figure.find('\'', i + 1);
            bytes.append(figure.substr(i + 1, end - i - 1));
            i = end + 1;
        } else {
            bytes += static_cast<char>(std::stoi(std::string(figure.substr(i, 2)), nullptr, 16));
            i += 2;
        }
    }
    return hex(bytes);
}

std::string encoded(const OutputBuffer& out) {
    return hex(out.contiguous());
}

// ---- the example packets of memcached's doc/protocol-binary.xml ---------------------------

TEST(BinaryEncoder, SpecExampleGet) {
    OutputBuffer out;
    ASSERT_FALSE(encode_get(out, GetCommand::get, "Hello"));
    EXPECT_EQ(encoded(out), packet("80 00 00 05  00 00 00 00  00 00 00 05  00 00 00 00"
                                   "00 00 00 00 00 00 00 00  'Hello'"));
    EXPECT_EQ(out.size(), 29u);
}

TEST(BinaryEncoder, SpecExampleAdd) {
    OutputBuffer out;
    ASSERT_FALSE(encode_store(out, StoreCommand::add, "Hello", "World", 0xdeadbeef, 0xe10));
    EXPECT_EQ(encoded(out), packet("80 02 00 05  08 00 00 00  00 00 00 12  00 00 00 00"
                                   "00 00 00 00 00 00 00 00  de ad be ef  00 00 0e 10"
                                   "'Hello' 'World'"));
    EXPECT_EQ(out.size(), 42u);
}

TEST(BinaryEncoder, SpecExampleDelete) {
    OutputBuffer out;
    ASSERT_FALSE(encode_delete(out, "Hello"));
    EXPECT_EQ(encoded(out), packet("80 04 00 05  00 00 00 00  00 00 00 05  00 00 00 00"
                                   "00 00 00 00 00 00 00 00  'Hello'"));
}

TEST(BinaryEncoder, SpecExampleIncrement) {
    OutputBuffer out;
    ASSERT_FALSE(encode_arith(out, ArithCommand::increment, "counter", 1, 0, 0xe10));
    EXPECT_EQ(encoded(out), packet("80 05 00 07  14 00 00 00  00 00 00 1b  00 00 00 00"
                                   "00 00 00 00 00 00 00 00"
                                   "00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 00"
                                   "00 00 0e 10  'counter'"));
    EXPECT_EQ(out.size(), 51u);
}

TEST(BinaryEncoder, SpecExampleQuit) {
    OutputBuffer out;
    ASSERT_FALSE(encode_quit(out));
    EXPECT_EQ(encoded(out), packet("80 07 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
                                   "00 00 00 00 00 00 00 00"));
}

TEST(BinaryEncoder, SpecExampleFlushWithDelay) {
    OutputBuffer out;
    ASSERT_FALSE(encode_flush(out, 0xe10));
    EXPECT_EQ(encoded(out), packet("80 08 00 00  04 00 00 00  00 00 00 04  00 00 00 00"
                                   "00 00 00 00 00 00 00 00  00 00 0e 10"));
}

TEST(BinaryEncoder, SpecExampleNoop) {
    OutputBuffer out;
    ASSERT_FALSE(encode_noop(out));
    EXPECT_EQ(encoded(out), packet("80 0a 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
                                   "00 00 00 00 00 00 00 00"));
}

TEST(BinaryEncoder, SpecExampleVersion) {
    OutputBuffer out;
    ASSERT_FALSE(encode_version(out));
    EXPECT_EQ(encoded(out), packet("80 0b 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
                                   "00 00 00 00 00 00 00 00"));
}

TEST(BinaryEncoder, SpecExampleAppend) {
    OutputBuffer out;
    ASSERT_FALSE(encode_concat(out, ConcatCommand::append, "Hello", "!"));
    EXPECT_EQ(encoded(out), packet("80 0e 00 05  00 00 00 00  00 00 00 06  00 00 00 00"
                                   "00 00 00 00 00 00 00 00  'Hello' '!'"));
}

TEST(BinaryEncoder, SpecExampleStat) {
    OutputBuffer out;
    ASSERT_FALSE(encode_stat(out));
    EXPECT_EQ(encoded(out), packet("80 10 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
                                   "00 00 00 00 00 00 00 00"));
}

// ---- every other command, with opaque and cas in every position they can take -------------

// Opaque and cas values whose bytes all differ, so a byte-order slip cannot go unseen.
constexpr std::uint32_t opq = 0x01020304;
constexpr std::uint64_t cas = 0x1112131415161718;
constexpr std::string_view opq_hex = "01 02 03 04";
constexpr std::string_view cas_hex = "11 12 13 14 15 16 17 18";

std::string header(std::string_view start, bool with_cas = false) {
    // `start` = magic, opcode, key length, extras length, data type, vbucket, body length.
    return std::string(start) + " " + std::string(opq_hex) + " " +
           std::string(with_cas ? cas_hex : "00 00 00 00 00 00 00 00");
}

TEST(BinaryEncoder, GetVariants) {
    const std::pair<GetCommand, std::string> cases[] = {{GetCommand::get, "00"},
                                                        {GetCommand::getq, "09"},
                                                        {GetCommand::getk, "0c"},
                                                        {GetCommand::getkq, "0d"}};
    for (const auto& [cmd, op] : cases) {
        OutputBuffer out;
        ASSERT_FALSE(encode_get(out, cmd, "k1", opq));
        EXPECT_EQ(encoded(out),
                  packet(header("80 " + op + " 00 02 00 00 00 00 00 00 00 02") + " 'k1'"))
            << op;
    }
}

TEST(BinaryEncoder, GetAndTouchVariants) {
    const std::pair<GatCommand, std::string> cases[] = {{GatCommand::gat, "1d"},
                                                        {GatCommand::gatq, "1e"},
                                                        {GatCommand::gatk, "23"},
                                                        {GatCommand::gatkq, "24"}};
    for (const auto& [cmd, op] : cases) {
        OutputBuffer out;
        ASSERT_FALSE(encode_gat(out, cmd, "k1", 0x0a0b0c0d, opq));
        EXPECT_EQ(encoded(out), packet(header("80 " + op + " 00 02 04 00 00 00 00 00 00 06") +
                                       " 0a 0b 0c 0d 'k1'"))
            << op;
    }
}

TEST(BinaryEncoder, StoreVariantsWithCasAndQuiet) {
    const struct {
        StoreCommand cmd;
        bool quiet;
        std::string op;
    } cases[] = {{StoreCommand::set, false, "01"},     {StoreCommand::add, false, "02"},
                 {StoreCommand::replace, false, "03"}, {StoreCommand::set, true, "11"},
                 {StoreCommand::add, true, "12"},      {StoreCommand::replace, true, "13"}};
    for (const auto& c : cases) {
        OutputBuffer out;
        ASSERT_FALSE(
            encode_store(out, c.cmd, "k", "val", 0xa1a2a3a4, 0xb1b2b3b4, cas, c.quiet, opq));
        EXPECT_EQ(encoded(out),
                  packet(header("80 " + c.op + " 00 01 08 00 00 00 00 00 00 0c", true) +
                         " a1 a2 a3 a4 b1 b2 b3 b4 'k' 'val'"))
            << c.op;
    }
}

TEST(BinaryEncoder, StoreOfAnEmptyValue) {
    OutputBuffer out;
    ASSERT_FALSE(encode_store(out, StoreCommand::set, "k", "", 0, 0));
    EXPECT_EQ(encoded(out), packet("80 01 00 01 08 00 00 00 00 00 00 09 00 00 00 00"
                                   "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 'k'"));
}

TEST(BinaryEncoder, ConcatVariantsWithCasAndQuiet) {
    const struct {
        ConcatCommand cmd;
        bool quiet;
        std::string op;
    } cases[] = {{ConcatCommand::append, false, "0e"},
                 {ConcatCommand::prepend, false, "0f"},
                 {ConcatCommand::append, true, "19"},
                 {ConcatCommand::prepend, true, "1a"}};
    for (const auto& c : cases) {
        OutputBuffer out;
        ASSERT_FALSE(encode_concat(out, c.cmd, "k", "xy", cas, c.quiet, opq));
        EXPECT_EQ(
            encoded(out),
            packet(header("80 " + c.op + " 00 01 00 00 00 00 00 00 00 03", true) + " 'k' 'xy'"))
            << c.op;
    }
}

TEST(BinaryEncoder, DeleteWithCasAndQuiet) {
    OutputBuffer out;
    ASSERT_FALSE(encode_delete(out, "key", cas, false, opq));
    EXPECT_EQ(encoded(out), packet(header("80 04 00 03 00 00 00 00 00 00 00 03", true) + " 'key'"));
    out.clear();
    ASSERT_FALSE(encode_delete(out, "key", 0, true, opq));
    EXPECT_EQ(encoded(out), packet(header("80 14 00 03 00 00 00 00 00 00 00 03") + " 'key'"));
}

TEST(BinaryEncoder, ArithmeticVariants) {
    const struct {
        ArithCommand cmd;
        bool quiet;
        std::string op;
    } cases[] = {{ArithCommand::increment, false, "05"},
                 {ArithCommand::decrement, false, "06"},
                 {ArithCommand::increment, true, "15"},
                 {ArithCommand::decrement, true, "16"}};
    for (const auto& c : cases) {
        OutputBuffer out;
        ASSERT_FALSE(encode_arith(out, c.cmd, "n", 0x0102030405060708, 0xf1f2f3f4f5f6f7f8,
                                  no_auto_create, cas, c.quiet, opq));
        EXPECT_EQ(encoded(out),
                  packet(header("80 " + c.op + " 00 01 14 00 00 00 00 00 00 15", true) +
                         " 01 02 03 04 05 06 07 08 f1 f2 f3 f4 f5 f6 f7 f8 ff ff ff ff 'n'"))
            << c.op;
    }
}

TEST(BinaryEncoder, Touch) {
    OutputBuffer out;
    ASSERT_FALSE(encode_touch(out, "k", 300, opq));
    EXPECT_EQ(encoded(out),
              packet(header("80 1c 00 01 04 00 00 00 00 00 00 05") + " 00 00 01 2c 'k'"));
}

TEST(BinaryEncoder, NoopVersionCarryOpaque) {
    OutputBuffer out;
    ASSERT_FALSE(encode_noop(out, opq));
    ASSERT_FALSE(encode_version(out, opq));
    EXPECT_EQ(encoded(out), packet(header("80 0a 00 00 00 00 00 00 00 00 00 00") + " " +
                                   header("80 0b 00 00 00 00 00 00 00 00 00 00")));
}

TEST(BinaryEncoder, FlushVariants) {
    OutputBuffer out;
    ASSERT_FALSE(encode_flush(out, std::nullopt, false, opq));
    EXPECT_EQ(encoded(out), packet(header("80 08 00 00 00 00 00 00 00 00 00 00")));
    out.clear();
    ASSERT_FALSE(encode_flush(out, std::nullopt, true, opq));
    EXPECT_EQ(encoded(out), packet(header("80 18 00 00 00 00 00 00 00 00 00 00")));
    out.clear();
    ASSERT_FALSE(encode_flush(out, 0u, true, opq));  // delay 0 is sent, not omitted
    EXPECT_EQ(encoded(out), packet(header("80 18 00 00 04 00 00 00 00 00 00 04") + " 00 00 00 00"));
}

TEST(BinaryEncoder, StatWithGroup) {
    OutputBuffer out;
    ASSERT_FALSE(encode_stat(out, "items", opq));
    EXPECT_EQ(encoded(out), packet(header("80 10 00 05 00 00 00 00 00 00 00 05") + " 'items'"));
}

TEST(BinaryEncoder, Verbosity) {
    OutputBuffer out;
    ASSERT_FALSE(encode_verbosity(out, 2, opq));
    EXPECT_EQ(encoded(out), packet(header("80 1b 00 00 04 00 00 00 00 00 00 04") + " 00 00 00 02"));
}

TEST(BinaryEncoder, QuitQuiet) {
    OutputBuffer out;
    ASSERT_FALSE(encode_quit(out, true, opq));
    EXPECT_EQ(encoded(out), packet(header("80 17 00 00 00 00 00 00 00 00 00 00")));
}

TEST(BinaryEncoder, SaslListMechs) {
    OutputBuffer out;
    ASSERT_FALSE(encode_sasl_list_mechs(out, opq));
    EXPECT_EQ(encoded(out), packet(header("80 20 00 00 00 00 00 00 00 00 00 00")));
}

TEST(BinaryEncoder, SaslAuthPlain) {
    OutputBuffer out;
    ASSERT_FALSE(encode_sasl_auth_plain(out, "user", "pw", opq));
    // key "PLAIN" (5), value "\0user\0pw" (8): body 13.
    EXPECT_EQ(encoded(out),
              packet(header("80 21 00 05 00 00 00 00 00 00 00 0d") + " 'PLAIN' 00 'user' 00 'pw'"));
    // The generic form with the same message gives the same bytes.
    OutputBuffer generic;
    using namespace std::string_view_literals;
    ASSERT_FALSE(encode_sasl_auth(generic, "PLAIN", "\0user\0pw"sv, opq));
    EXPECT_EQ(encoded(generic), encoded(out));
}

TEST(BinaryEncoder, SaslStep) {
    OutputBuffer out;
    ASSERT_FALSE(encode_sasl_step(out, "CRAM-MD5", "resp", opq));
    EXPECT_EQ(encoded(out),
              packet(header("80 22 00 08 00 00 00 00 00 00 00 0c") + " 'CRAM-MD5' 'resp'"));
}

// ---- keys -----------------------------------------------------------------------------------

TEST(BinaryEncoder, KeysMayHoldAnyByte) {
    using namespace std::string_view_literals;
    const auto key = "a b\r\nset x 0 0 1\r\n\0\x7f\xff"sv;
    OutputBuffer out;
    ASSERT_FALSE(encode_get(out, GetCommand::get, key));
    const std::string bytes = out.contiguous();
    ASSERT_EQ(bytes.size(), header_size + key.size());
    EXPECT_EQ(std::string_view(bytes).substr(header_size), key);
    EXPECT_EQ(static_cast<unsigned char>(bytes[3]), key.size());
}

TEST(BinaryEncoder, KeyOf250BytesIsAcceptedAnd251Refused) {
    OutputBuffer out;
    EXPECT_FALSE(encode_get(out, GetCommand::get, std::string(250, 'k')));
    EXPECT_EQ(out.size(), header_size + 250);
    out.clear();
    EXPECT_EQ(encode_get(out, GetCommand::get, std::string(251, 'k')), errc::invalid_key);
    EXPECT_TRUE(out.empty());
}

// Every request that takes a key refuses an empty or over-long one and appends nothing.
TEST(BinaryEncoder, BadKeysAreRefusedByEveryKeyedRequest) {
    for (const std::string& key : {std::string(), std::string(251, 'k')}) {
        OutputBuffer out;
        out.append("prefix");  // a refused request must not disturb what is already there
        EXPECT_EQ(encode_get(out, GetCommand::getkq, key), errc::invalid_key);
        EXPECT_EQ(encode_gat(out, GatCommand::gat, key, 1), errc::invalid_key);
        EXPECT_EQ(encode_store(out, StoreCommand::set, key, "v", 0, 0), errc::invalid_key);
        EXPECT_EQ(encode_concat(out, ConcatCommand::append, key, "v"), errc::invalid_key);
        EXPECT_EQ(encode_delete(out, key), errc::invalid_key);
        EXPECT_EQ(encode_arith(out, ArithCommand::increment, key, 1, 0, 0), errc::invalid_key);
        EXPECT_EQ(encode_touch(out, key, 1), errc::invalid_key);
        EXPECT_EQ(out.contiguous(), "prefix");
        EXPECT_EQ(validate_binary_key(key), errc::invalid_key);
    }
}

TEST(BinaryEncoder, StatGroupAndSaslNamesAreBounded) {
    OutputBuffer out;
    EXPECT_EQ(encode_stat(out, std::string(251, 'g')), errc::invalid_argument);
    EXPECT_EQ(encode_sasl_auth(out, "", "x"), errc::invalid_argument);
    EXPECT_EQ(encode_sasl_step(out, std::string(251, 'M'), "x"), errc::invalid_argument);
    using namespace std::string_view_literals;
    EXPECT_EQ(encode_sasl_auth_plain(out, "us\0er"sv, "pw"), errc::invalid_argument);
    EXPECT_EQ(encode_sasl_auth_plain(out, "user", "p\0w"sv), errc::invalid_argument);
    EXPECT_TRUE(out.empty());
}

// ---- values ---------------------------------------------------------------------------------

TEST(BinaryEncoder, ValueOverTheLimitIsRefused) {
    Limits limits;
    limits.max_value_size = 10;
    const std::string ok(10, 'v'), big(11, 'v');
    OutputBuffer out;
    EXPECT_EQ(encode_store(out, StoreCommand::set, "k", big, 0, 0, 0, false, 0, limits),
              errc::value_too_large);
    EXPECT_EQ(encode_concat(out, ConcatCommand::prepend, "k", big, 0, false, 0, limits),
              errc::value_too_large);
    EXPECT_EQ(encode_sasl_auth(out, "PLAIN", big, 0, limits), errc::value_too_large);
    EXPECT_EQ(encode_sasl_step(out, "PLAIN", big, 0, limits), errc::value_too_large);
    EXPECT_EQ(encode_sasl_auth_plain(out, "user", "passwo", 0, limits),  // 1+4+1+6 = 12
              errc::value_too_large);
    EXPECT_TRUE(out.empty());
    EXPECT_FALSE(encode_store(out, StoreCommand::set, "k", ok, 0, 0, 0, false, 0, limits));
    EXPECT_FALSE(encode_concat(out, ConcatCommand::append, "k", ok, 0, false, 0, limits));
}

TEST(BinaryEncoder, LargeValuesAreReferencedNotCopied) {
    const std::string value(1000, 'v');
    OutputBuffer out;
    ASSERT_FALSE(encode_store(out, StoreCommand::set, "k", value, 7, 0, 0, false, 0, {},
                              /*ref_threshold=*/1000));
    EXPECT_EQ(out.ref_count(), 1u);
    EXPECT_EQ(out.arena_size(), header_size + 8 + 1);
    EXPECT_EQ(out.size(), header_size + 8 + 1 + value.size());
    bool saw_value = false;
    out.for_each_segment([&](OutputBuffer::Segment s) {
        if (s.data == value.data() && s.size == value.size()) saw_value = true;
    });
    EXPECT_TRUE(saw_value);
    // The flattened bytes are the same as a copied encoding.
    OutputBuffer copied;
    ASSERT_FALSE(encode_store(copied, StoreCommand::set, "k", value, 7, 0));
    EXPECT_EQ(copied.ref_count(), 0u);
    EXPECT_EQ(out.contiguous(), copied.contiguous());

    out.clear();
    ASSERT_FALSE(encode_concat(out, ConcatCommand::append, "k", value, 0, false, 0, {}, 1000));
    EXPECT_EQ(out.ref_count(), 1u);
}

TEST(BinaryEncoder, RequestsAppendBackToBack) {
    OutputBuffer out;
    ASSERT_FALSE(encode_get(out, GetCommand::getkq, "a", 1));
    ASSERT_FALSE(encode_get(out, GetCommand::getkq, "b", 2));
    ASSERT_FALSE(encode_noop(out, 3));
    EXPECT_EQ(out.size(), 3 * header_size + 2);
    const std::string bytes = out.contiguous();
    EXPECT_EQ(bytes[header_size + 1], '\x80');  // the second request starts right after "a"
}

}  // namespace
