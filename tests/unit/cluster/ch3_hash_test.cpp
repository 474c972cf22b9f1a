// mcrouter's placement hashes, bit for bit: SpookyHash V2, MurmurHash64A, furc_hash (Ch3),
// WeightedCh3 and HashRoute's functions, against the vectors their authors publish (each
// says where it comes from), then the properties placement relies on.
#include "folsom/cluster/continuum.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/murmur_hash_64a.hpp"
#include "cluster/hash/spooky_hash_v2.hpp"
#include "cluster/hash/weighted_ch3.hpp"
#include "routing/routes/selector_routes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::cluster::furc_hash;
using folsom::cluster::furc_max_servers;
using folsom::cluster::murmur_hash_64a;
using folsom::cluster::murmur_hash_64a_word;
using folsom::cluster::spooky_hash_v2_128;
using folsom::cluster::spooky_hash_v2_32;
using folsom::cluster::spooky_hash_v2_64;
using folsom::cluster::weighted_ch3;
using folsom::routing::hash_route_child;
using folsom::routing::HashFunction;

std::string_view bytes(const std::vector<unsigned char>& v, std::size_t n) {
    return {reinterpret_cast<const char*>(v.data()), n};
}

// The 256 byte values -128 .. 127 as signed chars, and the same reversed: mcrouter's
// "test_max_key".
std::string all_bytes(bool reversed) {
    std::string s;
    for (int i = 0; i < 256; ++i)
        s.push_back(static_cast<char>(i - 128));
    if (reversed) std::reverse(s.begin(), s.end());
    return s;
}

// mcrouter's bulk checksums: acc = acc * 31 + index over keys made by printf.
template <typename Pick>
std::uint32_t checksum(const char* format, std::uint32_t keys, Pick pick) {
    std::uint32_t acc = 0;
    char key[32];
    for (std::uint32_t i = 0; i < keys; ++i) {
        const int len = std::snprintf(key, sizeof key, format, i);
        acc = acc * 31u + static_cast<std::uint32_t>(pick(std::string_view(key, len)));
    }
    return acc;
}

// ---- SpookyHash V2 -----------------------------------------------------------------------

