// What a decoder's parse() returns, and why it stopped: one set of types for the ascii, binary
// and meta decoders, so that a driver's read loop reads the same over each (each decoder's
// namespace keeps the names as aliases: ascii::ParseResult is protocol::ParseResult).
//
// Pure: no I/O, no allocation (only DecodeError::message() allocates, for logs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace folsom::protocol {

enum class ParseState : std::uint8_t { complete, need_more, error };

struct ParseResult {
    ParseState state;
    /// complete: bytes of input the reply occupied, at least one (remove them before the next
    /// call). need_more / error: 0.
    std::size_t consumed = 0;
    /// need_more: how many more bytes the reply at the front needs at least. The binary
    /// decoder knows it exactly once a header is complete (the rest of the packet); the text
    /// decoders know it once a value's header line is (the rest of its data block).
    std::size_t needed = 0;
};

/// Why a decoder stopped. Fixed size, so describing an error allocates nothing.
struct DecodeError {
    const char* reason = "";  ///< static text, e.g. "value size over limit"
    std::size_t offset = 0;   ///< offset of the offending bytes in the input of that parse()
    /// The offending bytes, escaped and cut to fit: the text decoders spell out what is not
    /// printable (\r \n \xNN ...) and keep a terminating NUL, the binary decoder writes every
    /// byte as \xNN.
    char context[64] = {};
    std::size_t context_size = 0;  ///< characters in `context`, without any NUL

    /// "<reason> at offset <n>: \"<context>\"" (allocates; for logs and exceptions).
    std::string message() const;
};

}  // namespace folsom::protocol
