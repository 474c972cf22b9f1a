// AsciiDriver's joining of pipelined single-key gets, queued as the connection queues them
// (join onto the last pending command, else encode a new one): how long a joined line grows,
// and that every get of a joined line still gets exactly its own answer, also when a proxy
// answers its hits out of order.
#include "folsom/error.hpp"
#include "folsom/protocol/limits.hpp"

#include "wire/ascii_driver.hpp"
#include "support/recording_operation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;

/// Queues single-key requests the way Connection::submit does.
struct JoinHarness {
    detail::AsciiDriver driver{Options{}};
    protocol::OutputBuffer out;
    net::CommandQueue queue;
    test::RecordingOperation op;

    void submit(OpCode code, std::string_view key, std::uint32_t part) {
        detail::Request r;
        r.code = code;
        r.key = key;
        r.keys = std::span<const std::string_view>(&r.key, 1);
        net::Command cmd{&op, part, code};
        if (queue.empty() || !driver.join(r, out, queue.back(), cmd)) {
            ASSERT_FALSE(driver.encode(r, out, cmd));
        }
        queue.push_back(cmd, key);
    }

    /// The lines written, split at "\r\n".
    std::vector<std::string> lines() {
        std::vector<std::string> result;
        const std::string all = out.contiguous();
        std::size_t at = 0;
        while (at < all.size()) {
            const std::size_t end = all.find("\r\n", at);
            EXPECT_NE(end, std::string::npos);
            if (end == std::string::npos) break;
            result.push_back(all.substr(at, end - at));
            at = end + 2;
        }
        return result;
    }
};

std::vector<std::string> numbered_keys(std::size_t n, const char* format) {
    std::vector<std::string> keys;
    char buf[300];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, format, i);
        keys.emplace_back(buf);
    }
    return keys;
}

TEST(AsciiDriverJoin, APipelineWindowOfShortKeysTravelsAsOneLine) {
    // 1000 ten-byte keys take 10,999 key bytes: one line, where a 100-key cap made ten.
    JoinHarness h;
    const auto keys = numbered_keys(1000, "key:%06zu");
    for (std::uint32_t i = 0; i < keys.size(); ++i)
        h.submit(OpCode::get, keys[i], i);
    const auto lines = h.lines();
    ASSERT_EQ(lines.size(), 1u);
    std::string expected = "get";
    for (const auto& k : keys)
        expected += " " + k;
    EXPECT_EQ(lines[0], expected);
    EXPECT_EQ(h.queue.size(), keys.size());
    EXPECT_EQ(h.queue.front().joined, 0u);
    EXPECT_EQ(h.queue.back().joined, 999u);
}

TEST(AsciiDriverJoin, ALineStopsAtTheRetrievalKeyBudget) {
    JoinHarness h;
    const auto keys = numbered_keys(3000, "key:%06zu");  // 10 bytes + a space each
    for (std::uint32_t i = 0; i < keys.size(); ++i)
        h.submit(OpCode::gets, keys[i], i);
    const auto lines = h.lines();
    // (16384 + 1) / 11 = 1489 keys fill a line; the next would pass the budget.
    const std::size_t per_line = (protocol::max_retrieval_key_bytes + 1) / 11;
    ASSERT_EQ(lines.size(), 3u);
    std::size_t next = 0;
    for (const auto& line : lines) {
        ASSERT_EQ(line.rfind("gets ", 0), 0u) << line.substr(0, 40);
        EXPECT_LE(line.size() - 5, protocol::max_retrieval_key_bytes);
        std::size_t at = 5, count = 0;
        while (at <= line.size()) {
            std::size_t end = line.find(' ', at);
            if (end == std::string::npos) end = line.size();
            ASSERT_LT(next, keys.size());
            EXPECT_EQ(line.substr(at, end - at), keys[next]);
            ++next;
            ++count;
            at = end + 1;
        }
        EXPECT_EQ(count, &line == &lines.back() ? keys.size() - 2 * per_line : per_line);
    }
    EXPECT_EQ(next, keys.size());
}

TEST(AsciiDriverJoin, LongKeysJoinFewerPerLine) {
    JoinHarness h;
    const auto keys = numbered_keys(200, std::string(240, 'k').append("%09zu").c_str());
    for (std::uint32_t i = 0; i < keys.size(); ++i)
        h.submit(OpCode::get, keys[i], i);
    const auto lines = h.lines();
    // 249-byte keys: (16384 + 1) / 250 = 65 per line.
    ASSERT_EQ(lines.size(), 4u);
    for (const auto& line : lines)
        EXPECT_LE(line.size() - 4, protocol::max_retrieval_key_bytes);
    EXPECT_EQ(h.queue.at(64).joined, 64u);
    EXPECT_EQ(h.queue.at(65).joined, 0u);
}

