// Decoder for memcached's binary protocol: a resumable, zero-copy state machine with the same
// contract as the text protocol's (ascii_decoder.hpp).
//
// Flow (the connection's read loop):
//
//     Response r;
//     for (;;) {
//         ParseResult res = decoder.parse(unparsed_bytes, r);
//         if (res.state == ParseState::need_more) { read at least res.needed more bytes; break; }
//         if (res.state == ParseState::error) { close the connection; decoder.error() says why; }
//         handle(r);                    // r's views point into unparsed_bytes
//         unparsed_bytes.remove_prefix(res.consumed);
//     }
//
// One call decodes at most one response packet (24-byte header + body). The decoder never
// copies a byte and never allocates: extras, key and value in a Response are views into the
// bytes passed to parse().
//
// Object lifetimes: the views in a Response stay valid as long as the bytes given to parse()
// are alive and unchanged (for a connection: until its handler returns).
//
// Resumption: when the input ends inside a packet, parse() consumes nothing and returns
// need_more with the exact number of bytes still missing: 24 - input size while the header is
// incomplete, 24 + body length - input size once it is complete (so a large value can be read
// straight into place). The next call must pass the same unconsumed bytes again, with more
// appended. The header is validated as soon as its 24 bytes are there, before any of the body
// arrives, so a hostile length is refused without waiting for (or buffering) the body. A call
// never looks at more than the header until the whole packet is present, so feeding a packet
// one byte at a time costs O(n), not O(n^2).
//
// The magic byte is checked as soon as it arrives (so a text-protocol reply such as "ERROR\r\n"
// fails at once instead of waiting for 24 bytes); the rest of the header once it is complete.
// A header is malformed, and the decoder fails, when: the magic is not 0x81; the data type is
// not 0; key length + extras length exceed the body length; the key is over 250 bytes; the
// value (body - extras - key) is over limits.max_value_size; a retrieval reply (get, getq,
// getk, getkq, gat, gatq, gatk, gatkq) has extras other than 0 or 4 bytes; a successful
// increment/decrement reply is anything but an 8-byte value with no extras and no key.
// Unknown opcodes and statuses are passed through (the connection decides what they mean).
//
// Errors are sticky: after ParseState::error, parse() keeps returning error until reset().
// error() describes the offending header field (escaped, truncated) and its offset.
//
// Pure: no I/O, no threads, no Asio, no allocation.
#pragma once

#include "folsom/protocol/binary_protocol.hpp"
#include "folsom/protocol/decode_result.hpp"
#include "folsom/protocol/limits.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folsom::protocol::binary {

/// One decoded response packet.
struct Response {
    Opcode opcode = Opcode::noop;
    ResponseStatus status = ResponseStatus::no_error;
    std::uint32_t opaque = 0;  ///< echoed from the request
    std::uint64_t cas = 0;     ///< the item's cas (hits, successful mutations), else 0
    std::string_view extras;   ///< raw extras (e.g. the 4 flag bytes of a hit)
    std::string_view key;      ///< getk/gatk hits: the key; stat: the statistic's name
    /// hits: the data; stat: the statistic's value; version: the version text; sasl: the
    /// mechanism list or challenge; a status other than no_error: the server's error text.
    std::string_view value;
    std::uint32_t flags = 0;  ///< retrieval replies with 4-byte extras (has_flags)
    bool has_flags = false;
    std::uint64_t number = 0;  ///< successful increment/decrement: the new counter value
};

/// The result types shared by the three decoders (decode_result.hpp).
using ParseState = protocol::ParseState;
using ParseResult = protocol::ParseResult;
using DecodeError = protocol::DecodeError;

class Decoder {
  public:
    explicit Decoder(const Limits& limits = {}) noexcept : limits_(limits) {}

    /// Decodes at most one response packet from the front of `input`. See the Flow comment.
    ParseResult parse(std::string_view input, Response& out) noexcept;

    /// The error that stopped the decoder (meaningful after ParseState::error).
    const DecodeError& error() const noexcept { return error_; }
    bool failed() const noexcept { return failed_; }

    /// Forgets any error (after the connection was re-established).
    void reset() noexcept;

    const Limits& limits() const noexcept { return limits_; }

  private:
    ParseResult fail(const char* reason, std::string_view input, std::size_t offset,
                     std::size_t length) noexcept;

    Limits limits_;
    bool failed_ = false;
    DecodeError error_;
    // No other state: the header is fixed-size, so re-reading it on the next call is O(1) and
    // cheaper than keeping a copy that could go stale if the caller moved its buffer.
};

}  // namespace folsom::protocol::binary
