// Decoder for memcached's meta protocol replies: a resumable, zero-copy state machine with the
// contract of ascii::Decoder (ascii_decoder.hpp), which the connection drives the same way:
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
// Replies (one per parse() call):
//   VA <size> <flags>*\r\n<data>\r\n   mg with v, ma with v
//   HD <flags>*                        success without a value (stored, deleted, hit, ...)
//   EN <flags>*                        mg/me miss (memcached echoes O and k on it)
//   NF <flags>*  NS <flags>*  EX <flags>*   not found / not stored / cas mismatch
//   MN                                 mn: everything before it was answered
//   ME <key> <name>=<value>*           me
//   ERROR [text]  CLIENT_ERROR <text>  SERVER_ERROR <text>
// Anything else is a protocol error.
//
// Return flags are parsed into typed fields. Flags the decoder does not know are skipped (a
// newer server may add some; the request decides which come back), but a known flag with a
// malformed token is an error, as is a number that overflows its field.
//
// Views (data, key, opaque, text) point into the bytes passed to parse() and live as long as
// those bytes (see ascii_decoder.hpp). Resumption and errors follow ascii::Decoder exactly:
// need_more consumes nothing; for a VA whose header was seen, `needed` is exact (header + size
// + 2 - input size) so a large value can be read straight into place; the scan position and
// a parsed VA header are remembered, so feeding one byte at a time costs O(n); errors are
// sticky until reset().
//
// Pure: no I/O, no threads, no Asio, no allocation.
#pragma once

#include "folsom/protocol/decode_result.hpp"
#include "folsom/protocol/limits.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace folsom::protocol::meta {

enum class ReplyKind : std::uint8_t {
    value,       ///< "VA <size> <flags>*" + data block: `data` is the value
    hit,         ///< "HD": success without a value
    miss,        ///< "EN"
    not_found,   ///< "NF"
    not_stored,  ///< "NS"
    exists,      ///< "EX": cas mismatch
    noop,        ///< "MN"
    /// "ME <key> <pairs>": key in `key`, "name=value ..." in `data`. The reply carries no b
    /// flag: the key is base64 exactly when the me request was sent with one.
    debug,
    error,         ///< "ERROR [text]": text (usually empty) in `data`
    client_error,  ///< "CLIENT_ERROR <text>": text in `data`
    server_error,  ///< "SERVER_ERROR <text>": text in `data`
};

/// One decoded reply. Return flags are present only when the server sent them.
struct Reply {
    ReplyKind kind = ReplyKind::noop;
    std::string_view data;    ///< value: the data block; debug: its pairs; errors: the text
    std::string_view key;     ///< k flag, or the ME key (base64 when key_base64)
    bool key_base64 = false;  ///< b flag: `key` is the base64 form of a binary key
    std::string_view opaque;  ///< O flag token (empty when absent)
    std::optional<std::uint64_t> cas;           ///< c
    std::optional<std::uint32_t> client_flags;  ///< f
    std::optional<std::int64_t> ttl;            ///< t: seconds remaining, -1 for no expiry
    std::optional<std::uint64_t> size;          ///< s: value size
    std::optional<bool> hit_before;             ///< h: fetched before this request
    std::optional<std::uint64_t> last_access;   ///< l: seconds since the last access
    bool win = false;       ///< W: this client won the right to recache the item
    bool stale = false;     ///< X: the item was invalidated (md I, or ms I with an older cas)
    bool win_sent = false;  ///< Z: another client already holds the win

    /// The opaque as a number, when it is one (clients usually send a request counter).
    std::optional<std::uint64_t> opaque_number() const noexcept;
};

/// The result types shared by the three decoders (decode_result.hpp).
using ParseState = protocol::ParseState;
using ParseResult = protocol::ParseResult;
using DecodeError = protocol::DecodeError;

class Decoder {
  public:
    explicit Decoder(const Limits& limits = {}) noexcept : limits_(limits) {}

    /// Decodes at most one reply from the front of `input`. See the comment at the top.
    ParseResult parse(std::string_view input, Reply& out) noexcept;

    const DecodeError& error() const noexcept { return error_; }
    bool failed() const noexcept { return failed_; }

    /// Forgets any partial reply and any error (after the connection was re-established).
    void reset() noexcept;

    const Limits& limits() const noexcept { return limits_; }

  private:
    ParseResult parse_line(std::string_view input, std::size_t line_end, Reply& out) noexcept;
    ParseResult finish_value(std::string_view input, Reply& out) noexcept;
    ParseResult fail(const char* reason, std::string_view input, std::size_t offset,
                     std::size_t length) noexcept;

    Limits limits_;
    bool failed_ = false;
    DecodeError error_;
    // Resumption state for the reply at the front of the input.
    std::size_t scanned_ = 0;      // bytes already searched for '\n' without finding it
    bool have_header_ = false;     // a VA header was parsed; waiting for its data block
    std::size_t header_size_ = 0;  // VA header length including "\r\n"
    std::size_t value_size_ = 0;   // VA <size>
    Reply header_;                 // the VA header's flags; views re-based on each call
    std::size_t key_offset_ = 0;   // offsets of the header's views within the input
    std::size_t opaque_offset_ = 0;
};

}  // namespace folsom::protocol::meta
