// Constants of memcached's binary protocol, shared by the binary encoder and decoder.
//
// Every packet is a 24-byte header followed by a body of `total body length` bytes: extras,
// then key, then value. Multi-byte header fields are big-endian.
//
//   offset  request                 response
//   0       magic 0x80              magic 0x81
//   1       opcode                  opcode (echoes the request's)
//   2..3    key length              key length
//   4       extras length           extras length
//   5       data type (0 = raw)     data type (0 = raw)
//   6..7    vbucket id (0)          status
//   8..11   total body length       total body length
//   12..15  opaque                  opaque (echoed: how a pipelined reply finds its request)
//   16..23  cas                     cas
//
// Pure: no I/O, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folsom::protocol::binary {

inline constexpr std::uint8_t request_magic = 0x80;
inline constexpr std::uint8_t response_magic = 0x81;
/// Every binary packet starts with a header of exactly this size.
inline constexpr std::size_t header_size = 24;
/// The only data type memcached defines ("raw bytes").
inline constexpr std::uint8_t raw_data_type = 0x00;

/// Command opcodes. The "q" variants are quiet: the server suppresses the uninteresting reply
/// (a get miss, a successful mutation), so a pipeline of them is closed by a noop.
enum class Opcode : std::uint8_t {
    get = 0x00,
    set = 0x01,
    add = 0x02,
    replace = 0x03,
    delete_ = 0x04,  // trailing underscore: `delete` is a C++ keyword
    increment = 0x05,
    decrement = 0x06,
    quit = 0x07,
    flush = 0x08,
    getq = 0x09,
    noop = 0x0a,
    version = 0x0b,
    getk = 0x0c,
    getkq = 0x0d,
    append = 0x0e,
    prepend = 0x0f,
    stat = 0x10,
    setq = 0x11,
    addq = 0x12,
    replaceq = 0x13,
    deleteq = 0x14,
    incrementq = 0x15,
    decrementq = 0x16,
    quitq = 0x17,
    flushq = 0x18,
    appendq = 0x19,
    prependq = 0x1a,
    verbosity = 0x1b,
    touch = 0x1c,
    gat = 0x1d,
    gatq = 0x1e,
    sasl_list_mechs = 0x20,
    sasl_auth = 0x21,
    sasl_step = 0x22,
    gatk = 0x23,
    gatkq = 0x24,
};

/// Response status codes. A value the server sends that is not listed here is passed through
/// unchanged (the enum is 16 bits wide), so a newer server status never breaks the stream;
/// is_known() tells the two apart.
enum class ResponseStatus : std::uint16_t {
    no_error = 0x0000,
    key_not_found = 0x0001,
    key_exists = 0x0002,
    value_too_large = 0x0003,
    invalid_arguments = 0x0004,
    item_not_stored = 0x0005,
    non_numeric = 0x0006,  ///< incr/decr on a value that is not a number
    vbucket = 0x0007,      ///< the vbucket belongs to another server
    auth_error = 0x0020,
    auth_continue = 0x0021,  ///< SASL: send a sasl_step with the server's challenge answered
    unknown_command = 0x0081,
    out_of_memory = 0x0082,
    not_supported = 0x0083,
    internal_error = 0x0084,
    busy = 0x0085,
    temporary_failure = 0x0086,
};

/// True for the statuses listed in ResponseStatus.
constexpr bool is_known(ResponseStatus s) noexcept {
    switch (s) {
        case ResponseStatus::no_error:
        case ResponseStatus::key_not_found:
        case ResponseStatus::key_exists:
        case ResponseStatus::value_too_large:
        case ResponseStatus::invalid_arguments:
        case ResponseStatus::item_not_stored:
        case ResponseStatus::non_numeric:
        case ResponseStatus::vbucket:
        case ResponseStatus::auth_error:
        case ResponseStatus::auth_continue:
        case ResponseStatus::unknown_command:
        case ResponseStatus::out_of_memory:
        case ResponseStatus::not_supported:
        case ResponseStatus::internal_error:
        case ResponseStatus::busy:
        case ResponseStatus::temporary_failure:
            return true;
    }
    return false;
}

/// A short name for logs ("KEY_NOT_FOUND", ...); "UNKNOWN_STATUS" for an unlisted value.
constexpr std::string_view to_string(ResponseStatus s) noexcept {
    switch (s) {
        case ResponseStatus::no_error:
            return "NO_ERROR";
        case ResponseStatus::key_not_found:
            return "KEY_NOT_FOUND";
        case ResponseStatus::key_exists:
            return "KEY_EXISTS";
        case ResponseStatus::value_too_large:
            return "VALUE_TOO_LARGE";
        case ResponseStatus::invalid_arguments:
            return "INVALID_ARGUMENTS";
        case ResponseStatus::item_not_stored:
            return "ITEM_NOT_STORED";
        case ResponseStatus::non_numeric:
            return "NON_NUMERIC";
        case ResponseStatus::vbucket:
            return "VBUCKET";
        case ResponseStatus::auth_error:
            return "AUTH_ERROR";
        case ResponseStatus::auth_continue:
            return "AUTH_CONTINUE";
        case ResponseStatus::unknown_command:
            return "UNKNOWN_COMMAND";
        case ResponseStatus::out_of_memory:
            return "OUT_OF_MEMORY";
        case ResponseStatus::not_supported:
            return "NOT_SUPPORTED";
        case ResponseStatus::internal_error:
            return "INTERNAL_ERROR";
        case ResponseStatus::busy:
            return "BUSY";
        case ResponseStatus::temporary_failure:
            return "TEMPORARY_FAILURE";
    }
    return "UNKNOWN_STATUS";
}

/// get, getq, getk, getkq, gat, gatq, gatk, gatkq: a hit carries 4 bytes of flags as extras.
constexpr bool is_retrieval(Opcode op) noexcept {
    switch (op) {
        case Opcode::get:
        case Opcode::getq:
        case Opcode::getk:
        case Opcode::getkq:
        case Opcode::gat:
        case Opcode::gatq:
        case Opcode::gatk:
        case Opcode::gatkq:
            return true;
        default:
            return false;
    }
}

/// increment, decrement and their quiet variants: success carries the new value as 8 bytes.
constexpr bool is_arithmetic(Opcode op) noexcept {
    return op == Opcode::increment || op == Opcode::decrement || op == Opcode::incrementq ||
           op == Opcode::decrementq;
}

}  // namespace folsom::protocol::binary
