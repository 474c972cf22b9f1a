// The classic text protocol as both text drivers speak it. AsciiDriver speaks nothing else;
// MetaDriver sends the commands that have no meta form (flush_all, stats, version, verbosity)
// and plain multi-key gets as classic lines, and decodes their replies with the text decoder.
// What such a command looks like on the wire, and what its replies mean, is written here once
// so that both drivers answer a command the same way.
//
// The reply mappings are inline: AsciiDriver::decode() calls them for every reply.
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/error.hpp"
#include "folsom/protocol/ascii_decoder.hpp"
#include "folsom/protocol/ascii_encoder.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include <string_view>
#include <system_error>

namespace folsom::detail {

// ---- commands ------------------------------------------------------------------------------

/// The commands with no meta form: one classic line each, on any text connection.
constexpr bool is_classic_only(OpCode c) noexcept {
    return c == OpCode::flush_all || c == OpCode::stats || c == OpCode::version ||
           c == OpCode::verbosity;
}

/// Appends a classic-only command (is_classic_only) to `out`; errc::unsupported for any other.
std::error_code encode_classic_only(const Request& r, protocol::OutputBuffer& out);

/// The retrieval line a retrieval opcode is sent as ("get", "gets", "gat", "gats").
inline protocol::ascii::RetrieveCommand retrieve_command(OpCode c) noexcept {
    switch (c) {
        case OpCode::gets:
            return protocol::ascii::RetrieveCommand::gets;
        case OpCode::gat:
            return protocol::ascii::RetrieveCommand::gat;
        case OpCode::gats:
            return protocol::ascii::RetrieveCommand::gats;
        default:
            return protocol::ascii::RetrieveCommand::get;
    }
}

// ---- replies -------------------------------------------------------------------------------

/// ERROR, CLIENT_ERROR, SERVER_ERROR: the server refused the command, and the stream is still
/// in step.
constexpr bool is_refusal(protocol::ascii::ReplyKind k) noexcept {
    using K = protocol::ascii::ReplyKind;
    return k == K::error || k == K::client_error || k == K::server_error;
}

/// A refusal as its command's Completion: ERROR (the server does not know the command) is
/// unsupported, CLIENT_ERROR client_error, and every SERVER_ERROR (also the two a store reads
/// as a status, when they answer anything else) server_error. The text is the server's.
inline Completion refusal(protocol::ascii::ReplyKind k, std::string_view text) noexcept {
    using K = protocol::ascii::ReplyKind;
    Completion done;
    done.ec = k == K::client_error ? errc::client_error
              : k == K::error      ? errc::unsupported
                                   : errc::server_error;
    done.text = text;
    return done;
}

/// Which status words answer which command; anything else is a protocol error (the stream is
/// out of step with the FIFO and cannot be trusted).
constexpr bool status_fits(OpCode c, protocol::ascii::ReplyKind k) noexcept {
    using K = protocol::ascii::ReplyKind;
    if (is_store(c))
        return k == K::stored || k == K::not_stored || k == K::exists || k == K::not_found ||
               k == K::value_too_large || k == K::out_of_memory;
    switch (c) {
        case OpCode::del:
            return k == K::deleted || k == K::not_found;
        case OpCode::touch:
            return k == K::touched || k == K::not_found;
        case OpCode::incr:
        case OpCode::decr:
            return k == K::number || k == K::not_found;
        case OpCode::flush_all:
        case OpCode::verbosity:
            return k == K::ok;
        case OpCode::version:
            return k == K::version;
        default:
            return false;
    }
}

/// The status a status word stands for (Status::ok for OK, VERSION and numbers).
constexpr Status to_status(protocol::ascii::ReplyKind k) noexcept {
    using K = protocol::ascii::ReplyKind;
    switch (k) {
        case K::stored:
            return Status::stored;
        case K::not_stored:
            return Status::not_stored;
        case K::exists:
            return Status::exists;
        case K::not_found:
            return Status::not_found;
        case K::deleted:
            return Status::deleted;
        case K::touched:
            return Status::touched;
        case K::value_too_large:
            return Status::value_too_large;
        case K::out_of_memory:
            return Status::out_of_memory;
        default:
            return Status::ok;
    }
}

/// A status word (one that status_fits its command) as the command's Completion: the status,
/// incr/decr's number, version's text.
inline Completion status_completion(const protocol::ascii::Reply& reply) noexcept {
    Completion done;
    done.status = to_status(reply.kind);
    done.number = reply.number;
    done.text = reply.data;
    return done;
}

}  // namespace folsom::detail