// Hash32(message, length i, seed 0) for the messages {128}, {128, 129}, ... of lengths 0..511:
// the table of facebook/folly, folly/hash/test/SpookyHashV2Test.cpp (TestResults), which is
// Bob Jenkins' own (TestSpookyV2.cpp). Lengths 0..191 take the short path, the rest the long.
constexpr std::uint32_t spooky_published[512] = {
    0x6bf50919, 0x70de1d26, 0xa2b37298, 0x35bc5fbf, 0x8223b279, 0x5bcb315e, 0x53fe88a1, 0xf9f1a233,
    0xee193982, 0x54f86f29, 0xc8772d36, 0x9ed60886, 0x5f23d1da, 0x1ed9f474, 0xf2ef0c89, 0x83ec01f9,
    0xf274736c, 0x7e9ac0df, 0xc7aed250, 0xb1015811, 0xe23470f5, 0x48ac20c4, 0xe2ab3cd5, 0x608f8363,
    0xd0639e68, 0xc4e8e7ab, 0x863c7c5b, 0x4ea63579, 0x99ae8622, 0x170c658b, 0x149ba493, 0x027bca7c,
    0xe5cfc8b6, 0xce01d9d7, 0x11103330, 0x5d1f5ed4, 0xca720ecb, 0xef408aec, 0x733b90ec, 0x855737a6,
    0x9856c65f, 0x647411f7, 0x50777c74, 0xf0f1a8b7, 0x9d7e55a5, 0xc68dd371, 0xfc1af2cc, 0x75728d0a,
    0x390e5fdc, 0xf389b84c, 0xfb0ccf23, 0xc95bad0e, 0x5b1cb85a, 0x6bdae14f, 0x6deb4626, 0x93047034,
    0x6f3266c6, 0xf529c3bd, 0x396322e7, 0x3777d042, 0x1cd6a5a2, 0x197b402e, 0xc28d0d2b, 0x09c1afb4,
    0x069c8bb7, 0x6f9d4e1e, 0xd2621b5c, 0xea68108d, 0x8660cb8f, 0xd61e6de6, 0x7fba15c7, 0xaacfaa97,
    0xdb381902, 0x4ea22649, 0x5d414a1e, 0xc3fc5984, 0xa0fc9e10, 0x347dc51c, 0x37545fb6, 0x8c84b26b,
    0xf57efa5d, 0x56afaf16, 0xb6e1eb94, 0x9218536a, 0xe3cc4967, 0xd3275ef4, 0xea63536e, 0x6086e499,
    0xaccadce7, 0xb0290d82, 0x4ebfd0d6, 0x46ccc185, 0x2eeb10d3, 0x474e3c8c, 0x23c84aee, 0x3abae1cb,
    0x1499b81a, 0xa2993951, 0xeed176ad, 0xdfcfe84c, 0xde4a961f, 0x4af13fe6, 0xe0069c42, 0xc14de8f5,
    0x6e02ce8f, 0x90d19f7f, 0xbca4a484, 0xd4efdd63, 0x780fd504, 0xe80310e3, 0x03abbc12, 0x90023849,
    0xd6f6fb84, 0xd6b354c5, 0x5b8575f0, 0x758f14e4, 0x450de862, 0x90704afb, 0x47209a33, 0xf226b726,
    0xf858dab8, 0x7c0d6de9, 0xb05ce777, 0xee5ff2d4, 0x7acb6d5c, 0x2d663f85, 0x41c72a91, 0x82356bf2,
    0x94e948ec, 0xd358d448, 0xeca7814d, 0x78cd7950, 0xd6097277, 0x97782a5d, 0xf43fc6f4, 0x105f0a38,
    0x9e170082, 0x4bfe566b, 0x4371d25f, 0xef25a364, 0x698eb672, 0x74f850e4, 0x4678ff99, 0x4a290dc6,
    0x3918f07c, 0x32c7d9cd, 0x9f28e0af, 0x0d3c5a86, 0x7bfc8a45, 0xddf0c7e1, 0xdeacb86b, 0x970b3c5c,
    0x5e29e199, 0xea28346d, 0x6b59e71b, 0xf8a8a46a, 0x862f6ce4, 0x3ccb740b, 0x08761e9e, 0xbfa01e5f,
    0xf17cfa14, 0x2dbf99fb, 0x7a0be420, 0x06137517, 0xe020b266, 0xd25bfc61, 0xff10ed00, 0x42e6be8b,
    0x029ef587, 0x683b26e0, 0xb08afc70, 0x7c1fd59e, 0xbaae9a70, 0x98c8c801, 0xb6e35a26, 0x57083971,
    0x90a6a680, 0x1b44169e, 0x1dce237c, 0x518e0a59, 0xccb11358, 0x7b8175fb, 0xb8fe701a, 0x10d259bb,
    0xe806ce10, 0x9212be79, 0x4604ae7b, 0x7fa22a84, 0xe715b13a, 0x0394c3b2, 0x11efbbae, 0xe13d9e19,
    0x77e012bd, 0x2d05114c, 0xaecf2ddd, 0xb2a2b4aa, 0xb9429546, 0x55dce815, 0xc89138f8, 0x46dcae20,
    0x1f6f7162, 0x0c557ebc, 0x5b996932, 0xafbbe7e2, 0xd2bd5f62, 0xff475b9f, 0x9cec7108, 0xeaddcffb,
    0x5d751aef, 0xf68f7bdf, 0xf3f4e246, 0x00983fcd, 0x00bc82bb, 0xbf5fd3e7, 0xe80c7e2c, 0x187d8b1f,
    0xefafb9a7, 0x8f27a148, 0x5c9606a9, 0xf2d2be3e, 0xe992d13a, 0xe4bcd152, 0xce40b436, 0x63d6a1fc,
    0xdc1455c4, 0x64641e39, 0xd83010c9, 0x2d535ae0, 0x5b748f3e, 0xf9a9146b, 0x80f10294, 0x2859acd4,
    0x5fc846da, 0x56d190e9, 0x82167225, 0x98e4daba, 0xbf7865f3, 0x00da7ae4, 0x9b7cd126, 0x644172f8,
    0xde40c78f, 0xe8803efc, 0xdd331a2b, 0x48485c3c, 0x4ed01ddc, 0x9c0b2d9e, 0xb1c6e9d7, 0xd797d43c,
    0x274101ff, 0x3bf7e127, 0x91ebbc56, 0x7ffeb321, 0x4d42096f, 0xd6e9456a, 0x0bade318, 0x2f40ee0b,
    0x38cebf03, 0x0cbc2e72, 0xbf03e704, 0x7b3e7a9a, 0x8e985acd, 0x90917617, 0x413895f8, 0xf11dde04,
    0xc66f8244, 0xe5648174, 0x6c420271, 0x2469d463, 0x2540b033, 0xdc788e7b, 0xe4140ded, 0x0990630a,
    0xa54abed4, 0x6e124829, 0xd940155a, 0x1c8836f6, 0x38fda06c, 0x5207ab69, 0xf8be9342, 0x774882a8,
    0x56fc0d7e, 0x53a99d6e, 0x8241f634, 0x9490954d, 0x447130aa, 0x8cc4a81f, 0x0868ec83, 0xc22c642d,
    0x47880140, 0xfbff3bec, 0x0f531f41, 0xf845a667, 0x08c15fb7, 0x1996cd81, 0x86579103, 0xe21dd863,
    0x513d7f97, 0x3984a1f1, 0xdfcdc5f4, 0x97766a5e, 0x37e2b1da, 0x41441f3f, 0xabd9ddba, 0x23b755a9,
    0xda937945, 0x103e650e, 0x3eef7c8f, 0x2760ff8d, 0x2493a4cd, 0x1d671225, 0x3bf4bd4c, 0xed6e1728,
    0xc70e9e30, 0x4e05e529, 0x928d5aa6, 0x164d0220, 0xb5184306, 0x4bd7efb3, 0x63830f11, 0xf3a1526c,
    0xf1545450, 0xd41d5df5, 0x25a5060d, 0x77b368da, 0x4fe33c7e, 0xeae09021, 0xfdb053c4, 0x2930f18d,
    0xd37109ff, 0x8511a781, 0xc7e7cdd7, 0x6aeabc45, 0xebbeaeaa, 0x9a0c4f11, 0xda252cbb, 0x5b248f41,
    0x5223b5eb, 0xe32ab782, 0x8e6a1c97, 0x11d3f454, 0x3e05bd16, 0x0059001d, 0xce13ac97, 0xf83b2b4c,
    0x71db5c9a, 0xdc8655a6, 0x9e98597b, 0x3fcae0a2, 0x75e63ccd, 0x076c72df, 0x4754c6ad, 0x26b5627b,
    0xd818c697, 0x998d5f3d, 0xe94fc7b2, 0x1f49ad1a, 0xca7ff4ea, 0x9fe72c05, 0xfbd0cbbf, 0xb0388ceb,
    0xb76031e3, 0xd0f53973, 0xfb17907c, 0xa4c4c10f, 0x9f2d8af9, 0xca0e56b0, 0xb0d9b689, 0xfcbf37a3,
    0xfede8f7d, 0xf836511c, 0x744003fc, 0x89eba576, 0xcfdcf6a6, 0xc2007f52, 0xaaaf683f, 0x62d2f9ca,
    0xc996f77f, 0x77a7b5b3, 0x8ba7d0a4, 0xef6a0819, 0xa0d903c0, 0x01b27431, 0x58fffd4c, 0x4827f45c,
    0x44eb5634, 0xae70edfc, 0x591c740b, 0x478bf338, 0x2f3b513b, 0x67bf518e, 0x6fef4a0c, 0x1e0b6917,
    0x5ac0edc5, 0x2e328498, 0x077de7d5, 0x5726020b, 0x2aeda888, 0x45b637ca, 0xcf60858d, 0x3dc91ae2,
    0x3e6d5294, 0xe6900d39, 0x0f634c71, 0x827a5fa4, 0xc713994b, 0x1c363494, 0x3d43b615, 0xe5fe7d15,
    0xf6ada4f2, 0x472099d5, 0x04360d39, 0x7f2a71d0, 0x88a4f5ff, 0x2c28fac5, 0x4cd64801, 0xfd78dd33,
    0xc9bdd233, 0x21e266cc, 0x9bbf419d, 0xcbf7d81d, 0x80f15f96, 0x04242657, 0x53fb0f66, 0xded11e46,
    0xf2fdba97, 0x8d45c9f1, 0x4eeae802, 0x17003659, 0xb9db81a7, 0xe734b1b2, 0x9503c54e, 0xb7c77c3e,
    0x271dd0ab, 0xd8b906b5, 0x0d540ec6, 0xf03b86e0, 0x0fdb7d18, 0x95e261af, 0xad9ec04e, 0x381f4a64,
    0xfec798d7, 0x09ea20be, 0x0ef4ca57, 0x1e6195bb, 0xfd0da78b, 0xcea1653b, 0x157d9777, 0xf04af50f,
    0xad7baa23, 0xd181714a, 0x9bbdab78, 0x6c7d1577, 0x645eb1e7, 0xa0648264, 0x35839ca6, 0x2287ef45,
    0x32a64ca3, 0x26111f6f, 0x64814946, 0xb0cddaf1, 0x4351c59e, 0x1b30471c, 0xb970788a, 0x30e9f597,
    0xd7e58df1, 0xc6d2b953, 0xf5f37cf4, 0x3d7c419e, 0xf91ecb2d, 0x9c87fd5d, 0xb22384ce, 0x8c7ac51c,
    0x62c96801, 0x57e54091, 0x964536fe, 0x13d3b189, 0x4afd1580, 0xeba62239, 0xb82ea667, 0xae18d43a,
    0xbef04402, 0x1942534f, 0xc54bf260, 0x3c8267f5, 0xa1020ddd, 0x112fcc8a, 0xde596266, 0xe91d0856,
    0xf300c914, 0xed84478e, 0x5b65009e, 0x4764da16, 0xaf8e07a2, 0x4088dc2c, 0x9a0cad41, 0x2c3f179b,
    0xa67b83f7, 0xf27eab09, 0xdbe10e28, 0xf04c911f, 0xd1169f87, 0x8e1e4976, 0x17f57744, 0xe4f5a33f,
    0x27c2e04b, 0x0b7523bd, 0x07305776, 0xc6be7503, 0x918fa7c9, 0xaf2e2cd9, 0x82046f8e, 0xcc1c8250,
};

