// Key validation (protocol/key.hpp) checks eight bytes at a time; it must refuse exactly the
// keys the byte-by-byte rule refuses: empty, over 250 bytes, or holding a byte <= 0x20 or 0x7f.
#include "folsom/protocol/key.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

bool refused_by_rule(const std::string& key) {
    if (key.empty() || key.size() > folsom::protocol::max_key_length) return true;
    for (char c : key) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return true;
    }
    return false;
}

TEST(KeyValidation, MatchesTheByteRuleForEveryByteAtEveryPosition) {
    // Every byte value at every position of keys of every length the word loop handles
    // differently (short keys, whole words, overlapping tails), over two backgrounds: plain
    // ASCII and bytes >= 0x80 (UTF-8 keys are allowed), which must not mask a refused byte.
    int checked = 0;
    for (char background : {'k', static_cast<char>(0xc3)}) {
        for (std::size_t len = 1; len <= 41; ++len) {
            for (std::size_t pos = 0; pos < len; ++pos) {
                for (int b = 0; b < 256; ++b) {
                    std::string key(len, background);
                    key[pos] = static_cast<char>(b);
                    const bool refused = static_cast<bool>(folsom::protocol::validate_key(key));
                    ASSERT_EQ(refused, refused_by_rule(key))
                        << "length " << len << " byte " << b << " at " << pos;
                    ++checked;
                }
            }
        }
    }
    EXPECT_EQ(checked, 2 * 256 * (41 * 42 / 2));
}

TEST(KeyValidation, RefusesEmptyAndOverlongKeys) {
    EXPECT_EQ(folsom::protocol::validate_key(""), folsom::errc::invalid_key);
    EXPECT_FALSE(folsom::protocol::validate_key(std::string(250, 'a')));
    EXPECT_EQ(folsom::protocol::validate_key(std::string(251, 'a')), folsom::errc::invalid_key);
    std::string k(250, 'a');
    k[249] = ' ';
    EXPECT_EQ(folsom::protocol::validate_key(k), folsom::errc::invalid_key);
}

TEST(KeyValidation, BinaryKeysAreAnyBytesFromOneTo186) {
    using folsom::protocol::validate_binary_key;
    using folsom::protocol::validate_key;
    for (int b = 0; b < 256; ++b) {
        const std::string key(1, static_cast<char>(b));
        EXPECT_FALSE(validate_binary_key(key)) << b;
        EXPECT_FALSE(validate_key(key, true)) << b;
        // The text rule still applies without binary keys.
        EXPECT_EQ(static_cast<bool>(validate_key(key, false)), refused_by_rule(key)) << b;
    }
    EXPECT_FALSE(validate_binary_key(std::string("\0\r\n \x7f\xff", 6)));
    EXPECT_FALSE(validate_binary_key(std::string(186, '\0')));
    EXPECT_EQ(validate_binary_key(std::string(187, 'a')), folsom::errc::invalid_key);
    EXPECT_EQ(validate_binary_key(""), folsom::errc::invalid_key);
    EXPECT_EQ(validate_key(std::string(200, 'a'), true), folsom::errc::invalid_key);
    EXPECT_FALSE(validate_key(std::string(200, 'a'), false));
}

}  // namespace
