#include "folsom/protocol/ascii_encoder.hpp"

#include "folsom/error.hpp"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::errc;
using folsom::protocol::Limits;
using folsom::protocol::OutputBuffer;
using namespace folsom::protocol::ascii;
using namespace std::literals;

std::string encoded(const std::function<std::error_code(OutputBuffer&)>& encode) {
    OutputBuffer out;
    const std::error_code ec = encode(out);
    EXPECT_FALSE(ec) << ec.message();
    return out.contiguous();
}

// ---- exact bytes of every command ----------------------------------------------------------

TEST(AsciiEncoder, Retrieve) {
    const std::array one = {"foo"sv};
    const std::array three = {"a"sv, "bb"sv, "ccc"sv};
    EXPECT_EQ(encoded([&](auto& o) { return encode_retrieve(o, RetrieveCommand::get, one); }),
              "get foo\r\n");
    EXPECT_EQ(encoded([&](auto& o) { return encode_retrieve(o, RetrieveCommand::get, three); }),
              "get a bb ccc\r\n");
    EXPECT_EQ(encoded([&](auto& o) { return encode_retrieve(o, RetrieveCommand::gets, three); }),
              "gets a bb ccc\r\n");
    EXPECT_EQ(encoded([&](auto& o) { return encode_retrieve(o, RetrieveCommand::gat, one, 300); }),
              "gat 300 foo\r\n");
    EXPECT_EQ(encoded([&](auto& o) { return encode_retrieve(o, RetrieveCommand::gats, three, 0); }),
              "gats 0 a bb ccc\r\n");
}

TEST(AsciiEncoder, RetrieveWithoutKeysIsRefused) {
    OutputBuffer out;
    EXPECT_EQ(encode_retrieve(out, RetrieveCommand::get, {}), errc::invalid_argument);
    EXPECT_TRUE(out.empty());
}

TEST(AsciiEncoder, RetrieveMoreExtendsTheLastGetLine) {
    OutputBuffer out;
    out.append("set x 0 0 1\r\ny\r\n"sv);
    const std::array<std::string_view, 1> first = {"a"};
    ASSERT_FALSE(encode_retrieve(out, RetrieveCommand::gets, first, 0));
    ASSERT_FALSE(encode_retrieve_more(out, "bb"));
    ASSERT_FALSE(encode_retrieve_more(out, std::string(250, 'k')));
    EXPECT_EQ(out.contiguous(), "set x 0 0 1\r\ny\r\ngets a bb " + std::string(250, 'k') + "\r\n");
    // A bad key leaves the line as it was.
    const std::string before = out.contiguous();
    EXPECT_EQ(encode_retrieve_more(out, "two words"), errc::invalid_key);
    EXPECT_EQ(encode_retrieve_more(out, "inject\r\nflush_all"), errc::invalid_key);
    EXPECT_EQ(encode_retrieve_more(out, ""), errc::invalid_key);
    EXPECT_EQ(out.contiguous(), before);
}

TEST(AsciiEncoder, StoreCommands) {
    struct Case {
        StoreCommand cmd;
        std::string_view word;
    };
    // (A plain loop variable: clang 14 cannot capture structured bindings in a lambda.)
    for (const Case& c :
         {Case{StoreCommand::set, "set"}, Case{StoreCommand::add, "add"},
          Case{StoreCommand::replace, "replace"}, Case{StoreCommand::append, "append"},
          Case{StoreCommand::prepend, "prepend"}}) {
        EXPECT_EQ(encoded([&](auto& o) {
                      return encode_store(o, c.cmd, "key", "hello", 42, 3600, 0, false);
                  }),
                  std::string(c.word) + " key 42 3600 5\r\nhello\r\n");
    }
}

TEST(AsciiEncoder, StoreWritesCasOnlyForCas) {
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_store(o, StoreCommand::cas, "k", "v", 0, 0, 18446744073709551615ULL,
                                      false);
              }),
              "cas k 0 0 1 18446744073709551615\r\nv\r\n");
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_store(o, StoreCommand::set, "k", "v", 0, 0, 77, false);
              }),
              "set k 0 0 1\r\nv\r\n");
}

