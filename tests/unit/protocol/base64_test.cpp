#include "folsom/protocol/base64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace folsom::protocol {
namespace {

std::string encode(std::string_view in) {
    std::string out(base64_encoded_size(in.size()), '?');
    out.resize(base64_encode(in, out.data()));
    return out;
}

bool decode(std::string_view in, std::string& out) {
    out.assign(base64_max_decoded_size(in.size()), '?');
    std::size_t n = 0;
    if (!base64_decode(in, out.data(), n)) return false;
    out.resize(n);
    return true;
}

TEST(Base64, Rfc4648TestVectors) {
    const std::pair<std::string_view, std::string_view> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (auto [plain, b64] : vectors) {
        EXPECT_EQ(encode(plain), b64);
        std::string back;
        ASSERT_TRUE(decode(b64, back)) << b64;
        EXPECT_EQ(back, plain);
    }
}

TEST(Base64, AllByteValuesRoundTrip) {
    std::string all;
    for (int i = 0; i < 256; ++i)
        all.push_back(static_cast<char>(i));
    for (std::size_t n = 0; n <= all.size(); ++n) {
        const std::string_view in(all.data(), n);
        std::string back;
        ASSERT_TRUE(decode(encode(in), back));
        EXPECT_EQ(back, in);
    }
    EXPECT_EQ(encode("\xfb\xff"), "+/8=");
}

TEST(Base64, RejectsNonCanonicalInput) {
    std::string out;
    for (std::string_view bad : {"Zg", "Zg=", "Zm9", "Z===", "Zg=a", "Zg==Zg==", "Zm9v!A==", "Zm 9",
                                 "Zh==", "Zm9=", "=Zm9"}) {
        EXPECT_FALSE(decode(bad, out)) << bad;
    }
}

}  // namespace
}  // namespace folsom::protocol
