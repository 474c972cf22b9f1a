#include "folsom/protocol/output_buffer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using folsom::protocol::OutputBuffer;

std::vector<std::string_view> segments(const OutputBuffer& out) {
    std::vector<std::string_view> v;
    out.for_each_segment([&](OutputBuffer::Segment s) { v.emplace_back(s.data, s.size); });
    return v;
}

TEST(OutputBuffer, EmptyHasNoSegments) {
    OutputBuffer out;
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(out.size(), 0u);
    EXPECT_TRUE(segments(out).empty());
    EXPECT_EQ(out.contiguous(), "");
}

TEST(OutputBuffer, CopiedPiecesFormOneSegment) {
    OutputBuffer out;
    out.append("get");
    out.append(' ');
    out.append("k");
    out.append_decimal(0);
    out.append_decimal(18446744073709551615ULL);
    EXPECT_EQ(segments(out), std::vector<std::string_view>{"get k018446744073709551615"});
    EXPECT_EQ(out.size(), out.arena_size());
}

TEST(OutputBuffer, ReferencesInterleaveWithArenaRunsInWriteOrder) {
    const std::string v1 = "VALUE-ONE";
    const std::string v2 = "VALUE-TWO";
    const std::string v3 = "THREE";
    OutputBuffer out;
    out.append("a ");
    out.append_ref(v1);
    out.append("\r\nb ");
    out.append_ref(v2);
    out.append_ref(v3);  // two references in a row: no empty arena run between them
    out.append("\r\n");
    const auto segs = segments(out);
    ASSERT_EQ(segs.size(), 6u);
    EXPECT_EQ(segs[0], "a ");
    EXPECT_EQ(segs[1].data(), v1.data());
    EXPECT_EQ(segs[2], "\r\nb ");
    EXPECT_EQ(segs[3].data(), v2.data());
    EXPECT_EQ(segs[4].data(), v3.data());
    EXPECT_EQ(segs[5], "\r\n");
    EXPECT_EQ(out.contiguous(), "a VALUE-ONE\r\nb VALUE-TWOTHREE\r\n");
    EXPECT_EQ(out.size(), out.contiguous().size());
    EXPECT_EQ(out.ref_count(), 3u);
    EXPECT_LE(segs.size(), out.segment_count());
}

TEST(OutputBuffer, ReferenceFirstAndLast) {
    const std::string v = "xyz";
    OutputBuffer out;
    out.append_ref(v);
    EXPECT_EQ(segments(out), std::vector<std::string_view>{"xyz"});
    out.append("!");
    out.append_ref(v);
    const auto segs = segments(out);
    ASSERT_EQ(segs.size(), 3u);
    EXPECT_EQ(out.contiguous(), "xyz!xyz");
}

TEST(OutputBuffer, EmptyReferenceIsDropped) {
    OutputBuffer out;
    out.append_ref({});
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(out.ref_count(), 0u);
}

TEST(OutputBuffer, AppendValueUsesTheThreshold) {
    const std::string small = "abc";
    const std::string large = "abcd";
    OutputBuffer out;
    out.append_value(small, 4);
    EXPECT_EQ(out.ref_count(), 0u);
    out.append_value(large, 4);
    EXPECT_EQ(out.ref_count(), 1u);
    EXPECT_EQ(out.contiguous(), "abcabcd");
}

TEST(OutputBuffer, TruncateRollsBackToAMark) {
    const std::string v = "ref";
    OutputBuffer out;
    out.append("keep ");
    out.append_ref(v);
    const std::size_t arena = out.arena_size();
    const std::size_t refs = out.ref_count();
    out.append(" drop ");
    out.append_ref(v);
    out.append("more");
    out.truncate(arena, refs);
    EXPECT_EQ(out.contiguous(), "keep ref");
    EXPECT_EQ(segments(out).size(), 2u);
}

TEST(OutputBuffer, ClearKeepsNothingButCapacity) {
    const std::string v = "ref";
    OutputBuffer out;
    out.append("abc");
    out.append_ref(v);
    out.clear();
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(segments(out).empty());
    out.append("x");
    EXPECT_EQ(out.contiguous(), "x");
}

// extend() hands out room to fill in place; growing keeps what was written, far past the
// first block, and copies, moves and swaps carry the bytes (connections swap their pending and
// writing buffers once per write).
TEST(OutputBuffer, ExtendGrowsInPlaceAndKeepsTheBytesThroughCopiesMovesAndSwaps) {
    OutputBuffer out;
    std::string expect;
    for (int i = 0; i < 5000; ++i) {
        const std::size_t n = static_cast<std::size_t>(i % 37);
        char* p = out.extend(n);
        for (std::size_t j = 0; j < n; ++j)
            p[j] = static_cast<char>('a' + (i + j) % 26);
        expect.append(p, n);
        if (i % 101 == 0) {
            out.append('|');
            expect.push_back('|');
        }
    }
    EXPECT_EQ(out.contiguous(), expect);
    EXPECT_EQ(out.arena_size(), expect.size());

    OutputBuffer copy(out);
    OutputBuffer moved(std::move(out));
    EXPECT_EQ(copy.contiguous(), expect);
    EXPECT_EQ(moved.contiguous(), expect);

    OutputBuffer other;
    other.append("other");
    std::swap(moved, other);
    EXPECT_EQ(moved.contiguous(), "other");
    EXPECT_EQ(other.contiguous(), expect);
    other.truncate(3, 0);
    EXPECT_EQ(other.contiguous(), expect.substr(0, 3));
    other = moved;
    EXPECT_EQ(other.contiguous(), "other");
}

}  // namespace