TEST(AsciiEncoder, StoreNoreplyFlagsAndBinaryData) {
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_store(o, StoreCommand::set, "k", "a\r\n\0b"sv, 4294967295U,
                                      4294967295U, 0, true);
              }),
              "set k 4294967295 4294967295 5 noreply\r\na\r\n\0b\r\n"s);
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_store(o, StoreCommand::set, "k", "", 0, 0, 0, false);
              }),
              "set k 0 0 0\r\n\r\n");
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_store(o, StoreCommand::cas, "k", "v", 1, 2, 3, true);
              }),
              "cas k 1 2 1 3 noreply\r\nv\r\n");
}

TEST(AsciiEncoder, Delete) {
    EXPECT_EQ(encoded([](auto& o) { return encode_delete(o, "foo"); }), "delete foo\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_delete(o, "foo", true); }),
              "delete foo noreply\r\n");
}

TEST(AsciiEncoder, Arithmetic) {
    EXPECT_EQ(encoded([](auto& o) { return encode_arith(o, ArithCommand::incr, "n", 1); }),
              "incr n 1\r\n");
    EXPECT_EQ(encoded([](auto& o) {
                  return encode_arith(o, ArithCommand::decr, "n", 18446744073709551615ULL, true);
              }),
              "decr n 18446744073709551615 noreply\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_arith(o, ArithCommand::incr, "n", 0); }),
              "incr n 0\r\n");
}

TEST(AsciiEncoder, Touch) {
    EXPECT_EQ(encoded([](auto& o) { return encode_touch(o, "k", 10); }), "touch k 10\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_touch(o, "k", 0, true); }),
              "touch k 0 noreply\r\n");
}

TEST(AsciiEncoder, FlushAll) {
    EXPECT_EQ(encoded([](auto& o) { return encode_flush_all(o); }), "flush_all\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_flush_all(o, 30u); }), "flush_all 30\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_flush_all(o, 0u, true); }),
              "flush_all 0 noreply\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_flush_all(o, std::nullopt, true); }),
              "flush_all noreply\r\n");
}

TEST(AsciiEncoder, Stats) {
    EXPECT_EQ(encoded([](auto& o) { return encode_stats(o); }), "stats\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_stats(o, "slabs"); }), "stats slabs\r\n");
    // Arguments, one space apart (what libmemcached's memcached_dump sends).
    EXPECT_EQ(encoded([](auto& o) { return encode_stats(o, "cachedump 1 0"); }),
              "stats cachedump 1 0\r\n");
    for (std::string_view bad :
         {"items\r\nflush_all"sv, "a  b"sv, " a"sv, "a "sv, "x\n"sv, "a \r\nflush_all"sv}) {
        OutputBuffer out;
        EXPECT_EQ(encode_stats(out, bad), errc::invalid_argument) << bad;
        EXPECT_TRUE(out.empty());
    }
}

TEST(AsciiEncoder, VersionVerbosityQuit) {
    EXPECT_EQ(encoded([](auto& o) { return encode_version(o); }), "version\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_verbosity(o, 1); }), "verbosity 1\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_verbosity(o, 0, true); }),
              "verbosity 0 noreply\r\n");
    EXPECT_EQ(encoded([](auto& o) { return encode_quit(o); }), "quit\r\n");
}

TEST(AsciiEncoder, CommandsAppendToWhatIsAlreadyThere) {
    // Pipelining: requests are appended one after another into the same buffer.
    OutputBuffer out;
    ASSERT_FALSE(encode_delete(out, "a"));
    ASSERT_FALSE(encode_touch(out, "b", 1));
    ASSERT_FALSE(encode_version(out));
    EXPECT_EQ(out.contiguous(), "delete a\r\ntouch b 1\r\nversion\r\n");
}

// ---- refusals: nothing reaches the buffer --------------------------------------------------

std::vector<std::string> invalid_keys() {
    std::vector<std::string> keys = {"",       std::string(251, 'k'), "a b",   " ",     "a\rb",
                                     "a\nb",   "a\r\nget b",          "a\0b"s, "a\x7f", "\t",
                                     "key\x01"};
    for (int c = 0; c < 0x20; ++c) {
        // Built in place rather than with operator+, on which g++ 12 -O3 emits a false -Wrestrict.
        std::string k = "k";
        k.push_back(static_cast<char>(c));
        keys.push_back(std::move(k));
    }
    return keys;
}

