#include "folsom/error.hpp"

#include "folsom/status.hpp"

#include <gtest/gtest.h>

namespace {

TEST(Error, CategoryIsFolsomAndEveryCodeHasAMessage) {
    for (int e = static_cast<int>(folsom::errc::not_connected);
         e <= static_cast<int>(folsom::errc::no_sasl_mechanism); ++e) {
        std::error_code ec = static_cast<folsom::errc>(e);
        EXPECT_STREQ(ec.category().name(), "folsom");
        EXPECT_NE(ec.message(), "unknown folsom error") << e;
    }
}

TEST(Error, ComparesWithTheEnum) {
    std::error_code ec = folsom::errc::timeout;
    EXPECT_EQ(ec, folsom::errc::timeout);
    EXPECT_NE(ec, folsom::errc::closed);
    EXPECT_TRUE(ec);
}

TEST(Status, ProtocolWords) {
    EXPECT_EQ(folsom::to_string(folsom::Status::stored), "STORED");
    EXPECT_EQ(folsom::to_string(folsom::Status::not_found), "NOT_FOUND");
}

}  // namespace
