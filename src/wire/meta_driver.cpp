#include "wire/meta_driver.hpp"

#include "folsom/error.hpp"
#include "folsom/meta.hpp"
#include "folsom/protocol/ascii_encoder.hpp"
#include "folsom/protocol/base64.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/protocol/meta_encoder.hpp"

#include "protocol/store_refusal.hpp"
#include "wire/classic_text.hpp"
#include "wire/decode_loop.hpp"

#include <charconv>

namespace folsom::detail {
namespace {

namespace meta = protocol::meta;
namespace ascii = protocol::ascii;

bool is_multi(const net::Command& c) {
    return is_retrieval(c.code) && c.key_count != 1;
}

bool is_touching(OpCode c) {
    return c == OpCode::gat || c == OpCode::gats;
}
bool wants_cas(OpCode c) {
    return c == OpCode::gets || c == OpCode::gats;
}

/// A plain multi-key get or gets, sent as one classic text line ("get k1 k2 ...", which
/// memcached accepts on any text connection, meta included). memcached answers at most -R (20)
/// commands per event before it serves other connections: a multi-get sent as one mg per key
/// comes back in pieces of 20 (a hundred keys, five wake-ups of the client), where the one line
/// comes back whole. gat/gats keep their mg form (a classic gat line is limited to 2048 bytes).
///
/// With binary keys the classic line still serves a multi-get whose keys are all valid text
/// keys: memcached stores a b-key's decoded bytes, so they are the same items, and a classic
/// VALUE line names its key by those raw bytes (also for an item stored with b), which the
/// collector matches as usual. Only a part holding a key the line cannot carry goes as mg
/// per key (the line has no base64 form).
bool is_classic_multi(const Request& r, bool binary_keys) {
    if (r.keys.size() == 1 || (r.code != OpCode::get && r.code != OpCode::gets)) return false;
    if (!binary_keys) return true;
    // (A key over the binary limit goes to the mg path too, which refuses it: with binary keys
    // every key is 1..186 bytes, whichever way it would travel.)
    for (std::string_view k : r.keys)
        if (k.size() > protocol::max_binary_key_length || protocol::validate_key(k)) return false;
    return true;
}

meta::SetMode set_mode(OpCode c) {
    switch (c) {
        case OpCode::add:
            return meta::SetMode::add;
        case OpCode::replace:
            return meta::SetMode::replace;
        case OpCode::append:
            return meta::SetMode::append;
        case OpCode::prepend:
            return meta::SetMode::prepend;
        default:
            return meta::SetMode::set;
    }
}

void complete_head(net::CommandQueue& inflight, const Completion& done) {
    inflight.complete_front(done);
}

/// An ERROR / CLIENT_ERROR / SERVER_ERROR reply as a Completion. For a store, the two
/// SERVER_ERRORs memcached uses for "cannot store this" are outcomes, as over ASCII.
Completion error_completion(meta::ReplyKind kind, std::string_view text, bool store) {
    Completion done;
    done.text = text;
    if (kind == meta::ReplyKind::server_error && store) {
        if (const std::optional<Status> refusal = protocol::store_refusal(text)) {
            done.status = *refusal;
            return done;
        }
    }
    done.ec = kind == meta::ReplyKind::client_error   ? errc::client_error
              : kind == meta::ReplyKind::server_error ? errc::server_error
                                                      : errc::unsupported;
    return done;
}

bool is_error(meta::ReplyKind k) {
    return k == meta::ReplyKind::error || k == meta::ReplyKind::client_error ||
           k == meta::ReplyKind::server_error;
}

ValueView view_of(const meta::Reply& r) {
    return ValueView{r.key, r.data, r.client_flags.value_or(0), r.cas.value_or(0)};
}

/// The longest base64 key a reply may carry: the encoding of the longest binary key.
constexpr std::size_t max_reply_base64_key =
    protocol::base64_encoded_size(meta::max_base64_key_length);

/// view_of(r), with a key the server returned in base64 (its b flag: the item was stored with a
/// binary key) decoded into `raw`, so that the caller sees the bytes it gave. False when that
/// key is not canonical base64 or longer than any binary key (then the reply is not ours).
bool view_of(const meta::Reply& r, char (&raw)[meta::max_base64_key_length], ValueView& out) {
    out = view_of(r);
    if (!r.key_base64) return true;
    std::size_t n = 0;
    if (r.key.size() > max_reply_base64_key || !protocol::base64_decode(r.key, raw, n))
        return false;
    out.key = std::string_view(raw, n);
    return true;
}

}  // namespace

MetaDriver::MetaDriver(const Options& options)
    : limits_{options.max_value_size, protocol::Limits{}.max_line_length},
      scatter_threshold_(options.scatter_threshold),
      binary_keys_(options.binary_keys),
      meta_decoder_(limits_),
      ascii_decoder_(limits_) {}

void MetaDriver::reset() noexcept {
    meta_decoder_.reset();
    ascii_decoder_.reset();
    multi_error_ = {};
    window_ = {};
}

// memcached answers a quiet command's failure with its opaque, except for error lines
// (SERVER_ERROR, CLIENT_ERROR), which echo nothing: one of those amid many quiet commands
// could not be pinned on the right one. So only the commands that cannot draw an error line
// other than "out of memory" go quiet: stores whose item cannot be too large for any memcached
// (its -I is at least 1 KiB; key and value under 512 bytes leave room for the item header),
// deletes and touches. An incr/decr (which a non-number refuses with CLIENT_ERROR) and a larger
// store are sent acknowledged: their outcome is just as true, at the cost of a reply.
constexpr std::size_t quiet_store_limit = 512;

bool MetaDriver::sends_quietly(const Request& r) const noexcept {
    if (!r.quiet) return false;
    if (is_store(r.code)) {
        const std::size_t key =
            binary_keys_ ? protocol::base64_encoded_size(r.key.size()) : r.key.size();
        return key + r.value.size() < quiet_store_limit;
    }
    return r.code == OpCode::del || r.code == OpCode::touch;
}

std::error_code MetaDriver::encode(const Request& r, protocol::OutputBuffer& out,
                                   net::Command& cmd) {
    cmd.key_count = static_cast<std::uint32_t>(r.keys.size());
    cmd.with_cas = is_store(r.code) && r.cas != 0;
    if (is_retrieval(r.code) && r.keys.size() != 1) return encode_multi(r, out, cmd);

    const std::string_view key = is_retrieval(r.code) ? r.keys.front() : r.key;
    if (!is_classic_only(r.code) && r.code != OpCode::noop)
        if (auto ec = protocol::validate_key(key, binary_keys_)) return ec;
    // A quiet command carries O<n>, so that its failure reply names it.
    const bool quiet = sends_quietly(r);
    char opaque_digits[10];
    std::string_view opaque;
    if (quiet) {
        cmd.quiet = true;
        cmd.opaque = next_opaque_++;
        const auto [end, conv] =
            std::to_chars(opaque_digits, opaque_digits + sizeof opaque_digits, cmd.opaque);
        (void)conv;  // 10 digits hold any uint32
        opaque = std::string_view(opaque_digits, static_cast<std::size_t>(end - opaque_digits));
    }
    switch (r.code) {
        case OpCode::get:
        case OpCode::gets:
        case OpCode::gat:
        case OpCode::gats: {
            meta::GetFlags f;
            f.base64_key = binary_keys_;
            f.value = true;
            f.client_flags = true;
            f.cas = wants_cas(r.code);
            if (is_touching(r.code)) f.touch_ttl = r.exptime;
            return meta::encode_get(out, key, f);
        }
        case OpCode::set:
        case OpCode::add:
        case OpCode::replace:
        case OpCode::append:
        case OpCode::prepend:
        case OpCode::cas: {
            // A cas of 0 can never match; refuse it rather than send a check that cannot pass
            // (and the binary protocol would read it as "no check" — keep protocols alike).
            if (r.code == OpCode::cas && r.cas == 0) return errc::invalid_argument;
            meta::SetFlags f;
            f.base64_key = binary_keys_;
            f.mode = set_mode(r.code);
            const bool concat = r.code == OpCode::append || r.code == OpCode::prepend;
            // append/prepend keep the item's flags and ttl, as over the other protocols.
            if (!concat) {
                f.client_flags = r.flags;
                if (r.exptime != 0) f.ttl = r.exptime;
            }
            if (r.cas != 0) f.compare_cas = r.cas;
            f.quiet = quiet;
            f.opaque = opaque;
            return meta::encode_set(out, key, r.value, f, limits_,
                                    r.value_is_stable ? scatter_threshold_ : ~std::size_t{0});
        }
        case OpCode::del: {
            meta::DeleteFlags f;
            f.base64_key = binary_keys_;
            if (r.cas != 0) f.compare_cas = r.cas;
            f.quiet = quiet;
            f.opaque = opaque;
            return meta::encode_delete(out, key, f);
        }
        case OpCode::incr:
        case OpCode::decr: {
            meta::ArithFlags f;
            f.base64_key = binary_keys_;
            f.mode =
                r.code == OpCode::incr ? meta::ArithMode::increment : meta::ArithMode::decrement;
            f.delta = r.delta;
            if (r.initial) {
                f.vivify_ttl = r.exptime;
                f.initial = r.initial;
            }
            f.return_value = true;
            return meta::encode_arith(out, key, f);
        }
        case OpCode::touch: {
            meta::GetFlags f;
            f.base64_key = binary_keys_;
            f.touch_ttl = r.exptime;
            f.quiet = quiet;  // mg is silent on a miss and answers HD on a hit
            f.opaque = opaque;
            return meta::encode_get(out, key, f);
        }
        case OpCode::meta_get: {
            meta::GetFlags f;
            f.base64_key = binary_keys_;
            f.value = true;
            f.cas = true;
            f.client_flags = true;
            f.ttl = r.meta.return_ttl;
            f.hit_before = r.meta.return_hit_before;
            f.last_access = r.meta.return_last_access;
            f.no_bump = r.meta.no_bump;
            f.touch_ttl = r.meta.touch_ttl;
            f.vivify_ttl = r.meta.vivify_ttl;
            f.recache_ttl = r.meta.recache_ttl;
            return meta::encode_get(out, key, f);
        }
        case OpCode::meta_set: {
            static_assert(static_cast<int>(MetaSetMode::prepend) ==
                          static_cast<int>(meta::SetMode::prepend));
            if (r.meta.set_mode > static_cast<std::uint8_t>(meta::SetMode::prepend))
                return errc::invalid_argument;
            meta::SetFlags f;
            f.base64_key = binary_keys_;
            f.mode = static_cast<meta::SetMode>(r.meta.set_mode);
            f.client_flags = r.flags;
            if (r.exptime != 0) f.ttl = r.exptime;
            if (r.cas != 0) f.compare_cas = r.cas;
            f.invalidate = r.meta.invalidate;
            return meta::encode_set(out, key, r.value, f, limits_,
                                    r.value_is_stable ? scatter_threshold_ : ~std::size_t{0});
        }
        case OpCode::meta_delete: {
            meta::DeleteFlags f;
            f.base64_key = binary_keys_;
            if (r.cas != 0) f.compare_cas = r.cas;
            f.invalidate = r.meta.invalidate;
            f.ttl = r.meta.delete_ttl;
            return meta::encode_delete(out, key, f);
        }
        case OpCode::noop:
            return meta::encode_noop(out);
        case OpCode::flush_all:
        case OpCode::stats:
        case OpCode::version:
        case OpCode::verbosity:
            return encode_classic_only(r, out);
    }
    return errc::unsupported;
}

std::error_code MetaDriver::encode_multi(const Request& r, protocol::OutputBuffer& out,
                                         net::Command& cmd) {
    if (r.keys.empty()) return errc::invalid_argument;
    if (is_classic_multi(r, binary_keys_)) {
        cmd.classic = true;
        return ascii::encode_retrieve(out, retrieve_command(r.code), r.keys);
    }
    const std::size_t arena_mark = out.arena_size();
    const std::size_t ref_mark = out.ref_count();
    meta::GetFlags f;
    f.base64_key = binary_keys_;
    f.value = true;
    f.key = true;
    f.client_flags = true;
    f.cas = wants_cas(r.code);
    f.quiet = true;
    if (is_touching(r.code)) f.touch_ttl = r.exptime;
    std::uint32_t position = 0;
    char digits[10];
    for (std::string_view key : r.keys) {
        const auto [end, conv] = std::to_chars(digits, digits + sizeof digits, position);
        (void)conv;  // 10 digits hold any uint32
        f.opaque = std::string_view(digits, static_cast<std::size_t>(end - digits));
        std::error_code ec = protocol::validate_key(key, binary_keys_);
        if (!ec) ec = meta::encode_get(out, key, f);
        if (ec) {
            out.truncate(arena_mark, ref_mark);  // all or nothing: the part fails as one
            return ec;
        }
        ++position;
    }
    return meta::encode_noop(out);
}

DecodeStep MetaDriver::decode(std::string_view input, net::CommandQueue& inflight) {
    DecodeStep step;
    meta::Reply mreply;
    ascii::Reply areply;
    while (step.consumed < input.size()) {
        if (inflight.empty()) {
            // Checked before parsing, so neither decoder ever holds resumption state for bytes
            // that belong to no command (the other one would then see them first).
            step.ec = errc::protocol_error;
            step.message = "reply to a request never sent";
            return step;
        }
        const std::string_view rest = input.substr(step.consumed);
        std::size_t consumed = 0;
        bool in_step = true;
        const net::Command& head = inflight.front();
        if (is_classic_only(head.code) || head.classic) {
            const auto res = ascii_decoder_.parse(rest, areply);
            if (ends_step(res, ascii_decoder_, step)) return step;
            consumed = res.consumed;
            in_step = deliver(areply, inflight);
        } else {
            const auto res = meta_decoder_.parse(rest, mreply);
            if (ends_step(res, meta_decoder_, step)) return step;
            consumed = res.consumed;
            in_step = deliver(mreply, inflight);
        }
        if (!in_step) {
            step.ec = errc::protocol_error;
            step.message = "reply does not answer the request at the head of the pipeline";
            return step;
        }
        step.consumed += consumed;
    }
    step.needed = 1;
    return step;
}

Completion MetaDriver::passed_over(const net::Command& c) const {
    Completion done;
    if (window_.other) {
        done.ec = window_.other;
    } else if (window_.out_of_memory && is_store(c.code)) {
        // Some store of the window could not be stored, and nothing says which: none of
        // them claims success it may not have had.
        done.status = Status::out_of_memory;
    } else {
        // mg T q is silent on a miss (and answers HD on a hit).
        done.status = c.code == OpCode::touch ? Status::not_found : silent_outcome(c.code);
    }
    return done;
}

bool MetaDriver::pass_quiet(const meta::Reply& r, net::CommandQueue& inflight) {
    using K = meta::ReplyKind;
    if (is_error(r.kind)) {
        const Completion e = error_completion(r.kind, r.data, true);
        if (!e.ec && e.status == Status::out_of_memory)
            window_.out_of_memory = true;
        else if (!window_.other)
            window_.other = e.ec ? e.ec : make_error_code(errc::server_error);
        return true;
    }
    const std::optional<std::uint64_t> named = r.opaque.empty() ? std::nullopt : r.opaque_number();
    if (!r.opaque.empty() && !named) return false;
    while (!inflight.empty() && inflight.front().quiet) {
        const net::Command& q = inflight.front();
        if (named && *named == q.opaque) {
            window_ = {};
            Completion done;
            const bool store = is_store(q.code);
            if (store && r.kind == K::not_stored) {
                done.status = Status::not_stored;
            } else if ((store || q.code == OpCode::del) && r.kind == K::exists) {
                done.status = Status::exists;
            } else if ((store || q.code == OpCode::del) && r.kind == K::not_found) {
                done.status = Status::not_found;
            } else if (r.kind == K::hit) {  // a quiet mg's hit; ms and md hide HD
                done.status = q.code == OpCode::touch ? Status::touched : silent_outcome(q.code);
            } else {
                return false;
            }
            complete_head(inflight, done);
            return true;
        }
        complete_head(inflight, passed_over(q));
    }
    window_ = {};
    // Past the run: the barrier's reply (or the next command's). A name nobody in the run
    // has means the stream is out of step.
    if (named || inflight.empty()) return false;
    return deliver(r, inflight);
}

bool MetaDriver::deliver(const meta::Reply& r, net::CommandQueue& inflight) {
    using K = meta::ReplyKind;
    net::Command& head = inflight.front();
    if (head.quiet) return pass_quiet(r, inflight);
    const OpCode code = head.code;

    if (is_multi(head)) {
        switch (r.kind) {
            case K::value:
            case K::miss: {
                // Each quiet mg names its position in the opaque.
                const auto position = r.opaque_number();
                if (!position || *position >= head.key_count) return false;
                if (r.kind == K::value) {
                    char raw[meta::max_base64_key_length];
                    ValueView v;
                    if (!view_of(r, raw, v)) return false;
                    ++head.hits;
                    head.op->on_value(head.part, static_cast<std::uint32_t>(*position), v);
                }
                return true;
            }
            case K::noop: {
                Completion done;
                done.ec = multi_error_;
                multi_error_ = {};
                complete_head(inflight, done);
                return true;
            }
            case K::error:
            case K::client_error:
            case K::server_error:
                // One key's mg failed; the others still answer and mn still closes the batch.
                if (!multi_error_) multi_error_ = error_completion(r.kind, r.data, false).ec;
                return true;
            default:
                return false;
        }
    }

    if (is_error(r.kind)) {
        complete_head(inflight,
                      error_completion(r.kind, r.data, is_store(code) || code == OpCode::meta_set));
        return true;
    }
    // Single commands carry no opaque: an echoed one means the reply is someone else's.
    if (!r.opaque.empty()) return false;

    Completion done;
    switch (code) {
        case OpCode::get:
        case OpCode::gets:
        case OpCode::gat:
        case OpCode::gats:
            if (r.kind == K::value) {
                ++head.hits;
                head.op->on_value(head.part, 0, view_of(r));
            } else if (r.kind != K::miss) {
                return false;
            }
            break;
        case OpCode::meta_get:
            // Always sent with v: a hit (or a vivified stub) is VA, a miss EN.
            if (r.kind == K::miss) {
                done.status = Status::not_found;
            } else if (r.kind != K::value) {
                return false;
            }
            done.meta = &r;
            break;
        case OpCode::set:
        case OpCode::add:
        case OpCode::replace:
        case OpCode::append:
        case OpCode::prepend:
        case OpCode::cas:
        case OpCode::meta_set:
            switch (r.kind) {
                case K::hit:
                    done.status = Status::stored;
                    break;
                case K::not_stored:
                    done.status = Status::not_stored;
                    break;
                case K::exists:
                    done.status = Status::exists;
                    break;
                case K::not_found:
                    done.status = Status::not_found;
                    break;
                default:
                    return false;
            }
            break;
        case OpCode::del:
        case OpCode::meta_delete:
            switch (r.kind) {
                case K::hit:
                    done.status = Status::deleted;
                    break;
                case K::not_found:
                    done.status = Status::not_found;
                    break;
                case K::exists:
                    done.status = Status::exists;
                    break;
                default:
                    return false;
            }
            break;
        case OpCode::incr:
        case OpCode::decr:
            if (r.kind == K::value) {
                const char* end = r.data.data() + r.data.size();
                const auto [p, ec] = std::from_chars(r.data.data(), end, done.number);
                if (ec != std::errc{} || p != end || r.data.empty()) return false;
            } else if (r.kind == K::not_found) {
                done.status = Status::not_found;
            } else {
                return false;
            }
            break;
        case OpCode::touch:
            if (r.kind == K::hit) {
                done.status = Status::touched;
            } else if (r.kind == K::miss) {
                done.status = Status::not_found;
            } else {
                return false;
            }
            break;
        case OpCode::noop:
            if (r.kind != K::noop) return false;
            break;
        default:
            return false;  // classic commands never reach the meta decoder
    }
    complete_head(inflight, done);
    return true;
}

bool MetaDriver::deliver(const ascii::Reply& r, net::CommandQueue& inflight) {
    using K = ascii::ReplyKind;
    net::Command& head = inflight.front();
    const OpCode code = head.code;
    switch (r.kind) {
        case K::value:  // a classic multi-get's hit: matched to its key by the key it names
            if (!head.classic || (code == OpCode::gets) != r.has_cas) return false;
            ++head.hits;
            head.op->on_value(head.part, Operation::unknown_position,
                              ValueView{r.key, r.data, r.flags, r.cas});
            return true;
        case K::stat:
            if (code != OpCode::stats) return false;
            head.op->on_stat(head.part, r.key, r.data);
            return true;
        case K::end:
            if (code != OpCode::stats && !head.classic) return false;
            complete_head(inflight, Completion{});
            return true;
        case K::error:
        case K::client_error:
        case K::server_error:
        // No classic command here is a store: "cannot store" is a server error like any other.
        case K::value_too_large:
        case K::out_of_memory:
            complete_head(inflight, refusal(r.kind, r.data));
            return true;
        default:
            if (!status_fits(code, r.kind)) return false;
            complete_head(inflight, status_completion(r));
            return true;
    }
}

}  // namespace folsom::detail
