// Feeding a decoder the way a connection does, in chunks of any size, to prove that where the
// reads happen to split a response never changes what is decoded.
//
// Protocol-generic: any decoder with
//     ParseResult parse(std::string_view, Reply&)   // .state (complete|need_more|error),
//                                                   // .consumed, .needed
//     const DecodeError& error() const              // .reason (const char*), .offset
// and an owning reply type `Owned` constructible from `const Reply&` and equality-comparable.
//
// The feeder behaves like a connection's read loop: decode every complete reply at the front
// of the unconsumed bytes, drop what was consumed, and on need_more append the next chunk. Each
// time it appends, the unconsumed bytes move to a fresh allocation, so a decoder that kept a
// pointer (instead of an offset) into an earlier call's input reads freed memory, which the
// sanitizer builds catch. It also checks the need_more contract: a decoder that asked for N
// more bytes must not complete a reply with fewer (an overstated `needed` would make a
// connection wait for bytes that never come).
#pragma once

#include "folsom/protocol/limits.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::test {

/// What feeding a whole byte string produced: owning copies of the replies, in order, then
/// either a decoder error, leftover bytes of an incomplete reply, or neither.
template <class Owned>
struct FeedOutcome {
    std::vector<Owned> replies;
    bool failed = false;
    std::string error_reason;      ///< DecodeError::reason when failed
    std::size_t error_offset = 0;  ///< relative to the unconsumed bytes of that parse()
    std::size_t leftover = 0;      ///< unconsumed bytes of an incomplete reply (not on error)
    std::size_t contract_violations = 0;  ///< need_more said more bytes than were needed

    friend bool operator==(const FeedOutcome&, const FeedOutcome&) = default;

    friend std::ostream& operator<<(std::ostream& os, const FeedOutcome& o) {
        os << o.replies.size() << " replies {";
        for (const auto& r : o.replies)
            os << ' ' << ::testing::PrintToString(r);
        os << " }";
        if (o.failed) os << " error \"" << o.error_reason << "\" at " << o.error_offset;
        if (o.leftover != 0) os << " leftover " << o.leftover;
        if (o.contract_violations != 0) os << " need_more violations " << o.contract_violations;
        return os;
    }
};

/// Feeds `bytes` to a fresh Decoder(limits) in consecutive chunks ending at `cuts` (ascending
/// offsets; the end of `bytes` is implied).
template <class Decoder, class Reply, class Owned>
FeedOutcome<Owned> feed_cuts(const protocol::Limits& limits, std::string_view bytes,
                             const std::vector<std::size_t>& cuts) {
    Decoder decoder(limits);
    FeedOutcome<Owned> outcome;
    std::string buffer;          // the unconsumed bytes, as a connection's read buffer holds them
    std::size_t fed = 0;         // bytes of `bytes` appended so far
    std::size_t must_reach = 0;  // buffer size the last need_more promised is necessary
    std::size_t next_cut = 0;
    Reply reply{};

    while (true) {
        // Decode everything complete at the front.
        std::size_t front = 0;
        bool stop = false;
        while (!stop) {
            const std::string_view unconsumed(buffer.data() + front, buffer.size() - front);
            const auto res = decoder.parse(unconsumed, reply);
            switch (res.state) {
                case decltype(res.state)::complete:
                    if (unconsumed.size() < must_reach) ++outcome.contract_violations;
                    must_reach = 0;
                    outcome.replies.emplace_back(reply);
                    front += res.consumed;
                    break;
                case decltype(res.state)::need_more:
                    if (res.needed == 0) ++outcome.contract_violations;
                    must_reach = unconsumed.size() + res.needed;
                    stop = true;
                    break;
                case decltype(res.state)::error:
                    outcome.failed = true;
                    outcome.error_reason = decoder.error().reason;
                    outcome.error_offset = decoder.error().offset;
                    return outcome;
            }
        }
        if (fed == bytes.size()) {
            outcome.leftover = buffer.size() - front;
            return outcome;
        }
        // Next read: the unconsumed bytes move to a new allocation, then the chunk arrives.
        std::size_t end = bytes.size();
        while (next_cut < cuts.size() && cuts[next_cut] <= fed)
            ++next_cut;
        if (next_cut < cuts.size()) end = cuts[next_cut++];
        std::string moved;
        moved.reserve(buffer.size() - front + (end - fed));
        moved.append(buffer, front);
        moved.append(bytes.substr(fed, end - fed));
        buffer.swap(moved);
        fed = end;
    }
}

/// All of `bytes` in one read.
template <class Decoder, class Reply, class Owned>
FeedOutcome<Owned> feed_whole(const protocol::Limits& limits, std::string_view bytes) {
    return feed_cuts<Decoder, Reply, Owned>(limits, bytes, {});
}

/// `bytes` in reads of `chunk` bytes (1: byte by byte).
template <class Decoder, class Reply, class Owned>
FeedOutcome<Owned> feed_chunked(const protocol::Limits& limits, std::string_view bytes,
                                std::size_t chunk) {
    std::vector<std::size_t> cuts;
    for (std::size_t c = chunk; c < bytes.size(); c += chunk)
        cuts.push_back(c);
    return feed_cuts<Decoder, Reply, Owned>(limits, bytes, cuts);
}

/// Feeds `bytes` whole, split in two at every byte boundary, and byte by byte, and checks with
/// gtest that every feeding decodes the same thing. Returns the whole-input outcome so the
/// caller can check what that is.
template <class Decoder, class Reply, class Owned>
FeedOutcome<Owned> expect_split_invariant(const protocol::Limits& limits, std::string_view bytes) {
    const auto whole = feed_whole<Decoder, Reply, Owned>(limits, bytes);
    EXPECT_EQ(whole.contract_violations, 0u) << "whole input";
    for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
        const auto split = feed_cuts<Decoder, Reply, Owned>(limits, bytes, {cut});
        EXPECT_EQ(split, whole) << "split at byte " << cut << " of " << bytes.size();
        if (split != whole) break;  // one report per input is enough
    }
    const auto bytewise = feed_chunked<Decoder, Reply, Owned>(limits, bytes, 1);
    EXPECT_EQ(bytewise, whole) << "fed byte by byte";
    return whole;
}

}  // namespace folsom::test
