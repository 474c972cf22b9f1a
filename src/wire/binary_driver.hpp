// BinaryDriver: memcached's binary protocol behind the Client API (and SASL PLAIN login).
//
// Every command carries an opaque from a per-connection counter; the server echoes it, and a
// reply whose opaque does not belong to the command at the head of the FIFO is a protocol
// error (the stream is out of step). Commands map to the wire as follows:
//
//   get/gets (one key)          GETK; the reply always carries the cas
//   gat/gats (one key)          GATK
//   multi-key retrieval         GETKQ (GATKQ) per key with opaque = base + position, then a
//                               NOOP with opaque = base + key count. Misses send nothing; the
//                               command completes when the NOOP's reply arrives, and a hit's
//                               position comes from its opaque (no key comparison).
//   set/add/replace/cas         SET/ADD/REPLACE (cas when given; cas is SET with a cas)
//   append/prepend              APPEND/PREPEND (cas when given)
//   delete                      DELETE (cas when given)
//   incr/decr                   INCREMENT/DECREMENT; without Request::initial the exptime is
//                               0xffffffff, so a missing counter is not created
//   touch, flush_all, stats, version, verbosity, noop: their opcodes (stats: STAT replies
//                               until the empty-key terminator)
//
// Keys are checked with the text protocol's rules (protocol::validate_key), although binary
// keys could hold any byte: a key then works the same over every protocol and with every other
// memcached client, and a program can switch protocols without its keys changing meaning.
// Options::raw_binary_protocol_keys asks for libmemcached's behaviour instead: any bytes, only
// the length checked (protocol::validate_raw_key).
#pragma once

#include "folsom/protocol/binary_decoder.hpp"

#include "wire/protocol_driver.hpp"

#include <optional>

namespace folsom::detail {

class BinaryDriver final : public ProtocolDriver {
  public:
    /// Throws std::system_error(errc::invalid_argument) for SASL credentials PLAIN cannot carry
    /// (a NUL byte in the user name or password).
    explicit BinaryDriver(const Options& options);

    std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                           net::Command& cmd) override;
    DecodeStep decode(std::string_view input, net::CommandQueue& inflight) override;
    void reset() noexcept override;
    bool sends_quietly(const Request& r) const noexcept override;

    bool handshake_request(protocol::OutputBuffer& out) override;
    HandshakeStep handshake_reply(std::string_view input, protocol::OutputBuffer& out) override;

  private:
    std::error_code encode_command(const Request& r, protocol::OutputBuffer& out,
                                   std::uint32_t opaque);
    std::error_code encode_multi(const Request& r, protocol::OutputBuffer& out,
                                 std::uint32_t opaque);
    /// Delivers one reply to the head of `inflight`; false when it does not answer it.
    bool deliver(const protocol::binary::Response& r, net::CommandQueue& inflight);

    // Encoder side: used under the connection's submission lock.
    protocol::Limits limits_;
    std::size_t scatter_threshold_;
    std::optional<SaslCredentials> sasl_;
    bool raw_keys_;                  // Options::raw_binary_protocol_keys
    std::uint32_t next_opaque_ = 0;  // wraps; matching uses unsigned differences
    // Handshake: the SASL_LIST_MECHS reply is still to come (it precedes SASL_AUTH's).
    bool awaiting_mechanisms_ = false;

    // Decoder side: used on the connection's strand.
    protocol::binary::Decoder decoder_;
    std::error_code multi_error_;  // first per-key failure of the multi-get at the head
};

}  // namespace folsom::detail
