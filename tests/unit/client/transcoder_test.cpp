// Transcoders without a server: every built-in one round-trips and sets the flags documented
// in value_flags.hpp; a user type plugs in through a Transcoder specialisation; Compressed<>
// compresses at and above its threshold only, reads either codec, leaves unflagged values
// alone, and refuses bombs and corrupt data with errc::decode_failed.
#include "folsom/transcoder.hpp"

#include "folsom/compressed.hpp"
#include "folsom/error.hpp"
#include "folsom/value_flags.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Point {
    std::int32_t x = 0;
    std::int32_t y = 0;
    friend bool operator==(const Point&, const Point&) = default;
};

}  // namespace

// A user type: "x,y" as text, with an application flag bit of its own (bit 3).
template <>
struct folsom::Transcoder<Point> {
    static constexpr std::uint32_t flag = 1u << 3;
    static folsom::Encoded encode(const Point& p) {
        return {std::to_string(p.x) + "," + std::to_string(p.y), flag};
    }
    static std::error_code decode(folsom::Encoded&& stored, Point& out) {
        if ((stored.flags & ~folsom::value_flags::string) != flag)
            return folsom::errc::decode_failed;
        const auto comma = stored.data.find(',');
        if (comma == std::string::npos) return folsom::errc::decode_failed;
        try {
            out.x = std::stoi(stored.data.substr(0, comma));
            out.y = std::stoi(stored.data.substr(comma + 1));
        } catch (const std::exception&) {
            return folsom::errc::decode_failed;
        }
        return {};
    }
};