TEST(SpookyHashV2, PublishedHash32Values) {
    std::vector<unsigned char> message(512);
    for (std::size_t i = 0; i < message.size(); ++i)
        message[i] = static_cast<unsigned char>(i + 128);
    for (std::size_t i = 0; i < 512; ++i)
        ASSERT_EQ(spooky_hash_v2_32(bytes(message, i), 0), spooky_published[i]) << "length " << i;
}

TEST(SpookyHashV2, NarrowFormsAreTheFirstWord) {
    std::vector<unsigned char> message(400);
    for (std::size_t i = 0; i < message.size(); ++i)
        message[i] = static_cast<unsigned char>(i * 7);
    for (std::size_t n : {0, 1, 15, 16, 31, 32, 191, 192, 287, 288, 400}) {
        const auto wide = spooky_hash_v2_128(bytes(message, n), 42, 42);
        EXPECT_EQ(spooky_hash_v2_64(bytes(message, n), 42), wide.first) << n;
        EXPECT_EQ(spooky_hash_v2_32(bytes(message, n), 42), static_cast<std::uint32_t>(wide.first))
            << n;
        // The two seeds are independent inputs.
        EXPECT_NE(spooky_hash_v2_128(bytes(message, n), 42, 43).first, wide.first) << n;
    }
}

