// MetaDriver: memcached's meta protocol behind the Client API.
//
// Commands map to the wire as follows:
//
//   get/gets (one key)       mg <key> v f [c]            VA (hit) or EN (miss)
//   gat/gats (one key)       mg <key> v f [c] T<ttl>
//   multi-key get/gets       get|gets <k1> <k2> ...: the classic text line, answered whole
//                            (VALUE lines naming their keys, then END)
//   multi-key gat/gats (and  mg <key> v f [c] k q O<position> [T<ttl>] per key, then mn. Misses
//   get/gets with a binary   are quiet; a hit's position comes from its opaque; the command
//   key)                     completes on MN.
//   set/add/replace/cas      ms <key> <size> [M<mode>] [F<flags>] [T<ttl>] [C<cas>]
//   append/prepend           ms <key> <size> MA|MP [C<cas>]
//   delete                   md <key> [C<cas>]
//   incr/decr                ma <key> [MD] D<delta> [N<ttl> J<initial>] v
//   touch                    mg <key> T<ttl>             HD (touched) or EN (not found)
//   noop                     mn
//   meta_get                 mg <key> v c f [t] [h] [l] [u] [T<ttl>] [N<ttl>] [R<ttl>]
//                            VA (hit, or a vivified stub) or EN; the whole reply (W/X/Z, ttl,
//                            ...) goes to the operation in Completion::meta
//   meta_set                 ms <key> <size> [M<mode>] [F<flags>] [T<ttl>] [C<cas>] [I]
//   meta_delete              md <key> [C<cas>] [I] [T<ttl>]
//   flush_all, stats, version, verbosity: no meta form; the classic text commands are sent on
//                            the same connection and their replies decoded with the text
//                            protocol's decoder (the driver keeps one decoder of each kind and
//                            picks by the command at the head of the pipeline).
//
// Keys go through protocol::validate_key (text rules), so a key means the same over every
// protocol. With Options::binary_keys, every key (protocol::validate_binary_key: 1..186 bytes
// of any value) is sent in base64 with the 'b' flag, on every command above, and a multi-key
// get/gets holding a key that is not a valid text key goes as one mg per key (the classic
// line has no base64 form; one of valid text keys keeps the classic line, which reaches the
// same items: see is_classic_multi in meta_driver.cpp). A hit's key the
// server returns in base64 is decoded (into a stack buffer: no allocation) before the
// operation sees it, so results are keyed by the caller's bytes. Placement never sees the
// base64 form: it happens above the driver, on the raw key.
#pragma once

#include "folsom/protocol/ascii_decoder.hpp"
#include "folsom/protocol/meta_decoder.hpp"

#include "wire/protocol_driver.hpp"

namespace folsom::detail {

class MetaDriver final : public ProtocolDriver {
  public:
    explicit MetaDriver(const Options& options);

    std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                           net::Command& cmd) override;
    DecodeStep decode(std::string_view input, net::CommandQueue& inflight) override;
    void reset() noexcept override;
    bool sends_quietly(const Request& r) const noexcept override;

  private:
    /// A reply while quiet commands are at the head: a failure of one of them (named by its
    /// opaque, or an error line, which names none), or the reply of the barrier that ends
    /// their run; the ones it passes over are completed with their silent outcome.
    bool pass_quiet(const protocol::meta::Reply& r, net::CommandQueue& inflight);
    /// The outcome of a quiet command no reply named: its silent outcome, unless an error
    /// line came in its window (see window_).
    Completion passed_over(const net::Command& c) const;
    std::error_code encode_multi(const Request& r, protocol::OutputBuffer& out, net::Command& cmd);
    /// Deliver one reply to the head of `inflight`; false when it does not answer it.
    bool deliver(const protocol::meta::Reply& r, net::CommandQueue& inflight);
    bool deliver(const protocol::ascii::Reply& r, net::CommandQueue& inflight);

    // Encoder side (under the connection's submission lock).
    protocol::Limits limits_;
    std::size_t scatter_threshold_;
    bool binary_keys_;               // Options::binary_keys: every key in base64 with 'b'
    std::uint32_t next_opaque_ = 0;  // quiet commands' O<n>; wraps

    // Decoder side (on the connection's strand).
    protocol::meta::Decoder meta_decoder_;
    protocol::ascii::Decoder ascii_decoder_;
    std::error_code multi_error_;  // first per-key failure of the multi-get at the head
    // The error lines (which echo no opaque) read since the last reply that named a quiet
    // command or ended their run: each came from one of the quiet commands that reply passes
    // over. Only small stores, deletes and touches go quiet (sends_quietly), so the only
    // error a store among them can draw is out-of-memory; any other error fails them all.
    struct QuietWindow {
        bool out_of_memory = false;
        std::error_code other;
    } window_;
};

}  // namespace folsom::detail