TEST(AsciiDriverJoin, EveryGetOfTwoFullLinesGetsItsOwnAnswer) {
    // Hits for even keys only, so each line's reply skips the misses, across a line boundary.
    JoinHarness h;
    const auto keys = numbered_keys(2000, "key:%06zu");
    for (std::uint32_t i = 0; i < keys.size(); ++i)
        h.submit(OpCode::get, keys[i], i);
    ASSERT_EQ(h.lines().size(), 2u);
    std::string reply;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i % 2 == 0) reply += "VALUE " + keys[i] + " 3 2\r\nv" + std::to_string(i % 10) + "\r\n";
        if (i + 1 == (protocol::max_retrieval_key_bytes + 1) / 11 || i + 1 == keys.size())
            reply += "END\r\n";
    }
    const auto step = h.driver.decode(reply, h.queue);
    ASSERT_FALSE(step.ec) << step.message;
    EXPECT_EQ(step.consumed, reply.size());
    EXPECT_TRUE(h.queue.empty());
    // A miss is a completion with no value before it. A get completes once it and every get
    // before it on its line are answered; the ones a hit passed over complete at the END.
    std::vector<test::Event> expected;
    const std::uint32_t line_keys = (protocol::max_retrieval_key_bytes + 1) / 11;
    for (std::uint32_t begin = 0; begin < keys.size(); begin += line_keys) {
        const std::uint32_t end = std::min<std::uint32_t>(begin + line_keys, keys.size());
        std::uint32_t next = begin;  // the first get of the line not completed yet
        for (std::uint32_t i = begin; i < end; ++i) {
            if (i % 2 != 0) continue;
            expected.push_back(test::value_event(i, detail::Operation::unknown_position, keys[i],
                                                 "v" + std::to_string(i % 10), 3));
            if (next == i) expected.push_back(test::done_event(next++));
        }
        for (; next < end; ++next)
            expected.push_back(test::done_event(next));
    }
    EXPECT_EQ(h.op.events, expected);
}

// A proxy that splits a line over its servers (twemproxy) merges their answers in another
// order than the keys were asked for: every get still gets its own value, duplicates in turn.
TEST(AsciiDriverJoin, HitsAnsweredOutOfOrderStillReachTheirOwnGets) {
    JoinHarness h;
    const std::vector<std::string> keys = {"a", "b", "c", "d", "c", "e"};
    for (std::uint32_t i = 0; i < keys.size(); ++i)
        h.submit(OpCode::get, keys[i], i);
    ASSERT_EQ(h.lines().size(), 1u);
    const std::string reply =
        "VALUE d 0 2\r\nvd\r\nVALUE c 0 3\r\nvc1\r\nVALUE a 0 2\r\nva\r\n"
        "VALUE c 0 3\r\nvc2\r\nEND\r\n";
    const auto step = h.driver.decode(reply, h.queue);
    ASSERT_FALSE(step.ec) << step.message;
    EXPECT_EQ(step.consumed, reply.size());
    EXPECT_TRUE(h.queue.empty());
    const auto pos = detail::Operation::unknown_position;
    const std::vector<test::Event> expected = {
        test::value_event(3, pos, "d", "vd"),
        test::value_event(2, pos, "c", "vc1"),
        test::value_event(0, pos, "a", "va"),
        test::done_event(0),  // a: answered, and first
        test::value_event(4, pos, "c", "vc2"),
        test::done_event(1),  // b: missed, known at the END
        test::done_event(2),
        test::done_event(3),
        test::done_event(4),
        test::done_event(5),  // e: missed
    };
    EXPECT_EQ(h.op.events, expected);
}

TEST(AsciiDriverJoin, AKeyAnsweredMoreTimesThanAskedPutsTheStreamOutOfStep) {
    JoinHarness h;
    for (std::uint32_t i = 0; i < 3; ++i)
        h.submit(OpCode::get, i == 1 ? "x" : "y", i);
    const std::string reply = "VALUE x 0 1\r\n1\r\nVALUE x 0 1\r\n2\r\nEND\r\n";
    const auto step = h.driver.decode(reply, h.queue);
    EXPECT_EQ(step.ec, make_error_code(errc::protocol_error));
}

}  // namespace
