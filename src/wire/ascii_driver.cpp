#include "wire/ascii_driver.hpp"

#include "folsom/error.hpp"
#include "folsom/protocol/ascii_encoder.hpp"

#include "wire/classic_text.hpp"
#include "wire/decode_loop.hpp"

namespace folsom::detail {
namespace {

namespace ascii = protocol::ascii;

ascii::StoreCommand store_command(OpCode c) {
    switch (c) {
        case OpCode::add:
            return ascii::StoreCommand::add;
        case OpCode::replace:
            return ascii::StoreCommand::replace;
        case OpCode::append:
            return ascii::StoreCommand::append;
        case OpCode::prepend:
            return ascii::StoreCommand::prepend;
        case OpCode::cas:
            return ascii::StoreCommand::cas;
        default:
            return ascii::StoreCommand::set;
    }
}

}  // namespace

AsciiDriver::AsciiDriver(const Options& options)
    : limits_{options.max_value_size, protocol::Limits{}.max_line_length},
      scatter_threshold_(options.scatter_threshold),
      decoder_(limits_) {}

std::error_code AsciiDriver::encode(const Request& r, protocol::OutputBuffer& out,
                                    net::Command& cmd) {
    cmd.key_count = static_cast<std::uint32_t>(r.keys.size());
    // Single-key gets are answered by key (see decode), so that later ones can join them.
    cmd.keep_key = joinable(r.code) && r.keys.size() == 1;
    if (cmd.keep_key) cmd.line_key_bytes = static_cast<std::uint16_t>(r.keys[0].size());
    // A quiet write goes with noreply: memcached then answers nothing at all, not even a
    // failure, so it completes with Status::sent once written (Connection).
    const bool noreply = r.quiet && !r.outcome_required && is_quiet_capable(r.code);
    cmd.unanswered = noreply;
    switch (r.code) {
        case OpCode::get:
        case OpCode::gets:
        case OpCode::gat:
        case OpCode::gats:
            return ascii::encode_retrieve(out, retrieve_command(r.code), r.keys, r.exptime);
        case OpCode::set:
        case OpCode::add:
        case OpCode::replace:
        case OpCode::append:
        case OpCode::prepend:
        case OpCode::cas:
            return ascii::encode_store(out, store_command(r.code), r.key, r.value, r.flags,
                                       r.exptime, r.cas, noreply, limits_,
                                       r.value_is_stable ? scatter_threshold_ : ~std::size_t{0});
        case OpCode::del:
            if (r.cas != 0) return errc::unsupported;  // the text protocol has no delete-with-cas
            return ascii::encode_delete(out, r.key, noreply);
        case OpCode::incr:
        case OpCode::decr:
            if (r.initial) return errc::unsupported;  // no initial value over the text protocol
            return ascii::encode_arith(
                out, r.code == OpCode::incr ? ascii::ArithCommand::incr : ascii::ArithCommand::decr,
                r.key, r.delta, noreply);
        case OpCode::touch:
            return ascii::encode_touch(out, r.key, r.exptime, noreply);
        case OpCode::flush_all:
        case OpCode::stats:
        case OpCode::version:
        case OpCode::verbosity:
            return encode_classic_only(r, out);
        case OpCode::noop:
        case OpCode::meta_get:
        case OpCode::meta_set:
        case OpCode::meta_delete:
            return errc::unsupported;  // meta protocol only
    }
    return errc::unsupported;
}

// Command::joined and Command::line_key_bytes are 16 bits: a line of keys of at least one byte
// each, with their spaces, holds at most half its key bytes in keys.
static_assert(protocol::max_retrieval_key_bytes <= 0xffff);

bool AsciiDriver::join(const Request& r, protocol::OutputBuffer& out, const net::Command& last,
                       net::Command& cmd) {
    // Only a single-key get after a single-key get (gets after gets): the reply of
    // "get a b" is the replies of "get a" and "get b" less their ENDs, so every caller still
    // gets exactly its own answer, while memcached answers the batch in one write instead of
    // one write per get, each a wake-up of the client.
    // The line grows up to protocol::max_retrieval_key_bytes of keys, as a multi-get's do:
    // a pipeline window of a thousand short keys is one line, which memcached answers in a
    // few large writes, so each read of the client's delivers that many more replies.
    if (!joinable(r.code) || r.code != last.code || !last.keep_key || r.keys.size() != 1)
        return false;
    const std::size_t line = last.line_key_bytes + 1 + r.keys[0].size();
    if (line > protocol::max_retrieval_key_bytes) return false;
    if (ascii::encode_retrieve_more(out, r.keys[0])) return false;  // encode() reports it
    cmd.key_count = 1;
    cmd.keep_key = true;
    cmd.joined = static_cast<std::uint16_t>(last.joined + 1);
    cmd.line_key_bytes = static_cast<std::uint16_t>(line);
    return true;
}

bool AsciiDriver::decode_keyed(const ascii::Reply& reply, net::CommandQueue& inflight) {
    using K = ascii::ReplyKind;
    if (!group_open_) {
        // The first reply to the wire command at the front: count the commands sharing it.
        if (inflight.empty() || inflight.front().joined != 0) return false;
        std::size_t n = 1;
        while (n < inflight.size() && inflight.at(n).joined != 0)
            ++n;
        group_left_ = n;
        group_open_ = true;
    }
    if (reply.kind == K::value) {
        // memcached answers the hits in the order they were asked for, so the key is almost
        // always the first unanswered one. A proxy that splits the line over its servers
        // (twemproxy) merges their answers in another order: so look through the wire
        // command's unanswered keys, and leave the ones passed over to END, as they may still
        // come. A key it never asked for (or not that many times) means the stream is out of
        // step, and then every command must fail, not turn into misses.
        std::size_t i = 0;
        for (;; ++i) {
            if (i == group_left_) return false;
            const net::Command& c = inflight.at(i);
            if (c.hits == 0 && inflight.key(c) == reply.key) break;
        }
        net::Command& c = inflight.at(i);
        ++c.hits;
        c.op->on_value(c.part, Operation::unknown_position,
                       ValueView{reply.key, reply.data, reply.flags, reply.cas});
        // The answered commands at the front complete now (with memcached, every one).
        while (group_left_ > 0 && inflight.front().hits != 0) {
            inflight.complete_front(Completion{});
            --group_left_;
        }
        return true;
    }
    // END (or a refusal) closes the wire command: its keys not answered missed (or failed).
    const Completion done = reply.kind == K::end ? Completion{} : refusal(reply.kind, reply.data);
    for (; group_left_ > 0; --group_left_)
        inflight.complete_front(done);
    group_open_ = false;
    return true;
}

DecodeStep AsciiDriver::decode(std::string_view input, net::CommandQueue& inflight) {
    using K = ascii::ReplyKind;
    DecodeStep step;
    ascii::Reply reply;
    for (;;) {
        // noreply writes ahead of the next reply were written: no reply will ever name them.
        if (!group_open_ && !inflight.empty() && inflight.front().unanswered) {
            Completion sent;
            sent.status = Status::sent;
            while (!inflight.empty() && inflight.front().unanswered)
                inflight.complete_front(sent);
        }
        const auto res = decoder_.parse(input.substr(step.consumed), reply);
        if (ends_step(res, decoder_, step)) return step;
        const bool keyed_reply =
            reply.kind == K::value || reply.kind == K::end || is_refusal(reply.kind);
        if (group_open_ || (keyed_reply && !inflight.empty() && inflight.front().keep_key)) {
            if (!keyed_reply || !decode_keyed(reply, inflight)) {
                step.ec = errc::protocol_error;
                step.message = "reply does not answer the get at the head of the pipeline";
                return step;
            }
            step.consumed += res.consumed;
            continue;
        }
        if (inflight.empty()) {
            step.ec = errc::protocol_error;
            step.message = "reply to a request never sent";
            return step;
        }
        net::Command& head = inflight.front();
        const OpCode code = head.code;
        switch (reply.kind) {
            case K::value:
                if (!is_retrieval(code)) goto out_of_step;
                ++head.hits;
                head.op->on_value(head.part, Operation::unknown_position,
                                  ValueView{reply.key, reply.data, reply.flags, reply.cas});
                break;
            case K::stat:
                if (code != OpCode::stats) goto out_of_step;
                head.op->on_stat(head.part, reply.key, reply.data);
                break;
            case K::end: {
                if (!is_retrieval(code) && code != OpCode::stats) goto out_of_step;
                inflight.complete_front(Completion{});
                break;
            }
            case K::error:
            case K::client_error:
            case K::server_error: {
                // The server refused this command; the stream is still in step.
                inflight.complete_front(refusal(reply.kind, reply.data));
                break;
            }
            default: {
                if (!status_fits(code, reply.kind)) goto out_of_step;
                inflight.complete_front(status_completion(reply));
                break;
            }
        }
        step.consumed += res.consumed;
        continue;
    out_of_step:
        step.ec = errc::protocol_error;
        step.message = "reply does not answer the request at the head of the pipeline";
        return step;
    }
}

}  // namespace folsom::detail
