// Decoder for memcached's classic text protocol: a resumable, zero-copy state machine.
//
// Flow (the connection's read loop):
//
//     Reply r;
//     for (;;) {
//         ParseResult res = decoder.parse(unparsed_bytes, r);
//         if (res.state == ParseState::need_more) { read at least res.needed more bytes; break; }
//         if (res.state == ParseState::error) { close the connection; decoder.error() says why; }
//         handle(r);                    // r's views point into unparsed_bytes
//         unparsed_bytes.remove_prefix(res.consumed);
//     }
//
// One call decodes at most one reply (one line, or one VALUE header + data block). The
// decoder never copies a byte and never allocates: every string in a Reply is a view into the
// bytes passed to parse().
//
// Object lifetimes: the views in a Reply stay valid as long as the bytes given to parse() are
// alive and unchanged (for a connection: until it consumes them and reuses its read buffer,
// i.e. until the reply's handler returns).
//
// Resumption: when the input ends inside a reply, parse() consumes nothing and returns
// need_more with `needed` = how many more bytes are required at least (for a VALUE whose
// header has been seen: exactly header + size + 2 - input size, so a large value can be read
// straight into place). The next call must pass the same unconsumed bytes again, with more
// appended; the decoder remembers how far it has scanned and the parsed VALUE header, so
// feeding a reply one byte at a time costs O(n), not O(n^2).
//
// Errors are sticky: after ParseState::error, parse() keeps returning error until reset().
// error() describes the offending bytes (escaped, truncated) and their offset.
//
// Pure: no I/O, no threads, no Asio, no allocation.
#pragma once

#include "folsom/protocol/decode_result.hpp"
#include "folsom/protocol/limits.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace folsom::protocol::ascii {

/// What one reply line (or VALUE block) is.
enum class ReplyKind : std::uint8_t {
    value,         ///< "VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n": key, flags, data, cas
    end,           ///< "END": closes a retrieval or a stats listing
    stored,        ///< "STORED"
    not_stored,    ///< "NOT_STORED"
    exists,        ///< "EXISTS"
    not_found,     ///< "NOT_FOUND"
    deleted,       ///< "DELETED"
    touched,       ///< "TOUCHED"
    ok,            ///< "OK"
    number,        ///< "<digits>": incr/decr result in `number`
    stat,          ///< "STAT <name> <value>": name in `key`, value in `data`
    version,       ///< "VERSION <text>": text in `data`
    error,         ///< "ERROR" (unknown command)
    client_error,  ///< "CLIENT_ERROR <text>": text in `data`
    server_error,  ///< "SERVER_ERROR <text>": text in `data`
    value_too_large,  ///< "SERVER_ERROR object too large for cache" (Folsom maps it to a status)
    out_of_memory,    ///< "SERVER_ERROR out of memory storing object"
};

/// One decoded reply. Which fields are set depends on `kind` (see ReplyKind).
struct Reply {
    ReplyKind kind = ReplyKind::end;
    std::string_view key;   ///< value: the key; stat: the stat name
    std::string_view data;  ///< value: the data block; stat: its value; version/errors: text
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;  ///< value from gets/gats (has_cas), else 0
    bool has_cas = false;
    std::uint64_t number = 0;  ///< number replies (incr/decr)
};

/// The result types shared by the three decoders (decode_result.hpp).
using ParseState = protocol::ParseState;
using ParseResult = protocol::ParseResult;
using DecodeError = protocol::DecodeError;

/// The reasons a DecodeError can carry (DecodeError::reason points at one of these), so that
/// callers and tests can tell failures apart without parsing text.
namespace reason {
inline constexpr const char* line_too_long = "line longer than max_line_length";
inline constexpr const char* bare_newline = "line ended by \\n without \\r";
inline constexpr const char* unknown_reply = "unknown reply";
inline constexpr const char* malformed_value = "malformed VALUE header";
inline constexpr const char* number_overflow = "number out of range";
inline constexpr const char* malformed_number = "malformed number";
inline constexpr const char* value_too_large = "value size over limit";
inline constexpr const char* bad_data_terminator = "data block not followed by \\r\\n";
inline constexpr const char* malformed_stat = "malformed STAT line";
}  // namespace reason

/// The smallest max_line_length a Decoder applies: the longest fixed reply, "NOT_STORED\r\n".
/// The fast paths recognise fixed replies and the "VALUE " prefix without consulting the line
/// limit; below this they would accept lines the line path refuses (so the outcome would depend
/// on how reads split the stream), and the VALUE scan would start past its own limit.
inline constexpr std::size_t min_line_length = 12;

