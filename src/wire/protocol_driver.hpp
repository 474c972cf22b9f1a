// ProtocolDriver: the glue between a connection and one protocol's codec.
//
// The connection owns sockets, buffers and the FIFO of in-flight commands; it never parses.
// A driver turns a protocol-neutral Request into bytes (encode), and replies into events on
// the operations at the front of the FIFO (decode). One driver per connection; it keeps the
// decoder's resumption state, so reset() it whenever the connection is re-established.
//
// Threads: encode() runs under the connection's submission lock on callers' threads; decode()
// and the handshake run on the connection's strand. Encoder and decoder state must therefore
// be disjoint (an opaque counter belongs to the encoder side).
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/options.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include "wire/command_queue.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace folsom::detail {

struct DecodeStep {
    std::size_t consumed = 0;  ///< bytes of input fully handled
    std::size_t needed = 0;    ///< at least this many more bytes before progress is possible
    std::error_code ec;        ///< protocol_error: the connection must be closed
    std::string message;       ///< what was wrong (only on error)
};

class ProtocolDriver {
  public:
    virtual ~ProtocolDriver() = default;

    /// Appends `r` as one command to `out` and fills in `cmd` (opaque, key count), or appends
    /// nothing and returns why (invalid_key, value_too_large, unsupported, ...).
    virtual std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                                   net::Command& cmd) = 0;

    /// Folds `r` into `last`, the most recent command not yet written, whose bytes end `out`,
    /// when the protocol can carry and answer both as one wire command; then fills `cmd` (its
    /// own Command, answered in order after `last`) and returns true. False: nothing changed,
    /// encode() it. Called under the same lock as encode().
    virtual bool join(const Request& /*r*/, protocol::OutputBuffer& /*out*/,
                      const net::Command& /*last*/, net::Command& /*cmd*/) {
        return false;
    }

    // ---- quiet writes (Request::quiet) ---------------------------------------------------
    //
    // A quiet request the driver sends quietly (sends_quietly) is encoded with Command::quiet
    // set: the server answers it only on failure. The connection then ends every run of quiet
    // commands with a barrier (an OpCode::noop request: meta mn, binary NOOP) before any other
    // command and at the end of every write, so a reply always comes that passes over each
    // quiet command: the decoder completes the ones passed over with their silent outcome
    // (silent_outcome()), and the ones a failure reply names with that failure. A quiet
    // request the driver does not send quietly is encoded as an ordinary acknowledged command
    // (a truthful outcome at the cost of a reply), or, over ascii, with noreply and
    // Command::unanswered set.

    /// True when `r` (with r.quiet) is encoded as a quiet command. Decided from the request
    /// alone, before encoding, so that the connection can place a barrier ahead of it.
    virtual bool sends_quietly(const Request& /*r*/) const noexcept { return false; }

    /// Decodes complete replies from the front of `input` and delivers them to the commands at
    /// the front of `inflight`, popping each command before its on_complete call.
    virtual DecodeStep decode(std::string_view input, net::CommandQueue& inflight) = 0;

    /// Forgets partial replies (the connection was re-established).
    virtual void reset() noexcept = 0;

    // ---- connection handshake (SASL authentication, ...) --------------------------------
    //
    // On every new connection, before any request, the connection asks for handshake bytes.
    // When there are some, it writes them and feeds every reply to handshake_reply() until
    // that says done; requests submitted meanwhile wait (the connect timeout covers the whole
    // handshake). A handshake error (e.g. errc::auth_failed) fails the connection, which then
    // retries with the usual growing backoff, never in a tight loop.

    /// Appends the first handshake message to `out`; false when no handshake is needed.
    virtual bool handshake_request(protocol::OutputBuffer& /*out*/) { return false; }

    struct HandshakeStep {
        std::size_t consumed = 0;
        std::size_t needed = 0;
        bool done = false;
        std::error_code ec;
        std::string message;
    };
    /// Decodes handshake replies from `input`; may append a further message to `out`.
    virtual HandshakeStep handshake_reply(std::string_view /*input*/,
                                          protocol::OutputBuffer& /*out*/) {
        HandshakeStep s;
        s.done = true;
        return s;
    }
};

/// Throws std::system_error when the login options cannot be used: Options::sasl without the
/// binary protocol (errc::unsupported), both sasl and username/password, or a username or
/// password a text login cannot carry (errc::invalid_argument; the message never quotes the
/// password).
void check_credentials(const Options& options);

/// The driver for options.protocol; with Options::username/password, logging in at every
/// connect (text login over ascii and meta, SASL PLAIN over binary). Throws as
/// check_credentials does.
std::unique_ptr<ProtocolDriver> make_protocol_driver(const Options& options);

}  // namespace folsom::detail
