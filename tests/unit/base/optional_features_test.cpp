// Each optional dependency (folsom/config.hpp): with it, the feature works; without it (the
// minimal build, tests/install/check_minimal_build.cmake), using the feature fails with the
// error that names the missing library, and nothing fails to link.
#include "folsom/cluster/discovery.hpp"
#include "folsom/compressed.hpp"
#include "folsom/compression.hpp"
#include "folsom/config.hpp"
#include "folsom/error.hpp"
#include "folsom/routes.hpp"
#include "folsom/transcoder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <system_error>

namespace {

using folsom::errc;

template <class F>
std::error_code code_of_throw(F&& f) {
    try {
        f();
    } catch (const std::system_error& e) {
        return e.code();
    }
    return {};
}

TEST(OptionalFeatures, ConfigHeaderHasTheVersion) {
    EXPECT_EQ(std::to_string(FOLSOM_VERSION_MAJOR) + "." + std::to_string(FOLSOM_VERSION_MINOR) +
                  "." + std::to_string(FOLSOM_VERSION_PATCH),
              FOLSOM_VERSION_STRING);
}

TEST(OptionalFeatures, DnsSrvDiscoveryNeedsCAres) {
    const auto ec =
        code_of_throw([] { (void)folsom::cluster::make_dns_srv_discovery("_m._tcp.example"); });
    if (FOLSOM_HAVE_C_ARES) {
        EXPECT_FALSE(ec) << ec.message();
    } else {
        EXPECT_EQ(ec, errc::built_without_c_ares);
        EXPECT_EQ(ec.message(), "built without c-ares: DNS SRV discovery is unavailable");
    }
}

using StringCompressed = folsom::Compressed<folsom::Transcoder<std::string>>;

void expect_codec(folsom::Codec codec, bool built_in, errc missing, const char* message) {
    const std::string text(4096, 'z');
    std::string back;
    if (built_in) {
        EXPECT_FALSE(folsom::compression::available(codec));
        auto packed = folsom::compression::compress(codec, text);
        ASSERT_TRUE(packed);
        EXPECT_FALSE(folsom::compression::decompress(codec, *packed, text.size(), back));
        EXPECT_EQ(back, text);
        EXPECT_FALSE(code_of_throw([&] { StringCompressed c({.codec = codec}); }));
        return;
    }
    EXPECT_EQ(folsom::compression::available(codec), missing);
    EXPECT_EQ(folsom::compression::available(codec).message(), message);
    EXPECT_FALSE(folsom::compression::compress(codec, text));
    // A value another client stored compressed with the missing codec: refused, named.
    EXPECT_EQ(folsom::compression::decompress(codec, std::string("\x10\0\0\0abcd", 8), 1024, back),
              missing);
    EXPECT_EQ(code_of_throw([&] { StringCompressed c({.codec = codec}); }), missing);
}

TEST(OptionalFeatures, ZstdCompressionNeedsZstd) {
    expect_codec(folsom::Codec::zstd, FOLSOM_HAVE_ZSTD, errc::built_without_zstd,
                 "built without zstd: zstd compression is unavailable");
}

TEST(OptionalFeatures, Lz4CompressionNeedsLz4) {
    expect_codec(folsom::Codec::lz4, FOLSOM_HAVE_LZ4, errc::built_without_lz4,
                 "built without LZ4: LZ4 compression is unavailable");
}

TEST(OptionalFeatures, Crc32HashNeedsZlib) {
    folsom::RouteConfig config;
    config.pools = {{.name = "A", .servers = {"127.0.0.1:1"}},
                    {.name = "B", .servers = {"127.0.0.1:2"}}};
    config.route =
        folsom::routes::hash({folsom::routes::pool("A"), folsom::routes::pool("B")}, "Crc32");
    if (FOLSOM_HAVE_ZLIB) {
        EXPECT_NO_THROW(config.validate());
        return;
    }
    try {
        config.validate();
        ADD_FAILURE() << "validate() accepted Crc32 without zlib";
    } catch (const folsom::RouteConfigError& e) {
        EXPECT_EQ(e.code(), errc::built_without_zlib);
        EXPECT_EQ(e.path(), "route.hash_func");
        EXPECT_EQ(e.message(),
                  "route.hash_func: built without zlib: the Crc32 hash function is unavailable");
    }
}

TEST(OptionalFeatures, JsonRouteConfigurationNeedsNlohmannJson) {
    const char* json = R"({"pools": {"A": {"servers": ["127.0.0.1:1"]}}, "route": "PoolRoute|A"})";
    if (FOLSOM_HAVE_NLOHMANN_JSON) {
        EXPECT_EQ(folsom::RouteConfig::parse(json).pools.size(), 1u);
        return;
    }
    const auto expect_refused = [](auto&& read) {
        try {
            read();
            ADD_FAILURE() << "a JSON route configuration was read without nlohmann-json";
        } catch (const folsom::RouteConfigError& e) {
            EXPECT_EQ(e.code(), errc::built_without_nlohmann_json);
            EXPECT_EQ(e.message(),
                      "built without nlohmann-json: JSON route configurations are unavailable");
        }
    };
    expect_refused([&] { (void)folsom::RouteConfig::parse(json); });
    // Refused before the file is opened: the reason is the build, not the file.
    expect_refused([] { (void)folsom::RouteConfig::load("/nonexistent/routes.json"); });
}

}  // namespace