// folly's TestAlignment: the same bytes hash alike wherever they sit in memory.
TEST(SpookyHashV2, AnyAlignment) {
    std::vector<unsigned char> buffer(320 + 8);
    for (std::size_t n = 0; n < 320; n += 7) {
        std::uint64_t first = 0;
        for (std::size_t offset = 0; offset < 8; ++offset) {
            for (std::size_t i = 0; i < n; ++i)
                buffer[offset + i] = static_cast<unsigned char>(i * 13 + 1);
            const auto h = spooky_hash_v2_64(
                std::string_view(reinterpret_cast<const char*>(buffer.data()) + offset, n), 0);
            if (offset == 0) first = h;
            EXPECT_EQ(h, first) << "length " << n << " offset " << offset;
        }
    }
}

// ---- MurmurHash64A -----------------------------------------------------------------------

// SMHasher's verification value for MurmurHash64A ("Murmur2B"): aappleby/smhasher, the hash
// table of src/main.cpp, computed as its VerificationTest does (src/KeysetTest.cpp): hash
// {}, {0}, {0, 1}, ... {0..254} with seeds 256, 255, ... 1, hash the 256 results (as
// little-endian bytes) with seed 0, and read the first 4 bytes little-endian.
TEST(MurmurHash64A, SmhasherVerificationValue) {
    std::vector<unsigned char> key(256);
    std::vector<unsigned char> hashes(256 * 8);
    for (std::size_t i = 0; i < 256; ++i) {
        key[i] = static_cast<unsigned char>(i);
        const std::uint64_t h = murmur_hash_64a(bytes(key, i), 256 - i);
        for (std::size_t b = 0; b < 8; ++b)
            hashes[i * 8 + b] = static_cast<unsigned char>(h >> (8 * b));
    }
    const std::uint64_t final_hash = murmur_hash_64a(bytes(hashes, hashes.size()), 0);
    EXPECT_EQ(static_cast<std::uint32_t>(final_hash), 0x1F0D3804u);
}

