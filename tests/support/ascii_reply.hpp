// An owning copy of an ASCII protocol Reply, so tests can keep replies after the decoder's
// input is gone and compare them with ==, plus the split-feeding shorthands for this protocol.
#pragma once

#include "folsom/protocol/ascii_decoder.hpp"

#include "support/split_feed.hpp"

#include <cstdint>
#include <ostream>
#include <string>

namespace folsom::test {

struct OwnedAsciiReply {
    protocol::ascii::ReplyKind kind = protocol::ascii::ReplyKind::end;
    std::string key;
    std::string data;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    bool has_cas = false;
    std::uint64_t number = 0;

    OwnedAsciiReply() = default;
    explicit OwnedAsciiReply(const protocol::ascii::Reply& r)
        : kind(r.kind),
          key(r.key),
          data(r.data),
          flags(r.flags),
          cas(r.cas),
          has_cas(r.has_cas),
          number(r.number) {}

    friend bool operator==(const OwnedAsciiReply&, const OwnedAsciiReply&) = default;

    friend std::ostream& operator<<(std::ostream& os, const OwnedAsciiReply& r) {
        os << "{kind " << static_cast<int>(r.kind);
        if (!r.key.empty()) os << " key \"" << r.key << '"';
        if (!r.data.empty()) os << " data \"" << r.data << '"';
        if (r.flags != 0) os << " flags " << r.flags;
        if (r.has_cas) os << " cas " << r.cas;
        if (r.number != 0) os << " number " << r.number;
        return os << '}';
    }
};

using AsciiOutcome = FeedOutcome<OwnedAsciiReply>;

inline AsciiOutcome ascii_expect_split_invariant(const protocol::Limits& limits,
                                                 std::string_view bytes) {
    return expect_split_invariant<protocol::ascii::Decoder, protocol::ascii::Reply,
                                  OwnedAsciiReply>(limits, bytes);
}

inline AsciiOutcome ascii_feed_whole(const protocol::Limits& limits, std::string_view bytes) {
    return feed_whole<protocol::ascii::Decoder, protocol::ascii::Reply, OwnedAsciiReply>(limits,
                                                                                         bytes);
}

}  // namespace folsom::test
