// The zstd and LZ4 codecs behind Compressed<>: round trips, the "not smaller, not compressed"
// rule, and the refusals that keep a hostile value from costing memory (decompression bombs)
// or turning into garbage (corrupt data).
#include "folsom/compression.hpp"

#include "folsom/error.hpp"
#include "folsom/value_flags.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace {

using folsom::Codec;
using folsom::errc;
namespace compression = folsom::compression;

constexpr std::size_t mib = 1024 * 1024;

std::string compressible(std::size_t n) {
    std::string s;
    s.reserve(n);
    for (std::size_t i = 0; s.size() < n; ++i)
        s += "line " + std::to_string(i % 97) + " of a fairly repetitive text\n";
    s.resize(n);
    return s;
}

std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(rng());
    return s;
}

std::string codec_name(const ::testing::TestParamInfo<Codec>& p) {
    return p.param == Codec::zstd ? "zstd" : "lz4";
}

class Codecs : public ::testing::TestWithParam<Codec> {};

TEST_P(Codecs, RoundTripShrinksCompressibleData) {
    const std::string input = compressible(64 * 1024);
    auto packed = compression::compress(GetParam(), input);
    ASSERT_TRUE(packed);
    EXPECT_LT(packed->size(), input.size() / 4);
    std::string out;
    ASSERT_FALSE(compression::decompress(GetParam(), *packed, mib, out));
    EXPECT_EQ(out, input);
}

TEST_P(Codecs, IncompressibleDataIsNotCompressed) {
    // Random bytes do not shrink: storing them "compressed" would only cost.
    EXPECT_FALSE(compression::compress(GetParam(), random_bytes(4096, 7)));
    EXPECT_FALSE(compression::compress(GetParam(), "x"));
}

TEST_P(Codecs, RealBombOverTheCapIsRefused) {
    // 2 MiB of zeros compress to a few dozen bytes; with a 1 MiB cap they must not be
    // inflated.
    const std::string zeros(2 * mib, '\0');
    auto packed = compression::compress(GetParam(), zeros);
    ASSERT_TRUE(packed);
    EXPECT_LT(packed->size(), 16u * 1024);
    std::string out;
    EXPECT_EQ(compression::decompress(GetParam(), *packed, mib, out), errc::decode_failed);
    // The same value is fine under a cap that allows it.
    ASSERT_FALSE(compression::decompress(GetParam(), *packed, 2 * mib, out));
    EXPECT_EQ(out, zeros);
}

TEST_P(Codecs, CorruptDataIsRefused) {
    const std::string input = compressible(8 * 1024);
    auto packed = compression::compress(GetParam(), input);
    ASSERT_TRUE(packed);
    std::string out;
    // Truncated.
    EXPECT_EQ(compression::decompress(GetParam(), packed->substr(0, packed->size() / 2), mib, out),
              errc::decode_failed);
    // Empty.
    EXPECT_EQ(compression::decompress(GetParam(), "", mib, out), errc::decode_failed);
    // Garbage of the right length, keeping the header (so the claimed size is plausible).
    std::string garbled = *packed;
    for (std::size_t i = 12; i < garbled.size(); ++i)
        garbled[i] = static_cast<char>(garbled[i] ^ 0x5a);
    std::error_code ec = compression::decompress(GetParam(), garbled, mib, out);
    // zstd checks its blocks; LZ4 may decode garbage to *some* bytes, but never to exactly
    // the claimed size without error and the original content.
    if (!ec) {
        EXPECT_NE(out, input);
    } else {
        EXPECT_EQ(ec, errc::decode_failed);
    }
}

INSTANTIATE_TEST_SUITE_P(Compression, Codecs, ::testing::Values(Codec::zstd, Codec::lz4),
                         codec_name);

TEST(Compression, ZstdFrameClaimingATerabyteIsRefusedBeforeAllocating) {
    // A 16-byte zstd frame: magic, a descriptor with an 8-byte content size (single segment),
    // the size 2^40, then one empty last raw block. Allocating what it claims would take 1 TiB.
    std::string bomb("\x28\xb5\x2f\xfd\xe0", 5);
    const std::uint64_t claimed = std::uint64_t{1} << 40;
    for (int i = 0; i < 8; ++i)
        bomb += static_cast<char>((claimed >> (8 * i)) & 0xff);
    bomb += std::string("\x01\x00\x00", 3);
    std::string out;
    EXPECT_EQ(compression::decompress(Codec::zstd, bomb, mib, out), errc::decode_failed);
    EXPECT_LT(out.capacity(), mib);
}

TEST(Compression, ZstdFrameWithoutAContentSizeIsRefused) {
    // Same frame, descriptor 0x00: no content size, so nothing bounds the output.
    const std::string unsized("\x28\xb5\x2f\xfd\x00\x00\x01\x00\x00", 9);
    std::string out;
    EXPECT_EQ(compression::decompress(Codec::zstd, unsized, mib, out), errc::decode_failed);
}

TEST(Compression, Lz4BlockClaimingHugeSizeIsRefusedBeforeAllocating) {
    // Size header 0x7e000000 (LZ4's maximum, ~2 GiB), then a one-byte block.
    const std::string bomb("\x00\x00\x00\x7e\x00", 5);
    std::string out;
    EXPECT_EQ(compression::decompress(Codec::lz4, bomb, mib, out), errc::decode_failed);
    EXPECT_LT(out.capacity(), mib);
    // Over LZ4's own maximum even with a huge cap.
    const std::string over("\xff\xff\xff\xff\x00", 5);
    EXPECT_EQ(compression::decompress(Codec::lz4, over, ~std::size_t{0}, out), errc::decode_failed);
}

TEST(Compression, Lz4SizeHeaderThatLiesIsRefused) {
    const std::string input = compressible(4096);
    auto packed = compression::compress(Codec::lz4, input);
    ASSERT_TRUE(packed);
    std::string out;
    std::string longer = *packed;
    longer[0] = static_cast<char>(static_cast<unsigned char>(longer[0]) + 1);  // claims 4097
    EXPECT_EQ(compression::decompress(Codec::lz4, longer, mib, out), errc::decode_failed);
    std::string shorter = *packed;
    shorter[0] = static_cast<char>(static_cast<unsigned char>(shorter[0]) - 1);  // claims 4095
    EXPECT_EQ(compression::decompress(Codec::lz4, shorter, mib, out), errc::decode_failed);
}

TEST(Compression, Lz4FormatIsSizeThenBlock) {
    const std::string input = compressible(5000);
    auto packed = compression::compress(Codec::lz4, input);
    ASSERT_TRUE(packed);
    ASSERT_GE(packed->size(), 4u);
    const auto b = [&](int i) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>((*packed)[i]));
    };
    EXPECT_EQ(b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24, 5000u);
}

TEST(Compression, FlagOfEachCodec) {
    EXPECT_EQ(compression::flag_of(Codec::zstd), folsom::value_flags::zstd);
    EXPECT_EQ(compression::flag_of(Codec::lz4), folsom::value_flags::lz4);
    EXPECT_EQ(folsom::value_flags::compression_mask & folsom::value_flags::string, 0u);
    EXPECT_EQ(folsom::value_flags::compression_mask & ~folsom::value_flags::reserved_mask, 0u);
}

}  // namespace