TEST(MurmurHash64A, WordFormIsTheHashOfItsEightBytes) {
    for (std::uint64_t w : {0x0ULL, 0x1ULL, 0x0123456789abcdefULL, ~0x0ULL}) {
        unsigned char le[8];
        for (int b = 0; b < 8; ++b)
            le[b] = static_cast<unsigned char>(w >> (8 * b));
        EXPECT_EQ(
            murmur_hash_64a_word(w, 4193360111u),
            murmur_hash_64a(std::string_view(reinterpret_cast<const char*>(le), 8), 4193360111u));
    }
}

// ---- furc_hash (Ch3) ---------------------------------------------------------------------

// facebook/mcrouter, mcrouter/lib/test/Ch3HashTest.cpp (Ch3Func.basic).
TEST(FurcHash, McrouterCh3Vectors) {
    EXPECT_EQ(furc_hash("sample", 100), 97u);
    EXPECT_EQ(furc_hash("sample", 1), 0u);
    EXPECT_EQ(furc_hash("", 100), 72u);
    EXPECT_EQ(furc_hash("", 1), 0u);
    EXPECT_EQ(furc_hash("", furc_max_servers), 6173600u);
    EXPECT_EQ(furc_hash("sample", furc_max_servers), 5167780u);
    EXPECT_EQ(furc_hash(all_bytes(false), 99999), 31015u);
    EXPECT_EQ(furc_hash(all_bytes(true), 99999), 67101u);
}

// facebook/mcrouter, mcrouter/lib/test/Ch3HashTest.cpp (Ch3Func.ch3_3, Ch3HashFunc.ch3_10):
// how many of the keys "0", "1", ... land on each server.
TEST(FurcHash, McrouterCh3Counts) {
    const auto counts = [](std::uint32_t n, std::uint32_t keys) {
        std::vector<std::size_t> c(n);
        for (std::uint32_t i = 0; i < keys; ++i)
            ++c[furc_hash(std::to_string(i), n)];
        return c;
    };
    EXPECT_EQ(counts(3, 1000), (std::vector<std::size_t>{307, 342, 351}));
    EXPECT_EQ(counts(10, 10000),
              (std::vector<std::size_t>{995, 955, 1046, 968, 1032, 972, 1016, 1038, 1010, 968}));
}

// mcrouter's per-pool checksums over the keys "k0" .. "k99999" (acc = acc * 31 + index):
// WeightedCh3HashFunc.bulkChecksumUnitWeights in mcrouter/lib/test/WeightedCh3HashFuncTest.cpp
// as the search index holds a recent revision of it (facebook/mcrouter); with every weight 1,
// WeightedCh3 is furc_hash, which that test says these checksums match.
TEST(FurcHash, McrouterBulkChecksums) {
    const std::pair<std::uint32_t, std::uint32_t> expected[] = {
        {2, 1346413954u},    {3, 914505363u},      {7, 4252552508u},
        {10, 2894016351u},   {16, 2995729350u},    {100, 2289223413u},
        {1000, 2251851331u}, {10000, 1328492545u}, {100000, 1053928120u}};
    for (const auto& [n, sum] : expected)
        EXPECT_EQ(checksum("k%u", 100000, [n = n](std::string_view k) { return furc_hash(k, n); }),
                  sum)
            << "n=" << n;
}

