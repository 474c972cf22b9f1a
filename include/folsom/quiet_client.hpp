/// @file
/// QuietClient: fire-and-forget writes (noreply) that still report their true outcome wherever
/// the protocol lets them.
///
///     folsom::QuietClient q = client.quiet();
///     q.set("k", "v", 60s, [](std::error_code ec, folsom::Status s) { ... });
///
/// A quiet write is sent without waiting for a reply of its own, so a stream of them costs
/// the client (and the server) about what writing them costs. What its completion says
/// depends on the protocol (Options::protocol):
///
/// - **meta**: stores carry `q` and an opaque, and memcached answers only failures (NS, EX,
///   NF); the connection closes every run of quiet writes with `mn`. Each write completes once
///   a later reply passes over it, with its true outcome: stored / deleted / touched, or
///   not_stored, exists, not_found. Writes whose failure memcached reports as an error line
///   (which names no request) are sent acknowledged instead, with the same true outcome:
///   incr/decr (a non-number is a CLIENT_ERROR) and stores whose key and value reach 512 bytes
///   (a value over the server's -I is a SERVER_ERROR). The one error a quiet store can still
///   draw, "out of memory storing object", names no store: every quiet store of the window it
///   came in then reports Status::out_of_memory, so none claims a success it may not have had.
/// - **binary**: the quiet opcodes (SETQ, ADDQ, DELETEQ, INCRQ, ...); memcached answers only
///   failures, each naming its request, and the connection closes every run with NOOP. Every
///   outcome is exact. touch has no quiet opcode and is sent acknowledged. A quiet incr/decr
///   that succeeds completes with Status::ok: the new value is not sent.
/// - **ascii**: `noreply`. memcached then answers nothing, not even failures, so a write
///   completes as soon as it is written, with Status::sent: sent, outcome unknown.
///
/// On every protocol, failures the client sees itself are still reported, and then nothing is
/// sent: an invalid key (errc::invalid_key), a value over Options::max_value_size
/// (errc::value_too_large), a server that is down (errc::not_connected). A connection lost
/// before a write's outcome is known completes it with that error (connection_lost), never
/// with stored. Every write completes exactly once.
///
/// Completions: void(std::error_code, Status) for every write, incr/decr included (over meta
/// they are acknowledged and succeed with Status::ok; the new value is not reported — use
/// Client::incr for it).
///
/// Thread-safety and lifetime: as Client (a QuietClient holds a copy of the handle).
#pragma once

#include "folsom/client.hpp"

namespace folsom {

/// The quiet view of a Client (Client::quiet()): the same writes, sent without waiting for a
/// reply of their own; each completes once with the outcome described above.
class QuietClient {
  public:
    /// The quiet view of `client` (as Client::quiet()).
    explicit QuietClient(Client client) : client_(std::move(client)) {}

    /// The general store, quiet. void(std::error_code, Status)
    template <class Token>
    auto store(StoreMode mode, std::string_view key, Bytes value, Expiry ttl, StoreOptions opts,
               Token&& token) {
        return client_.store_request(mode, key, std::move(value), ttl, opts, true,
                                     std::forward<Token>(token));
    }
    /// Stores unconditionally. void(std::error_code, Status): stored (sent over ascii).
    template <class Token>
    auto set(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::set, key, std::move(value), ttl, {}, std::forward<Token>(token));
    }
    /// As set, with the item's 32-bit flags.
    template <class Token>
    auto set(std::string_view key, Bytes value, Expiry ttl, std::uint32_t flags, Token&& token) {
        return store(StoreMode::set, key, std::move(value), ttl, {flags, 0},
                     std::forward<Token>(token));
    }
    /// Stores only if the key is absent: stored or not_stored.
    template <class Token>
    auto add(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::add, key, std::move(value), ttl, {}, std::forward<Token>(token));
    }
    /// Stores only if the key is present: stored or not_stored.
    template <class Token>
    auto replace(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::replace, key, std::move(value), ttl, {},
                     std::forward<Token>(token));
    }
    /// Adds bytes after the value: stored or not_stored.
    template <class Token>
    auto append(std::string_view key, Bytes value, Token&& token) {
        return store(StoreMode::append, key, std::move(value), Expiry{}, {},
                     std::forward<Token>(token));
    }
    /// Adds bytes before the value: stored or not_stored.
    template <class Token>
    auto prepend(std::string_view key, Bytes value, Token&& token) {
        return store(StoreMode::prepend, key, std::move(value), Expiry{}, {},
                     std::forward<Token>(token));
    }
    /// Check-and-set: stored, exists (changed since) or not_found.
    template <class Token>
    auto cas(std::string_view key, Bytes value, std::uint64_t cas, Expiry ttl, Token&& token) {
        return store(StoreMode::cas, key, std::move(value), ttl, {0, cas},
                     std::forward<Token>(token));
    }
    /// void(std::error_code, Status): deleted or not_found (sent over ascii).
    template <class Token>
    auto del(std::string_view key, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::del;
        r.key = key;
        return quiet_status(r, std::forward<Token>(token));
    }
    /// void(std::error_code, Status): touched or not_found (sent over ascii).
    template <class Token>
    auto touch(std::string_view key, Expiry ttl, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::touch;
        r.key = key;
        r.exptime = detail::to_exptime(ttl);
        return quiet_status(r, std::forward<Token>(token), Client::expiry_refusal(r.exptime));
    }
    /// void(std::error_code, Status): ok (applied) or not_found (sent over ascii).
    template <class Token>
    auto incr(std::string_view key, std::uint64_t delta, Token&& token) {
        return arith(detail::OpCode::incr, key, delta, std::forward<Token>(token));
    }
    /// As incr, subtracting (memcached does not go below 0).
    template <class Token>
    auto decr(std::string_view key, std::uint64_t delta, Token&& token) {
        return arith(detail::OpCode::decr, key, delta, std::forward<Token>(token));
    }

    /// The client this view writes through.
    const Client& client() const noexcept { return client_; }

  private:
    template <class Token>
    auto arith(detail::OpCode code, std::string_view key, std::uint64_t delta, Token&& token) {
        detail::Request r;
        r.code = code;
        r.key = key;
        r.delta = delta;
        return quiet_status(r, std::forward<Token>(token));
    }
    template <class Token>
    auto quiet_status(detail::Request r, Token&& token, std::error_code refused = {}) {
        r.quiet = true;
        return client_.single<detail::StatusCollector, void(std::error_code, Status)>(
            r, std::forward<Token>(token), refused);
    }

    Client client_;
};

inline QuietClient Client::quiet() const {
    return QuietClient(*this);
}

}  // namespace folsom
