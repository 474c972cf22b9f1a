#include "wire/binary_driver.hpp"

#include "folsom/error.hpp"
#include "folsom/protocol/binary_encoder.hpp"
#include "folsom/protocol/key.hpp"

#include "wire/decode_loop.hpp"

namespace folsom::detail {
namespace {

namespace bin = protocol::binary;

// The handshake's SASL_LIST_MECHS; its SASL_AUTH goes with opaque 0. No request precedes the
// handshake, so neither can be mistaken for a request's reply.
constexpr std::uint32_t handshake_mechanisms_opaque = 1;
using bin::Opcode;
using bin::ResponseStatus;

bool is_multi(const net::Command& c) {
    return is_retrieval(c.code) && c.key_count != 1;
}

bool is_touching(OpCode c) {
    return c == OpCode::gat || c == OpCode::gats;
}

/// The quiet opcode of a quiet command (its reply, a failure, echoes it).
Opcode quiet_reply_opcode(OpCode c) {
    switch (c) {
        case OpCode::set:
        case OpCode::cas:
            return Opcode::setq;
        case OpCode::add:
            return Opcode::addq;
        case OpCode::replace:
            return Opcode::replaceq;
        case OpCode::append:
            return Opcode::appendq;
        case OpCode::prepend:
            return Opcode::prependq;
        case OpCode::del:
            return Opcode::deleteq;
        case OpCode::incr:
            return Opcode::incrementq;
        default:
            return Opcode::decrementq;
    }
}

/// The opcode a reply to `c` echoes; a reply with any other is out of step.
Opcode reply_opcode(const net::Command& c) {
    if (c.quiet) return quiet_reply_opcode(c.code);
    switch (c.code) {
        case OpCode::get:
        case OpCode::gets:
            return is_multi(c) ? Opcode::getkq : Opcode::getk;
        case OpCode::gat:
        case OpCode::gats:
            return is_multi(c) ? Opcode::gatkq : Opcode::gatk;
        case OpCode::set:
        case OpCode::cas:
            return Opcode::set;
        case OpCode::add:
            return Opcode::add;
        case OpCode::replace:
            return Opcode::replace;
        case OpCode::append:
            return Opcode::append;
        case OpCode::prepend:
            return Opcode::prepend;
        case OpCode::del:
            return Opcode::delete_;
        case OpCode::incr:
            return Opcode::increment;
        case OpCode::decr:
            return Opcode::decrement;
        case OpCode::touch:
            return Opcode::touch;
        case OpCode::flush_all:
            return Opcode::flush;
        case OpCode::stats:
            return Opcode::stat;
        case OpCode::version:
            return Opcode::version;
        case OpCode::verbosity:
            return Opcode::verbosity;
        case OpCode::noop:
        case OpCode::meta_get:  // never encoded (see encode)
        case OpCode::meta_set:
        case OpCode::meta_delete:
            return Opcode::noop;
    }
    return Opcode::noop;
}

/// A failure status as an error (the statuses that are outcomes are handled by the caller).
std::error_code to_error(ResponseStatus s) {
    switch (s) {
        case ResponseStatus::auth_error:
        case ResponseStatus::auth_continue:
            return errc::auth_failed;
        case ResponseStatus::unknown_command:
        case ResponseStatus::not_supported:
            return errc::unsupported;
        case ResponseStatus::invalid_arguments:
        case ResponseStatus::non_numeric:
            return errc::client_error;
        default:
            return errc::server_error;
    }
}

/// The outcome of a store. memcached answers an add on an existing key with KEY_EXISTS and a
/// replace of a missing key with KEY_NOT_FOUND; without a cas those mean "not stored", as the
/// text and meta protocols say, so an add behaves the same whatever the protocol.
std::optional<Status> store_status(const net::Command& c, ResponseStatus s) {
    switch (s) {
        case ResponseStatus::no_error:
            return Status::stored;
        case ResponseStatus::key_exists:
            return c.code == OpCode::add && !c.with_cas ? Status::not_stored : Status::exists;
        case ResponseStatus::key_not_found:
            return c.code == OpCode::replace && !c.with_cas ? Status::not_stored
                                                            : Status::not_found;
        case ResponseStatus::item_not_stored:
            return Status::not_stored;
        case ResponseStatus::value_too_large:
            return Status::value_too_large;
        case ResponseStatus::out_of_memory:
            return Status::out_of_memory;
        default:
            return std::nullopt;
    }
}

/// The outcome of a command whose success has a fixed Status (delete, touch, incr, ...).
std::optional<Status> simple_status(OpCode c, ResponseStatus s) {
    if (s == ResponseStatus::no_error) {
        switch (c) {
            case OpCode::del:
                return Status::deleted;
            case OpCode::touch:
                return Status::touched;
            default:
                return Status::ok;
        }
    }
    const bool keyed =
        c == OpCode::del || c == OpCode::touch || c == OpCode::incr || c == OpCode::decr;
    if (keyed && s == ResponseStatus::key_not_found) return Status::not_found;
    if (c == OpCode::del && s == ResponseStatus::key_exists) return Status::exists;
    return std::nullopt;
}

Completion failed_with(const bin::Response& r) {
    Completion done;
    done.ec = to_error(r.status);
    done.text = r.value;
    return done;
}

ValueView view_of(const bin::Response& r) {
    return ValueView{r.key, r.value, r.flags, r.cas};
}

void complete_head(net::CommandQueue& inflight, const Completion& done) {
    inflight.complete_front(done);
}

}  // namespace

BinaryDriver::BinaryDriver(const Options& options)
    : limits_{options.max_value_size, protocol::Limits{}.max_line_length},
      scatter_threshold_(options.scatter_threshold),
      sasl_(options.sasl),
      raw_keys_(options.raw_binary_protocol_keys),
      decoder_(limits_) {
    if (sasl_) {
        // PLAIN separates its fields with NUL bytes; refuse what it cannot carry up front
        // rather than fail every connection attempt later.
        protocol::OutputBuffer probe;
        if (auto ec =
                bin::encode_sasl_auth_plain(probe, sasl_->username, sasl_->password, 0, limits_))
            throw std::system_error(ec, "SASL credentials PLAIN cannot carry");
    }
}

void BinaryDriver::reset() noexcept {
    decoder_.reset();
    multi_error_ = {};
    awaiting_mechanisms_ = false;
}

std::error_code BinaryDriver::encode(const Request& r, protocol::OutputBuffer& out,
                                     net::Command& cmd) {
    if (is_meta_only(r.code)) return errc::unsupported;  // no binary form
    cmd.key_count = static_cast<std::uint32_t>(r.keys.size());
    cmd.with_cas = is_store(r.code) && r.cas != 0;
    cmd.opaque = next_opaque_;
    cmd.quiet = sends_quietly(r);
    const bool multi = is_retrieval(r.code) && r.keys.size() != 1;
    const std::error_code ec =
        multi ? encode_multi(r, out, next_opaque_) : encode_command(r, out, next_opaque_);
    // A multi-get uses one opaque per key and one for its NOOP.
    if (!ec) next_opaque_ += multi ? cmd.key_count + 1 : 1;
    return ec;
}

std::error_code BinaryDriver::encode_multi(const Request& r, protocol::OutputBuffer& out,
                                           std::uint32_t opaque) {
    if (r.keys.empty()) return errc::invalid_argument;
    const std::size_t arena_mark = out.arena_size();
    const std::size_t ref_mark = out.ref_count();
    const bool touch = is_touching(r.code);
    std::uint32_t position = 0;
    for (std::string_view key : r.keys) {
        std::error_code ec =
            raw_keys_ ? protocol::validate_raw_key(key) : protocol::validate_key(key);
        if (!ec)
            ec = touch ? bin::encode_gat(out, bin::GatCommand::gatkq, key, r.exptime,
                                         opaque + position)
                       : bin::encode_get(out, bin::GetCommand::getkq, key, opaque + position);
        if (ec) {
            out.truncate(arena_mark, ref_mark);  // all or nothing: the part fails as one
            return ec;
        }
        ++position;
    }
    return bin::encode_noop(out, opaque + position);
}

std::error_code BinaryDriver::encode_command(const Request& r, protocol::OutputBuffer& out,
                                             std::uint32_t opaque) {
    const bool keyed = r.code != OpCode::flush_all && r.code != OpCode::stats &&
                       r.code != OpCode::version && r.code != OpCode::verbosity &&
                       r.code != OpCode::noop;
    const std::string_view key = is_retrieval(r.code) ? r.keys.front() : r.key;
    if (keyed)
        if (auto ec = raw_keys_ ? protocol::validate_raw_key(key) : protocol::validate_key(key))
            return ec;
    const std::size_t ref_threshold = r.value_is_stable ? scatter_threshold_ : ~std::size_t{0};
    switch (r.code) {
        case OpCode::get:
        case OpCode::gets:
            return bin::encode_get(out, bin::GetCommand::getk, key, opaque);
        case OpCode::gat:
        case OpCode::gats:
            return bin::encode_gat(out, bin::GatCommand::gatk, key, r.exptime, opaque);
        case OpCode::set:
        case OpCode::add:
        case OpCode::replace:
        case OpCode::cas: {
            // Over the binary protocol a cas of 0 means "no check": a cas request without one
            // would silently become a plain set.
            if (r.code == OpCode::cas && r.cas == 0) return errc::invalid_argument;
            const auto cmd = r.code == OpCode::add       ? bin::StoreCommand::add
                             : r.code == OpCode::replace ? bin::StoreCommand::replace
                                                         : bin::StoreCommand::set;
            return bin::encode_store(out, cmd, key, r.value, r.flags, r.exptime, r.cas,
                                     sends_quietly(r), opaque, limits_, ref_threshold);
        }
        case OpCode::append:
        case OpCode::prepend:
            return bin::encode_concat(
                out,
                r.code == OpCode::append ? bin::ConcatCommand::append : bin::ConcatCommand::prepend,
                key, r.value, r.cas, sends_quietly(r), opaque, limits_, ref_threshold);
        case OpCode::del:
            return bin::encode_delete(out, key, r.cas, sends_quietly(r), opaque);
        case OpCode::incr:
        case OpCode::decr:
            return bin::encode_arith(out,
                                     r.code == OpCode::incr ? bin::ArithCommand::increment
                                                            : bin::ArithCommand::decrement,
                                     key, r.delta, r.initial.value_or(0),
                                     r.initial ? r.exptime : bin::no_auto_create, 0,
                                     sends_quietly(r), opaque);
        case OpCode::touch:
            return bin::encode_touch(out, key, r.exptime, opaque);
        case OpCode::flush_all:
            return bin::encode_flush(out, r.delay, false, opaque);
        case OpCode::stats:
            return bin::encode_stat(out, r.group, opaque);
        case OpCode::version:
            return bin::encode_version(out, opaque);
        case OpCode::verbosity:
            return bin::encode_verbosity(out, r.level, opaque);
        case OpCode::noop:
            return bin::encode_noop(out, opaque);
        case OpCode::meta_get:
        case OpCode::meta_set:
        case OpCode::meta_delete:
            break;  // refused in encode()
    }
    return errc::unsupported;
}

DecodeStep BinaryDriver::decode(std::string_view input, net::CommandQueue& inflight) {
    DecodeStep step;
    bin::Response r;
    for (;;) {
        const auto res = decoder_.parse(input.substr(step.consumed), r);
        if (ends_step(res, decoder_, step)) return step;
        if (inflight.empty()) {
            step.ec = errc::protocol_error;
            step.message = "reply to a request never sent";
            return step;
        }
        if (!deliver(r, inflight)) {
            step.ec = errc::protocol_error;
            step.message = "reply does not answer the request at the head of the pipeline";
            return step;
        }
        step.consumed += res.consumed;
    }
}

bool BinaryDriver::sends_quietly(const Request& r) const noexcept {
    // Every write has a quiet opcode but touch (and gat, a retrieval).
    return r.quiet && is_quiet_capable(r.code) && r.code != OpCode::touch;
}

bool BinaryDriver::deliver(const bin::Response& r, net::CommandQueue& inflight) {
    // Every reply names its request by the opaque, so quiet commands ahead of the one it
    // names were passed over in silence: they succeeded.
    while (inflight.front().quiet && r.opaque != inflight.front().opaque) {
        Completion done;
        done.status = silent_outcome(inflight.front().code);
        complete_head(inflight, done);
        if (inflight.empty()) return false;
    }
    net::Command& head = inflight.front();
    // Unsigned difference: correct across the opaque counter's wrap-around.
    const std::uint32_t offset = r.opaque - head.opaque;

    if (is_multi(head)) {
        if (offset < head.key_count) {
            if (r.opcode != reply_opcode(head)) return false;
            if (r.status == ResponseStatus::no_error) {
                ++head.hits;
                head.op->on_value(head.part, offset, view_of(r));
            } else if (r.status != ResponseStatus::key_not_found && !multi_error_)
                multi_error_ = to_error(r.status);  // the other keys still answer; NOOP ends it
            return true;
        }
        if (offset != head.key_count || r.opcode != Opcode::noop) return false;
        Completion done;
        done.ec = multi_error_;
        multi_error_ = {};
        complete_head(inflight, done);
        return true;
    }

    if (offset != 0 || r.opcode != reply_opcode(head)) return false;
    const OpCode code = head.code;

    if (is_retrieval(code)) {
        if (r.status == ResponseStatus::no_error) {
            ++head.hits;
            head.op->on_value(head.part, 0, view_of(r));
            complete_head(inflight, Completion{});
        } else if (r.status == ResponseStatus::key_not_found) {
            complete_head(inflight, Completion{});  // a miss
        } else {
            complete_head(inflight, failed_with(r));
        }
        return true;
    }

    if (code == OpCode::stats) {
        if (r.status != ResponseStatus::no_error) {
            complete_head(inflight, failed_with(r));
        } else if (r.key.empty()) {
            complete_head(inflight, Completion{});  // the terminator
        } else {
            head.op->on_stat(head.part, r.key, r.value);
        }
        return true;
    }

    const std::optional<Status> status =
        is_store(code) ? store_status(head, r.status) : simple_status(code, r.status);
    if (!status) {
        complete_head(inflight, failed_with(r));
        return true;
    }
    Completion done;
    done.status = *status;
    if (r.status == ResponseStatus::no_error) {
        if (code == OpCode::incr || code == OpCode::decr) done.number = r.number;
        if (code == OpCode::version) done.text = r.value;
    }
    complete_head(inflight, done);
    return true;
}

bool BinaryDriver::handshake_request(protocol::OutputBuffer& out) {
    if (!sasl_) return false;
    // SASL_LIST_MECHS goes out with SASL_AUTH in one write, so asking costs no round trip.
    // Its answer is what tells "the server has no PLAIN mechanism" (memcached without the
    // Cyrus plugins, Debian's libsasl2-modules, fails every login with a bare "Auth failure")
    // apart from a refused password. Validated in the constructor, so this cannot fail.
    (void)bin::encode_sasl_list_mechs(out, handshake_mechanisms_opaque);
    (void)bin::encode_sasl_auth_plain(out, sasl_->username, sasl_->password, 0, limits_);
    awaiting_mechanisms_ = true;
    return true;
}

namespace {

/// True when the space-separated mechanism list names PLAIN.
bool offers_plain(std::string_view list) {
    while (!list.empty()) {
        const auto space = list.find(' ');
        if (list.substr(0, space) == "PLAIN") return true;
        if (space == std::string_view::npos) break;
        list.remove_prefix(space + 1);
    }
    return false;
}

}  // namespace

ProtocolDriver::HandshakeStep BinaryDriver::handshake_reply(std::string_view input,
                                                            protocol::OutputBuffer& /*out*/) {
    HandshakeStep step;
    bin::Response r;
    for (;;) {
        const auto res = decoder_.parse(input.substr(step.consumed), r);
        if (ends_step(res, decoder_, step)) return step;
        step.consumed += res.consumed;
        if (!awaiting_mechanisms_) break;
        awaiting_mechanisms_ = false;
        if (r.opcode != Opcode::sasl_list_mechs || r.opaque != handshake_mechanisms_opaque) {
            step.ec = errc::protocol_error;
            step.message = "handshake reply does not answer SASL_LIST_MECHS";
            return step;
        }
        if (r.status == ResponseStatus::unknown_command ||
            r.status == ResponseStatus::not_supported) {
            step.ec = errc::unsupported;
            step.message = "the server does not do SASL (start it with -S)";
            return step;
        }
        // memcached answers the list with an auth error when no mechanism plugin loaded.
        if (r.status != ResponseStatus::no_error || !offers_plain(r.value)) {
            step.ec = errc::no_sasl_mechanism;
            step.message = r.status == ResponseStatus::no_error
                               ? "the server offers no PLAIN mechanism (it lists \"" +
                                     std::string(r.value) + "\")"
                               : "the server offers no SASL mechanism at all (SASL_LIST_MECHS: " +
                                     std::string(bin::to_string(r.status)) + ")";
            step.message += "; install libsasl2-modules on the server's host";
            return step;
        }
    }
    if (r.opcode != Opcode::sasl_auth || r.opaque != 0) {
        step.ec = errc::protocol_error;
        step.message = "handshake reply does not answer SASL_AUTH";
        return step;
    }
    switch (r.status) {
        case ResponseStatus::no_error:
            step.done = true;
            break;
        case ResponseStatus::auth_error:
        case ResponseStatus::auth_continue:  // PLAIN has no second step: treat as refused
            step.ec = errc::auth_failed;
            step.message = "SASL PLAIN login refused";
            break;
        case ResponseStatus::unknown_command:
        case ResponseStatus::not_supported:
            step.ec = errc::unsupported;
            step.message = "the server does not do SASL (start it with -S)";
            break;
        default:
            step.ec = to_error(r.status);
            step.message = "SASL_AUTH failed: " + std::string(bin::to_string(r.status));
            break;
    }
    return step;
}

}  // namespace folsom::detail
