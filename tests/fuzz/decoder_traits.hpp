// How the decoder fuzz targets see each decoder: its types, the views a reply holds (which
// must all point into the bytes the reply consumed), and an owning copy for comparisons.
#pragma once

#include "folsom/protocol/ascii_decoder.hpp"
#include "folsom/protocol/binary_decoder.hpp"
#include "folsom/protocol/meta_decoder.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace folsom::fuzz {

struct AsciiTraits {
    using Decoder = protocol::ascii::Decoder;
    using Reply = protocol::ascii::Reply;
    using ParseState = protocol::ascii::ParseState;
    static constexpr std::string_view valid_reply = "END\r\n";

    struct Owned {
        protocol::ascii::ReplyKind kind;
        std::string key, data;
        std::uint32_t flags;
        std::uint64_t cas;
        bool has_cas;
        std::uint64_t number;
        explicit Owned(const Reply& r)
            : kind(r.kind),
              key(r.key),
              data(r.data),
              flags(r.flags),
              cas(r.cas),
              has_cas(r.has_cas),
              number(r.number) {}
        bool operator==(const Owned&) const = default;
    };

    template <class F>
    static void for_each_view(const Reply& r, F f) {
        f(r.key);
        f(r.data);
    }
};

struct BinaryTraits {
    using Decoder = protocol::binary::Decoder;
    using Reply = protocol::binary::Response;
    using ParseState = protocol::binary::ParseState;
    // A noop response: magic 0x81, opcode 0x0a, everything else 0.
    static constexpr std::string_view valid_reply{
        "\x81\x0a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24};

    struct Owned {
        protocol::binary::Opcode opcode;
        protocol::binary::ResponseStatus status;
        std::uint32_t opaque;
        std::uint64_t cas;
        std::string extras, key, value;
        std::uint32_t flags;
        bool has_flags;
        std::uint64_t number;
        explicit Owned(const Reply& r)
            : opcode(r.opcode),
              status(r.status),
              opaque(r.opaque),
              cas(r.cas),
              extras(r.extras),
              key(r.key),
              value(r.value),
              flags(r.flags),
              has_flags(r.has_flags),
              number(r.number) {}
        bool operator==(const Owned&) const = default;
    };

    template <class F>
    static void for_each_view(const Reply& r, F f) {
        f(r.extras);
        f(r.key);
        f(r.value);
    }
};

struct MetaTraits {
    using Decoder = protocol::meta::Decoder;
    using Reply = protocol::meta::Reply;
    using ParseState = protocol::meta::ParseState;
    static constexpr std::string_view valid_reply = "MN\r\n";

    struct Owned {
        protocol::meta::ReplyKind kind;
        std::string data, key;
        bool key_base64;
        std::string opaque;
        std::optional<std::uint64_t> cas;
        std::optional<std::uint32_t> client_flags;
        std::optional<std::int64_t> ttl;
        std::optional<std::uint64_t> size;
        std::optional<bool> hit_before;
        std::optional<std::uint64_t> last_access;
        bool win, stale, win_sent;
        std::optional<std::uint64_t> opaque_number;
        explicit Owned(const Reply& r)
            : kind(r.kind),
              data(r.data),
              key(r.key),
              key_base64(r.key_base64),
              opaque(r.opaque),
              cas(r.cas),
              client_flags(r.client_flags),
              ttl(r.ttl),
              size(r.size),
              hit_before(r.hit_before),
              last_access(r.last_access),
              win(r.win),
              stale(r.stale),
              win_sent(r.win_sent),
              opaque_number(r.opaque_number()) {}
        bool operator==(const Owned&) const = default;
    };

    template <class F>
    static void for_each_view(const Reply& r, F f) {
        f(r.data);
        f(r.key);
        f(r.opaque);
    }
};

}  // namespace folsom::fuzz