namespace detail {
struct ValueHeader;  // a scanned VALUE header (decoder internals)

/// What Decoder::parse_reply returns: a ParseResult in two registers. A 24-byte ParseResult
/// comes back through memory, which puts a store and a load between one reply's length and
/// the next reply's start. The state is implied, since a complete reply consumes bytes and
/// need_more asks for some: consumed > 0 is complete, else needed > 0 is need_more, else error.
struct Step {
    std::size_t consumed = 0;
    std::size_t needed = 0;
};
}  // namespace detail

class Decoder {
  public:
    /// A max_line_length below min_line_length is raised to it (see there).
    explicit Decoder(const Limits& limits = {}) noexcept : limits_(limits) {
        if (limits_.max_line_length < min_line_length) limits_.max_line_length = min_line_length;
    }

    /// Decodes at most one reply from the front of `input`. See the Flow comment above.
    ///
    /// Inline for one case only: "END\r\n", the whole reply to a miss and the last reply of
    /// every retrieval, is then a few compares in the caller's loop instead of a call. All
    /// else is decoded out of line.
    ParseResult parse(std::string_view input, Reply& out) noexcept {
        if (pending_ == 0 && input.size() >= 5 && std::memcmp(input.data(), "END\r\n", 5) == 0)
            [[likely]] {
            out = Reply{};
            out.kind = ReplyKind::end;
            scanned_ = 0;
            return {ParseState::complete, 5, 0};
        }
        const detail::Step s = pending_ != 0 ? parse_pending(input, out) : parse_reply(input, out);
        return {s.consumed != 0 ? ParseState::complete
                : s.needed != 0 ? ParseState::need_more
                                : ParseState::error,
                s.consumed, s.needed};
    }

    /// The error that stopped the decoder (meaningful after ParseState::error).
    const DecodeError& error() const noexcept { return error_; }
    bool failed() const noexcept { return (pending_ & failed_bit) != 0; }

    /// Forgets any partial reply and any error (after the connection was re-established).
    void reset() noexcept;

    const Limits& limits() const noexcept { return limits_; }

  private:
    // The start of a reply (not failed, no VALUE header pending): the fast paths.
    detail::Step parse_reply(std::string_view input, Reply& out) noexcept;
    // The paths off the fast ones are kept out of line, and parse_reply only jumps to them
    // (a Step comes back in registers, so a call can be a jump), so that its fast paths save
    // no more registers than they use themselves.
    [[gnu::noinline]] detail::Step parse_pending(std::string_view input, Reply& out) noexcept;
    [[gnu::noinline]] detail::Step parse_value_slow(std::string_view input, Reply& out) noexcept;
    [[gnu::noinline]] detail::Step parse_general(std::string_view input, Reply& out) noexcept;
    ParseResult parse_line(std::string_view input, std::size_t newline, Reply& out) noexcept;
    ParseResult parse_value_header(std::string_view input, std::size_t newline,
                                   Reply& out) noexcept;
    ParseResult accept_value_header(std::string_view input, const detail::ValueHeader& h,
                                    Reply& out) noexcept;
    ParseResult parse_data_block(std::string_view input, Reply& out) noexcept;
    [[gnu::cold]] ParseResult fail(const char* reason, std::size_t offset,
                                   std::string_view bytes) noexcept;

    Limits limits_;
    // Resumption state for the reply at the front of the input. Offsets, never pointers: the
    // caller may move its unconsumed bytes (compact or grow its buffer) between calls.
    std::size_t scanned_ = 0;  // bytes already searched for '\n' without finding it
    // Why the front of the input is not the start of a reply: no bit, or these (one byte, so
    // that parse() tests for both with one compare). failed_bit: sticky until reset().
    // header_bit: a VALUE header was parsed; waiting for its data block.
    static constexpr std::uint8_t failed_bit = 1;
    static constexpr std::uint8_t header_bit = 2;
    std::uint8_t pending_ = 0;
    std::size_t header_size_ = 0;  // VALUE header length including "\r\n"
    std::size_t key_offset_ = 0;   // offset of the key within the header
    std::size_t value_size_ = 0;   // <bytes> of the parsed VALUE header
    Reply header_;                 // parsed VALUE header fields (key re-based on each call)
    DecodeError error_;
};

}  // namespace folsom::protocol::ascii