// mcrouter/lib/fbi/test/hash_test.cpp (ch3.verify_correctness) checks these two on random
// keys: every answer is in range, and as the pool grows a key stays or moves to a new server.
TEST(FurcHash, GrowingAPoolMovesKeysOnlyToNewServers) {
    const std::uint32_t sizes[] = {1, 2, 3, 5, 8, 13, 21, 100, 101, 1000, 4096, 4097, 100000};
    for (int i = 0; i < 5000; ++i) {
        const std::string key = "key:" + std::to_string(i * 7919);
        std::uint32_t before = 0;
        for (std::size_t s = 0; s < std::size(sizes); ++s) {
            const std::uint32_t now = furc_hash(key, sizes[s]);
            ASSERT_LT(now, sizes[s]);
            if (s > 0 && now != before) {
                ASSERT_GE(now, sizes[s - 1]) << key;
            }
            before = now;
        }
    }
}

TEST(FurcHash, SpreadsKeysEvenly) {
    for (std::uint32_t n : {2u, 3u, 7u, 10u, 64u}) {
        std::vector<int> count(n);
        const int keys = 2000 * static_cast<int>(n);
        for (int i = 0; i < keys; ++i)
            ++count[furc_hash("spread:" + std::to_string(i), n)];
        for (int c : count) {
            EXPECT_GT(c, 1700) << "n=" << n;
            EXPECT_LT(c, 2300) << "n=" << n;
        }
    }
}

TEST(FurcHash, NoServersAndTooManyServers) {
    EXPECT_EQ(furc_hash("k", 0), 0u);
    // Past mcrouter's limit the pool is taken as the largest it supports.
    EXPECT_EQ(furc_hash("sample", furc_max_servers + 1), 5167780u);
    EXPECT_EQ(furc_hash("sample", 0xffffffffu), 5167780u);
}

// ---- WeightedCh3 -------------------------------------------------------------------------

// facebook/mcrouter, mcrouter/lib/test/WeightedCh3HashFuncTest.cpp.
TEST(WeightedCh3, McrouterVectors) {
    // basic: with every weight 1 it is Ch3.
    const std::vector<double> ones_100(100, 1.0);
    EXPECT_EQ(weighted_ch3("sample", ones_100), 97u);
    EXPECT_EQ(weighted_ch3("", ones_100), 72u);
    EXPECT_EQ(weighted_ch3("sample", std::vector<double>{1.0}), 0u);
    const std::vector<double> ones_99999(99999, 1.0);
    EXPECT_EQ(weighted_ch3(all_bytes(false), ones_99999), 31015u);
    EXPECT_EQ(weighted_ch3(all_bytes(true), ones_99999), 67101u);
    // zeroWeight: every try fails; the last try's server is the answer.
    EXPECT_EQ(weighted_ch3("sample", std::vector<double>{0.0}), 0u);
    EXPECT_EQ(weighted_ch3("", std::vector<double>{0.0}), 0u);
    const std::vector<double> zeros_100(100, 0.0);
    EXPECT_EQ(weighted_ch3("sample", zeros_100), 59u);
    EXPECT_EQ(weighted_ch3("", zeros_100), 45u);
}

TEST(WeightedCh3, McrouterCounts) {
    const auto counts = [](const std::vector<double>& weights, std::uint32_t keys) {
        std::vector<std::size_t> c(weights.size());
        for (std::uint32_t i = 0; i < keys; ++i)
            ++c[weighted_ch3(std::to_string(i), weights)];
        return c;
    };
    // reducedWeight: a third server at 0.7 gives keys only to the others.
    const std::vector<double> reduced = {1.0, 1.0, 0.7};
    EXPECT_EQ(counts(reduced, 1000), (std::vector<std::size_t>{341, 371, 288}));
    for (std::uint32_t i = 0; i < 1000; ++i) {
        const std::string key = std::to_string(i);
        if (furc_hash(key, 3) != 2) {
            EXPECT_EQ(weighted_ch3(key, reduced), furc_hash(key, 3));
        }
    }
    // randomWeights.
    const std::vector<double> random = {0.429, 0.541, 0.117, 0.998, 0.283,
                                        0.065, 0.109, 0.042, 0.676, 0.943};
    EXPECT_EQ(counts(random, 10000),
              (std::vector<std::size_t>{1016, 1252, 288, 2354, 661, 195, 247, 122, 1668, 2197}));
}

