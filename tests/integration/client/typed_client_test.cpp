// TypedClient against a real memcached, over every protocol: typed round trips with each
// completion token, compressed values that a plain Client sees as raw compressed bytes plus
// the codec flag (and that decompress to the original), plain values that a compressing
// TypedClient reads untouched (interoperating with an uncompressed reader/writer), and
// decompression bombs and corrupt data planted by a plain client refused with decode_failed.
#include "folsom/typed_client.hpp"

#include "folsom/blocking_client.hpp"
#include "folsom/compressed.hpp"
#include "folsom/compression.hpp"
#include "folsom/value_flags.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

namespace {

struct Point {
    std::int32_t x = 0;
    std::int32_t y = 0;
    friend bool operator==(const Point&, const Point&) = default;
};

}  // namespace

// A user type through the traits specialisation: two little-endian int32s, flag bit 5.
template <>
struct folsom::Transcoder<Point> {
    static constexpr std::uint32_t flag = 1u << 5;
    static folsom::Encoded encode(const Point& p) {
        folsom::Encoded e{std::string(8, '\0'), flag};
        for (int i = 0; i < 4; ++i) {
            e.data[i] = static_cast<char>((static_cast<std::uint32_t>(p.x) >> (8 * i)) & 0xff);
            e.data[4 + i] = static_cast<char>((static_cast<std::uint32_t>(p.y) >> (8 * i)) & 0xff);
        }
        return e;
    }
    static std::error_code decode(folsom::Encoded&& stored, Point& out) {
        if (stored.flags != flag || stored.data.size() != 8) return folsom::errc::decode_failed;
        std::uint32_t x = 0, y = 0;
        for (int i = 0; i < 4; ++i) {
            x |= static_cast<std::uint32_t>(static_cast<unsigned char>(stored.data[i])) << (8 * i);
            y |= static_cast<std::uint32_t>(static_cast<unsigned char>(stored.data[4 + i]))
                 << (8 * i);
        }
        out = Point{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)};
        return {};
    }
};

namespace {

using namespace std::chrono_literals;
using folsom::Codec;
using folsom::Compressed;
using folsom::CompressionOptions;
using folsom::errc;
using folsom::Status;
using folsom::Transcoder;
using folsom::TypedClient;
namespace flags = folsom::value_flags;

using Text = TypedClient<std::string>;
using CompressedText = TypedClient<std::string, Compressed<Transcoder<std::string>>>;

std::string text(std::size_t n, const std::string& seed = "") {
    std::string s;
    for (int i = 0; s.size() < n; ++i)
        s += seed + "row " + std::to_string(i % 50) + ": lorem ipsum dolor sit amet; ";
    s.resize(n);
    return s;
}

class TypedClientTest : public ::testing::TestWithParam<folsom::Protocol> {
  protected:
    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = GetParam();
        return o;
    }
    folsom::test::MemcachedServer server_;
    folsom::BlockingClient bytes_{options()};  // the plain byte client, same connections
};