TEST(AsciiEncoder, InvalidKeysAreRefusedAndNothingIsAppended) {
    const std::string big(64 * 1024, 'v');  // would be referenced if it got that far
    for (const std::string& key : invalid_keys()) {
        SCOPED_TRACE(testing::PrintToString(key));
        const std::array keys = {std::string_view("good"), std::string_view(key)};
        const std::vector<std::function<std::error_code(OutputBuffer&)>> encoders = {
            [&](auto& o) { return encode_retrieve(o, RetrieveCommand::get, keys); },
            [&](auto& o) { return encode_retrieve(o, RetrieveCommand::gats, keys, 5); },
            [&](auto& o) { return encode_store(o, StoreCommand::set, key, "v", 0, 0, 0, false); },
            [&](auto& o) { return encode_store(o, StoreCommand::cas, key, big, 0, 0, 1, false); },
            [&](auto& o) { return encode_delete(o, key); },
            [&](auto& o) { return encode_arith(o, ArithCommand::incr, key, 1); },
            [&](auto& o) { return encode_touch(o, key, 1); },
        };
        for (std::size_t i = 0; i < encoders.size(); ++i) {
            OutputBuffer out;
            out.append("before\r\n");  // a request already queued must stay intact
            EXPECT_EQ(encoders[i](out), errc::invalid_key) << "encoder " << i;
            EXPECT_EQ(out.arena_size(), 8u) << "encoder " << i;
            EXPECT_EQ(out.ref_count(), 0u) << "encoder " << i;
            EXPECT_EQ(out.contiguous(), "before\r\n");
        }
    }
}

TEST(AsciiEncoder, LongestValidKeyIsAccepted) {
    const std::string key(250, 'k');
    EXPECT_EQ(encoded([&](auto& o) { return encode_delete(o, key); }), "delete " + key + "\r\n");
    // UTF-8 and other bytes >= 0x80 are allowed in keys.
    EXPECT_EQ(encoded([](auto& o) { return encode_delete(o, "k\xc3\xa4y"); }),
              "delete k\xc3\xa4y\r\n");
}

TEST(AsciiEncoder, ValueOverTheLimitIsRefused) {
    Limits limits;
    limits.max_value_size = 10;
    OutputBuffer out;
    out.append("x");
    EXPECT_EQ(
        encode_store(out, StoreCommand::set, "k", std::string(11, 'v'), 0, 0, 0, false, limits),
        errc::value_too_large);
    EXPECT_EQ(out.contiguous(), "x");
    EXPECT_EQ(out.ref_count(), 0u);
    EXPECT_FALSE(
        encode_store(out, StoreCommand::set, "k", std::string(10, 'v'), 0, 0, 0, false, limits));
}

// ---- large values are referenced, not copied -----------------------------------------------

TEST(AsciiEncoder, LargeValueIsReferencedNotCopied) {
    const std::string big(default_ref_threshold, 'v');
    OutputBuffer out;
    ASSERT_FALSE(encode_store(out, StoreCommand::set, "k", big, 1, 2, 0, false));
    EXPECT_EQ(out.ref_count(), 1u);
    const std::string header = "set k 1 2 " + std::to_string(big.size()) + "\r\n";
    EXPECT_EQ(out.arena_size(), header.size() + 2);  // the value is not in the arena
    EXPECT_EQ(out.size(), header.size() + big.size() + 2);

    std::vector<OutputBuffer::Segment> segs;
    out.for_each_segment([&](OutputBuffer::Segment s) { segs.push_back(s); });
    ASSERT_EQ(segs.size(), 3u);
    EXPECT_EQ(std::string_view(segs[0].data, segs[0].size), header);
    EXPECT_EQ(segs[1].data, big.data());  // the caller's bytes themselves
    EXPECT_EQ(segs[1].size, big.size());
    EXPECT_EQ(std::string_view(segs[2].data, segs[2].size), "\r\n");
    EXPECT_EQ(out.contiguous(), header + big + "\r\n");
}

TEST(AsciiEncoder, SmallValueIsCopied) {
    const std::string small(default_ref_threshold - 1, 's');
    OutputBuffer out;
    ASSERT_FALSE(encode_store(out, StoreCommand::set, "k", small, 0, 0, 0, false));
    EXPECT_EQ(out.ref_count(), 0u);
    // A caller can choose its own threshold.
    OutputBuffer out2;
    ASSERT_FALSE(
        encode_store(out2, StoreCommand::append, "k", "tiny", 0, 0, 0, false, Limits{}, 4));
    EXPECT_EQ(out2.ref_count(), 1u);
    EXPECT_EQ(out2.contiguous(), "append k 0 0 4\r\ntiny\r\n");
}

}  // namespace