namespace {

using folsom::Codec;
using folsom::Compressed;
using folsom::CompressionOptions;
using folsom::Encoded;
using folsom::errc;
using folsom::Transcoder;
namespace flags = folsom::value_flags;

static_assert(folsom::TranscoderFor<Transcoder<std::string>, std::string>);
static_assert(folsom::TranscoderFor<Transcoder<std::vector<std::byte>>, std::vector<std::byte>>);
static_assert(folsom::TranscoderFor<Transcoder<folsom::Value>, folsom::Value>);
static_assert(folsom::TranscoderFor<Transcoder<Point>, Point>);
static_assert(folsom::TranscoderFor<Compressed<Transcoder<std::string>>, std::string>);
static_assert(folsom::TranscoderFor<Compressed<Transcoder<Point>>, Point>);
static_assert(!folsom::TranscoderFor<Transcoder<std::string>, Point>);

template <class T, class C>
T round_trip(const C& codec, const T& value) {
    T out{};
    EXPECT_FALSE(codec.decode(codec.encode(value), out));
    return out;
}

std::string text(std::size_t n) {
    std::string s;
    while (s.size() < n)
        s += "the quick brown fox jumps over the lazy dog; ";
    s.resize(n);
    return s;
}

TEST(Transcoder, StringIsItsBytesFlaggedAsText) {
    const Transcoder<std::string> t;
    const std::string s("h\xc3\xa9llo\0world", 12);
    const Encoded e = t.encode(s);
    EXPECT_EQ(e.data, s);
    EXPECT_EQ(e.flags, flags::string);
    EXPECT_EQ(round_trip(t, s), s);
    // Values from other clients (flags 0, or their own bits) read as text too.
    std::string out;
    EXPECT_FALSE(t.decode(Encoded{"plain", 0}, out));
    EXPECT_EQ(out, "plain");
    EXPECT_FALSE(t.decode(Encoded{"theirs", 0x2a}, out));
    EXPECT_EQ(out, "theirs");
}

TEST(Transcoder, ByteVectorIsRawWithFlagsZero) {
    const Transcoder<std::vector<std::byte>> t;
    const std::vector<std::byte> b{std::byte{0}, std::byte{0xff}, std::byte{'\r'}, std::byte{'\n'}};
    const Encoded e = t.encode(b);
    EXPECT_EQ(e.data, std::string("\0\xff\r\n", 4));
    EXPECT_EQ(e.flags, 0u);
    EXPECT_EQ(round_trip(t, b), b);
    EXPECT_TRUE(round_trip(t, std::vector<std::byte>{}).empty());
}

TEST(Transcoder, ValueCarriesItsOwnFlags) {
    const Transcoder<folsom::Value> t;
    const folsom::Value v{"bytes", 0x1234, 99};
    const Encoded e = t.encode(v);
    EXPECT_EQ(e.data, "bytes");
    EXPECT_EQ(e.flags, 0x1234u);
    const folsom::Value back = round_trip(t, v);
    EXPECT_EQ(back.data, "bytes");
    EXPECT_EQ(back.flags, 0x1234u);
    EXPECT_EQ(back.cas, 0u);  // the cas is not part of what is stored
}

TEST(Transcoder, UserTypeThroughASpecialisation) {
    const Transcoder<Point> t;
    const Encoded e = t.encode(Point{-3, 42});
    EXPECT_EQ(e.data, "-3,42");
    EXPECT_EQ(e.flags, 1u << 3);
    EXPECT_EQ(round_trip(t, Point{-3, 42}), (Point{-3, 42}));
    Point p;
    EXPECT_EQ(t.decode(Encoded{"nonsense", 1u << 3}, p), errc::decode_failed);
    EXPECT_EQ(t.decode(Encoded{"1,2", 0}, p), errc::decode_failed);  // not written by us
}

TEST(Transcoder, PlainTranscodersRefuseCompressedValues) {
    // Bytes flagged compressed are not the value: say so rather than hand out garbage.
    std::string s;
    EXPECT_EQ(Transcoder<std::string>{}.decode(Encoded{"\x28\xb5\x2f\xfd", flags::zstd}, s),
              errc::decode_failed);
    std::vector<std::byte> b;
    EXPECT_EQ(Transcoder<std::vector<std::byte>>{}.decode(Encoded{"xxxx", flags::lz4}, b),
              errc::decode_failed);
}

std::string codec_name(const ::testing::TestParamInfo<Codec>& p) {
    return p.param == Codec::zstd ? "zstd" : "lz4";
}

class CompressedCodec : public ::testing::TestWithParam<Codec> {
  protected:
    Compressed<Transcoder<std::string>> codec(std::size_t threshold = 1024) const {
        return Compressed<Transcoder<std::string>>(
            CompressionOptions{.codec = GetParam(), .threshold = threshold});
    }
    std::uint32_t codec_flag() const {
        return GetParam() == Codec::zstd ? flags::zstd : flags::lz4;
    }
};

TEST_P(CompressedCodec, AtOrAboveTheThresholdIsCompressedAndFlagged) {
    const auto c = codec(1024);
    for (std::size_t n : {std::size_t{1024}, std::size_t{1025}, std::size_t{200'000}}) {
        SCOPED_TRACE(n);
        const std::string s = text(n);
        const Encoded e = c.encode(s);
        EXPECT_EQ(e.flags, flags::string | codec_flag());
        EXPECT_LT(e.data.size(), s.size());
        EXPECT_EQ(round_trip(c, s), s);
    }
}

TEST_P(CompressedCodec, BelowTheThresholdIsUntouched) {
    const auto c = codec(1024);
    const std::string s = text(1023);
    const Encoded e = c.encode(s);
    EXPECT_EQ(e.flags, flags::string);
    EXPECT_EQ(e.data, s);
    EXPECT_EQ(round_trip(c, s), s);
}

TEST_P(CompressedCodec, IncompressibleValuesAreStoredAsTheyAre) {
    std::string noise(4096, '\0');
    std::uint32_t x = 12345;
    for (char& ch : noise) {
        x = x * 1664525u + 1013904223u;
        ch = static_cast<char>(x >> 24);
    }
    const Encoded e = codec(16).encode(noise);
    EXPECT_EQ(e.flags, flags::string);
    EXPECT_EQ(e.data, noise);
}

TEST_P(CompressedCodec, UnflaggedValuesFromOtherClientsComeBackUntouched) {
    const auto c = codec(16);
    // Long and compressible, but stored without a codec bit: not ours to decompress.
    for (std::uint32_t f : {0u, flags::string, 0x00ffu}) {
        std::string out;
        ASSERT_FALSE(c.decode(Encoded{text(5000), f}, out)) << f;
        EXPECT_EQ(out, text(5000));
    }
    // Raw Values keep the writer's application flags.
    Compressed<Transcoder<folsom::Value>> raw(CompressionOptions{.codec = GetParam()});
    folsom::Value v;
    ASSERT_FALSE(raw.decode(Encoded{"abc", 0x77}, v));
    EXPECT_EQ(v.data, "abc");
    EXPECT_EQ(v.flags, 0x77u);
}

TEST_P(CompressedCodec, ReadsTheOtherCodecToo) {
    const Codec other = GetParam() == Codec::zstd ? Codec::lz4 : Codec::zstd;
    const Compressed<Transcoder<std::string>> writer(
        CompressionOptions{.codec = other, .threshold = 64});
    const std::string s = text(10'000);
    const Encoded e = writer.encode(s);
    ASSERT_NE(e.flags & flags::compression_mask, 0u);
    std::string out;
    ASSERT_FALSE(codec().decode(Encoded{e.data, e.flags}, out));
    EXPECT_EQ(out, s);
}

TEST_P(CompressedCodec, BombOverTheCapIsRefused) {
    // Written with a generous cap, read by a client that allows 64 KiB.
    const Compressed<Transcoder<std::string>> writer(CompressionOptions{
        .codec = GetParam(), .threshold = 64, .max_decompressed_size = 4 * 1024 * 1024});
    const std::string big(3 * 1024 * 1024, 'a');
    Encoded e = writer.encode(big);
    ASSERT_NE(e.flags & codec_flag(), 0u);
    ASSERT_LT(e.data.size(), 64u * 1024);  // tiny on the wire
    const Compressed<Transcoder<std::string>> reader(
        CompressionOptions{.codec = GetParam(), .max_decompressed_size = 64 * 1024});
    std::string out;
    EXPECT_EQ(reader.decode(std::move(e), out), errc::decode_failed);
}

TEST_P(CompressedCodec, ValuesOverTheCapAreWrittenUncompressed) {
    // What would be refused on read is never written compressed.
    const Compressed<Transcoder<std::string>> c(
        CompressionOptions{.codec = GetParam(), .threshold = 16, .max_decompressed_size = 1000});
    const Encoded e = c.encode(text(1001));
    EXPECT_EQ(e.flags, flags::string);
    EXPECT_EQ(round_trip(c, text(1001)), text(1001));
}

TEST_P(CompressedCodec, CorruptDataIsRefused) {
    const auto c = codec(64);
    Encoded e = c.encode(text(20'000));
    ASSERT_NE(e.flags & codec_flag(), 0u);
    std::string out;
    EXPECT_EQ(c.decode(Encoded{e.data.substr(0, e.data.size() / 3), e.flags}, out),
              errc::decode_failed);
    EXPECT_EQ(c.decode(Encoded{"not compressed at all", e.flags}, out), errc::decode_failed);
    // Both codec bits: nobody writes that.
    EXPECT_EQ(c.decode(Encoded{e.data, e.flags | flags::compression_mask}, out),
              errc::decode_failed);
}

TEST_P(CompressedCodec, WrapsUserTypes) {
    const Compressed<Transcoder<Point>> c(CompressionOptions{.codec = GetParam(), .threshold = 1});
    // "x,y" is too short to shrink: stored as it is, with the user's flag.
    const Encoded e = c.encode(Point{1, 2});
    EXPECT_EQ(e.flags, 1u << 3);
    EXPECT_EQ(round_trip(c, Point{1, 2}), (Point{1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Transcoder, CompressedCodec, ::testing::Values(Codec::zstd, Codec::lz4),
                         codec_name);

}  // namespace
