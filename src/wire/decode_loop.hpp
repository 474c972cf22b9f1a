// ends_step(): the turn of a driver's read loop that every protocol shares. After a decoder's
// parse(), it tells the driver's step why there is no reply to deliver, when there is none:
// more bytes are needed, or the stream is broken and the connection must close. Written once
// so that the ascii, binary and meta loops (and the binary handshake) stop in the same way:
//
//     const auto res = decoder_.parse(input.substr(step.consumed), reply);
//     if (ends_step(res, decoder_, step)) return step;
//     deliver reply; step.consumed += res.consumed;
#pragma once

#include "folsom/error.hpp"
#include "folsom/protocol/decode_result.hpp"

namespace folsom::detail {

/// False when `res` is a complete reply (deliver it, then consume res.consumed bytes). True
/// when the loop must end, with `step` (a DecodeStep or a HandshakeStep) saying why: `needed`
/// for need-more; `ec` = protocol_error and the decoder's message for an error. Inline, and
/// the result is tested where it is made, so the read path pays no more than the two compares
/// it always made.
template <class Decoder, class Step>
inline bool ends_step(const protocol::ParseResult& res, const Decoder& decoder, Step& step) {
    if (res.state == protocol::ParseState::need_more) {
        step.needed = res.needed;
        return true;
    }
    if (res.state == protocol::ParseState::error) {
        step.ec = errc::protocol_error;
        step.message = decoder.error().message();
        return true;
    }
    return false;
}

}  // namespace folsom::detail