TEST_P(TypedClientTest, StringRoundTripWithFutures) {
    Text t(bytes_.async());
    EXPECT_EQ(t.set("greeting", std::string("hello"), 60s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(t.get("greeting", asio::use_future).get(), "hello");
    EXPECT_EQ(t.get("absent", asio::use_future).get(), std::nullopt);
    // The flag bit marks the encoding for every reader.
    auto raw = bytes_.get("greeting");
    ASSERT_TRUE(raw);
    EXPECT_EQ(raw->flags, flags::string);
    EXPECT_EQ(raw->data, "hello");

    EXPECT_EQ(t.add("greeting", std::string("x"), 0s, asio::use_future).get(), Status::not_stored);
    EXPECT_EQ(t.add("fresh", std::string("x"), 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(t.replace("absent", std::string("x"), 0s, asio::use_future).get(),
              Status::not_stored);
    EXPECT_EQ(t.replace("fresh", std::string("y"), 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(t.get("fresh", asio::use_future).get(), "y");

    auto g = t.gets("fresh", asio::use_future).get();
    ASSERT_TRUE(g);
    EXPECT_EQ(g->value, "y");
    ASSERT_NE(g->cas, 0u);
    EXPECT_EQ(t.cas("fresh", std::string("z"), g->cas, 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(t.cas("fresh", std::string("w"), g->cas, 0s, asio::use_future).get(), Status::exists);
    EXPECT_EQ(t.get("fresh", asio::use_future).get(), "z");

    EXPECT_EQ(t.gat("fresh", 100s, asio::use_future).get(), "z");
    auto gats = t.gats("fresh", 100s, asio::use_future).get();
    ASSERT_TRUE(gats);
    EXPECT_EQ(gats->value, "z");
    EXPECT_NE(gats->cas, 0u);
    EXPECT_EQ(t.touch("fresh", 50s, asio::use_future).get(), Status::touched);
    EXPECT_EQ(t.del("fresh", asio::use_future).get(), Status::deleted);
    EXPECT_EQ(t.get("fresh", asio::use_future).get(), std::nullopt);
}

TEST_P(TypedClientTest, MultiGetDecodesEveryKeyInOrder) {
    Text t(bytes_.async());
    std::vector<std::string> keys;
    for (int i = 0; i < 40; ++i) {
        keys.push_back("m" + std::to_string(i));
        if (i % 3 != 0) {
            ASSERT_EQ(t.set(keys.back(), "v" + std::to_string(i), 0s, asio::use_future).get(),
                      Status::stored);
        }
    }
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    auto r = t.get_multi(views, asio::use_future).get();
    ASSERT_TRUE(r.complete());
    ASSERT_EQ(r.values.size(), keys.size());
    for (int i = 0; i < 40; ++i) {
        if (i % 3 == 0) {
            EXPECT_FALSE(r.values[i]) << i;
        } else {
            EXPECT_EQ(r.values[i], "v" + std::to_string(i)) << i;
        }
    }
    EXPECT_EQ(r.to_map(views).size(), 26u);
    auto withcas = t.gets_multi(views, asio::use_future).get();
    ASSERT_TRUE(withcas.values[1]);
    EXPECT_EQ(withcas.values[1]->value, "v1");
    EXPECT_NE(withcas.values[1]->cas, 0u);
    auto touched = t.gat_multi(views, 60s, asio::use_future).get();
    EXPECT_EQ(touched.values[2], "v2");
}

TEST_P(TypedClientTest, CallbacksAndCoroutines) {
    Text t(bytes_.async());
    ASSERT_EQ(t.set("k", std::string("v"), 0s, asio::use_future).get(), Status::stored);

    // A callback bound to a strand runs there: the typed layer keeps the handler's executor.
    auto strand = asio::make_strand(t.get_executor());
    std::promise<std::string> got;
    t.get("k", asio::bind_executor(strand, [&](std::error_code ec, std::optional<std::string> v) {
              got.set_value(ec                                ? "error"
                            : strand.running_in_this_thread() ? v.value_or("miss")
                                                              : "wrong executor");
          }));
    EXPECT_EQ(got.get_future().get(), "v");

    // A coroutine awaits typed results.
    auto f = asio::co_spawn(
        t.get_executor(),
        [t]() mutable -> asio::awaitable<std::string> {
            co_await t.set("co", std::string("routine"), 0s, asio::use_awaitable);
            auto v = co_await t.get("co", asio::use_awaitable);
            auto g = co_await t.gets("co", asio::use_awaitable);
            co_return v.value_or("miss") + "/" + (g && g->cas ? g->value : "no cas");
        },
        asio::use_future);
    EXPECT_EQ(f.get(), "routine/routine");
}

TEST_P(TypedClientTest, UserTypeThroughTraits) {
    TypedClient<Point> points(bytes_.async());
    ASSERT_EQ(points.set("p", Point{-7, 1 << 20}, 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(points.get("p", asio::use_future).get(), (Point{-7, 1 << 20}));
    // A value that is not a Point: the read fails with decode_failed, without a value.
    ASSERT_EQ(bytes_.set("not-a-point", "hello"), Status::stored);
    auto f = points.get("not-a-point", asio::use_future);
    try {
        f.get();
        ADD_FAILURE() << "decoded a string as a Point";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::decode_failed);
    }
}

class TypedCompression : public ::testing::TestWithParam<std::tuple<folsom::Protocol, Codec>> {
  protected:
    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = std::get<0>(GetParam());
        return o;
    }
    Codec codec() const { return std::get<1>(GetParam()); }
    std::uint32_t codec_flag() const { return codec() == Codec::zstd ? flags::zstd : flags::lz4; }
    CompressedText compressed(std::size_t cap = 1024 * 1024) {
        return CompressedText(
            bytes_.async(), Compressed<Transcoder<std::string>>(CompressionOptions{
                                .codec = codec(), .threshold = 256, .max_decompressed_size = cap}));
    }
    folsom::test::MemcachedServer server_;
    folsom::BlockingClient bytes_{options()};
};

TEST_P(TypedCompression, PlainClientSeesCompressedBytesAndTheCodecFlag) {
    auto t = compressed();
    const std::string big = text(100'000);
    ASSERT_EQ(t.set("big", big, 0s, asio::use_future).get(), Status::stored);
    ASSERT_EQ(t.set("small", std::string("tiny"), 0s, asio::use_future).get(), Status::stored);

    // What the server holds, read by a client that knows nothing of compression.
    auto raw = bytes_.get("big");
    ASSERT_TRUE(raw);
    EXPECT_EQ(raw->flags, flags::string | codec_flag());
    EXPECT_LT(raw->data.size(), big.size() / 5);
    std::string inflated;
    ASSERT_FALSE(folsom::compression::decompress(codec(), raw->data, big.size(), inflated));
    EXPECT_EQ(inflated, big);
    // Below the threshold: stored as it is.
    auto small = bytes_.get("small");
    ASSERT_TRUE(small);
    EXPECT_EQ(small->flags, flags::string);
    EXPECT_EQ(small->data, "tiny");

    // And the typed client decodes both back.
    EXPECT_EQ(t.get("big", asio::use_future).get(), big);
    EXPECT_EQ(t.get("small", asio::use_future).get(), "tiny");
    // A reader configured for the other codec still reads it (the flag says which).
    CompressedText other(bytes_.async(),
                         Compressed<Transcoder<std::string>>(CompressionOptions{
                             .codec = codec() == Codec::zstd ? Codec::lz4 : Codec::zstd}));
    EXPECT_EQ(other.get("big", asio::use_future).get(), big);
    // A typed reader without Compressed<> refuses rather than hand out compressed bytes.
    Text plain(bytes_.async());
    auto f = plain.get("big", asio::use_future);
    EXPECT_THROW(f.get(), std::system_error);
}

TEST_P(TypedCompression, InteroperatesWithAnUncompressedWriter) {
    // Written by a plain client: no codec flag, so read untouched, however compressible.
    const std::string big = text(50'000, "plain ");
    ASSERT_EQ(bytes_.set("plain-big", big, 0s), Status::stored);
    ASSERT_EQ(bytes_.set("plain-flags", "x", 0s, 0x1234), Status::stored);
    auto t = compressed();
    EXPECT_EQ(t.get("plain-big", asio::use_future).get(), big);
    EXPECT_EQ(t.get("plain-flags", asio::use_future).get(), "x");
    // Mixed in one multi-get with a compressed value.
    ASSERT_EQ(t.set("typed-big", big, 0s, asio::use_future).get(), Status::stored);
    const std::string_view keys[] = {"plain-big", "typed-big", "absent"};
    auto r = t.get_multi(keys, asio::use_future).get();
    ASSERT_TRUE(r.complete());
    EXPECT_EQ(r.values[0], big);
    EXPECT_EQ(r.values[1], big);
    EXPECT_FALSE(r.values[2]);
}

TEST_P(TypedCompression, LargerThanTheItemLimitWhenCompressed) {
    // 3 MiB of text fits memcached's 1 MiB items once compressed; the cap allows reading it.
    auto t = compressed(4 * 1024 * 1024);
    const std::string huge = text(3 * 1024 * 1024);
    ASSERT_EQ(t.set("huge", huge, 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(t.get("huge", asio::use_future).get(), huge);
    // A reader with the default 1 MiB cap refuses it as a bomb.
    auto f = compressed().get("huge", asio::use_future);
    try {
        f.get();
        ADD_FAILURE() << "inflated past the cap";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::decode_failed);
    }
}

TEST_P(TypedCompression, BombsAndCorruptValuesAreRefused) {
    // A plain client plants a tiny value that claims 512 MiB, and one that is garbage.
    std::string bomb;
    if (codec() == Codec::zstd) {
        bomb = std::string("\x28\xb5\x2f\xfd\xe0", 5);
        const std::uint64_t claimed = std::uint64_t{512} << 20;
        for (int i = 0; i < 8; ++i)
            bomb += static_cast<char>((claimed >> (8 * i)) & 0xff);
        bomb += std::string("\x01\x00\x00", 3);
    } else {
        bomb = std::string("\x00\x00\x00\x20\x00", 5);  // 512 MiB, one-byte block
    }
    ASSERT_EQ(bytes_.set("bomb", bomb, 0s, flags::string | codec_flag()), Status::stored);
    ASSERT_EQ(bytes_.set("corrupt", "\x10\x00\x00\x00garbage!", 0s, codec_flag()), Status::stored);
    ASSERT_EQ(bytes_.set("fine", "ok", 0s), Status::stored);
    auto t = compressed();
    for (const char* key : {"bomb", "corrupt"}) {
        auto f = t.get(key, asio::use_future);
        try {
            f.get();
            ADD_FAILURE() << key << " decoded";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::decode_failed) << key;
        }
    }
    // In a multi-get, only the bad keys fail; the others are delivered.
    const std::string_view keys[] = {"bomb", "fine", "corrupt", "absent"};
    auto r = t.get_multi(keys, asio::use_future).get();
    ASSERT_EQ(r.errors.size(), 4u);
    EXPECT_EQ(r.errors[0], errc::decode_failed);
    EXPECT_FALSE(r.errors[1]);
    EXPECT_EQ(r.errors[2], errc::decode_failed);
    EXPECT_FALSE(r.errors[3]);
    EXPECT_FALSE(r.values[0]);
    EXPECT_EQ(r.values[1], "ok");
    EXPECT_FALSE(r.values[2]);
    EXPECT_FALSE(r.values[3]);
    // The connection is unharmed.
    EXPECT_EQ(t.get("fine", asio::use_future).get(), "ok");
}

INSTANTIATE_TEST_SUITE_P(AllProtocols, TypedClientTest, folsom::test::all_protocols,
                         folsom::test::protocol_name);

std::string compression_name(
    const ::testing::TestParamInfo<std::tuple<folsom::Protocol, Codec>>& p) {
    const auto proto = std::get<0>(p.param);
    return std::string(proto == folsom::Protocol::ascii    ? "ascii"
                       : proto == folsom::Protocol::binary ? "binary"
                                                           : "meta") +
           (std::get<1>(p.param) == Codec::zstd ? "_zstd" : "_lz4");
}

INSTANTIATE_TEST_SUITE_P(AllProtocols, TypedCompression,
                         ::testing::Combine(folsom::test::all_protocols,
                                            ::testing::Values(Codec::zstd, Codec::lz4)),
                         compression_name);

}  // namespace