// The per-pool checksums of the same recent revision of mcrouter's
// WeightedCh3HashFuncTest.cpp (bulkChecksumHalfWeights, bulkChecksumZeroWeights,
// mixedWeightsDistribution, longKeyBulkChecksum*): they exercise the retries, so SpookyHash
// and the salts, on short keys and on 128-byte ones (SpookyHash's other path lengths).
TEST(WeightedCh3, McrouterBulkChecksums) {
    const auto bulk = [](const char* format, std::uint32_t keys, std::uint32_t n, double w) {
        const std::vector<double> weights(n, w);
        return checksum(format, keys, [&](std::string_view k) { return weighted_ch3(k, weights); });
    };
    const std::pair<std::uint32_t, std::uint32_t> half[] = {{2, 2395690262u},
                                                            {10, 547444706u},
                                                            {100, 2951198297u},
                                                            {1000, 1336857622u},
                                                            {10000, 3378951161u}};
    for (const auto& [n, sum] : half)
        EXPECT_EQ(bulk("k%u", 10000, n, 0.5), sum) << "half, n=" << n;
    const std::pair<std::uint32_t, std::uint32_t> zero[] = {
        {2, 3431444300u}, {10, 1290067504u}, {100, 2604325093u}, {1000, 337394182u}};
    for (const auto& [n, sum] : zero)
        EXPECT_EQ(bulk("k%u", 10000, n, 0.0), sum) << "zero, n=" << n;

    const std::vector<double> mixed = {1.0, 0.5, 0.0, 0.75, 1.0};
    std::vector<std::size_t> count(5);
    const std::uint32_t sum = checksum("d%u", 10000, [&](std::string_view k) {
        const auto i = weighted_ch3(k, mixed);
        ++count[i];
        return i;
    });
    EXPECT_EQ(sum, 2309057571u);
    EXPECT_EQ(count[2], 0u);  // weight 0: no keys

    std::string base(128, 'A');
    for (std::size_t i = 0; i < base.size(); ++i)
        base[i] = static_cast<char>('A' + i % 26);
    const auto long_keys = [&](std::uint32_t n, double w) {
        const std::vector<double> weights(n, w);
        std::uint32_t acc = 0;
        for (std::uint32_t i = 0; i < 10000; ++i)
            acc = acc * 31u + weighted_ch3(base + std::to_string(i), weights);
        return acc;
    };
    const std::pair<std::uint32_t, std::uint32_t> long_half[] = {
        {2, 3784301429u}, {10, 707485837u}, {100, 4273108085u}, {1000, 954106693u}};
    for (const auto& [n, s] : long_half)
        EXPECT_EQ(long_keys(n, 0.5), s) << "long keys, half, n=" << n;
    const std::pair<std::uint32_t, std::uint32_t> long_zero[] = {
        {2, 2171781178u}, {10, 2937312667u}, {100, 532711027u}};
    for (const auto& [n, s] : long_zero)
        EXPECT_EQ(long_keys(n, 0.0), s) << "long keys, zero, n=" << n;
}

TEST(WeightedCh3, LoweringOneWeightMovesOnlySomeOfItsKeys) {
    const std::vector<double> full(100, 1.0);
    std::vector<double> reduced = full;
    reduced[42] = 0.3;
    int moved_away = 0;
    for (int i = 0; i < 10000; ++i) {
        const std::string key = "cons_" + std::to_string(i);
        const auto before = weighted_ch3(key, full);
        const auto after = weighted_ch3(key, reduced);
        if (before != 42) {
            ASSERT_EQ(after, before) << key;
        } else if (after != 42) {
            ++moved_away;
        }
    }
    EXPECT_GT(moved_away, 0);
}

TEST(WeightedCh3, OutOfRangeWeightsAndNoServers) {
    EXPECT_EQ(weighted_ch3("k", std::vector<double>{}), 0u);
    // Above 1 counts as 1 (Ch3), below 0 as 0.
    EXPECT_EQ(weighted_ch3("sample", std::vector<double>(100, 7.0)), 97u);
    EXPECT_EQ(weighted_ch3("sample", std::vector<double>(100, -1.0)), 59u);
    // A key past the stack buffer still hashes (on the heap).
    const std::string long_key(600, 'x');
    EXPECT_LT(weighted_ch3(long_key, std::vector<double>(10, 0.5)), 10u);
}

// ---- HashRoute ---------------------------------------------------------------------------

// facebook/mcrouter, mcrouter/lib/test/Crc32HashTest.cpp (Crc32Func.basic): mcrouter's Crc32
// drops the CRC's top bit before the modulo.
TEST(HashRouteChild, McrouterCrc32Vectors) {
    const auto crc = [](std::string_view key, std::size_t n) {
        return hash_route_child(HashFunction::crc32, key, "", n, {});
    };
    EXPECT_EQ(crc("sample", 100), 7u);
    EXPECT_EQ(crc("sample", 1), 0u);
    EXPECT_EQ(crc("", 100), 0u);
    EXPECT_EQ(crc("", 1), 0u);
    EXPECT_EQ(crc("", (1u << 30) - 1), 0u);
    EXPECT_EQ(crc("sample", (1u << 30) - 1), 822834884u);
    EXPECT_EQ(crc(all_bytes(false), 99999), 11697u);
    EXPECT_EQ(crc(all_bytes(true), 99999), 97630u);
}

// mcrouter's HashSelector hashes the key with the salt appended.
TEST(HashRouteChild, HashesKeyThenSalt) {
    const std::vector<double> weights = {1.0, 0.2, 0.7, 0.0, 1.0};
    for (int i = 0; i < 500; ++i) {
        const std::string key = "salted:" + std::to_string(i);
        EXPECT_EQ(hash_route_child(HashFunction::ch3, key, "", 7, {}), furc_hash(key, 7));
        EXPECT_EQ(hash_route_child(HashFunction::ch3, key, "s1", 7, {}), furc_hash(key + "s1", 7));
        EXPECT_EQ(hash_route_child(HashFunction::weighted_ch3, key, "s1", 5, weights),
                  weighted_ch3(key + "s1", weights));
        EXPECT_EQ(hash_route_child(HashFunction::crc32, key, "s1", 7, {}),
                  hash_route_child(HashFunction::crc32, key + "s1", "", 7, {}));
        EXPECT_EQ(hash_route_child(HashFunction::md5, key, "s1", 7, {}),
                  hash_route_child(HashFunction::md5, key + "s1", "", 7, {}));
    }
}

TEST(HashRouteChild, AlwaysInRange) {
    const std::string long_key(700, 'k');
    const std::string long_salt(256, 's');
    const std::vector<double> weights = {0.5, 0.5, 0.5};
    for (auto f :
         {HashFunction::ch3, HashFunction::weighted_ch3, HashFunction::crc32, HashFunction::md5}) {
        for (std::string_view key : {std::string_view("k"), std::string_view(long_key)}) {
            EXPECT_LT(hash_route_child(f, key, long_salt, 3, weights), 3u);
            EXPECT_LT(hash_route_child(f, key, "", 3, weights), 3u);
            EXPECT_EQ(hash_route_child(f, key, "", 1, weights), 0u);
        }
    }
}

// ---- Continuum with mcrouter_ch3 ---------------------------------------------------------

TEST(ContinuumCh3, IsFurcHashByPlaceInTheList) {
    using folsom::ServerAddress;
    using folsom::cluster::Continuum;
    using folsom::cluster::Distribution;
    std::vector<ServerAddress> pool;
    for (int i = 0; i < 7; ++i)
        pool.push_back(
            {"10.2.0." + std::to_string(i + 1), 11211, static_cast<std::uint32_t>(i + 1)});
    const Continuum c(pool, Distribution::mcrouter_ch3);
    ASSERT_EQ(c.points().size(), pool.size());
    for (std::uint32_t i = 0; i < pool.size(); ++i) {
        EXPECT_EQ(c.points()[i].position, i);
        EXPECT_EQ(c.points()[i].server, i);
    }
    for (int i = 0; i < 2000; ++i) {
        const std::string key = "ch3:" + std::to_string(i);
        ASSERT_EQ(c.server_index(key), furc_hash(key, 7)) << key;
    }
    // Names and weights play no part: only the number of servers.
    std::vector<ServerAddress> other;
    for (int i = 0; i < 7; ++i)
        other.push_back({"elsewhere-" + std::to_string(i), 11311, 1});
    const Continuum d(other, Distribution::mcrouter_ch3);
    for (int i = 0; i < 200; ++i)
        EXPECT_EQ(c.server_index(std::to_string(i)), d.server_index(std::to_string(i)));
}

}  // namespace
