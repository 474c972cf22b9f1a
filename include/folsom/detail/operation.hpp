// The protocol-neutral model of a request inside the client (internal; included by client.hpp).
//
// A user request is one Operation. It goes on the wire as one or more *parts* (one per server a
// multi-get touches, or per chunk of a long key list); each part is one command on one
// connection, and ends with exactly one on_complete(part, ...) call. Before that, a retrieval
// part may see on_value calls and a stats part on_stat calls. After the last part completes the
// Operation delivers its result to the user and destroys itself.
#pragma once

#include "folsom/export.hpp"
#include "folsom/protocol/meta_decoder.hpp"
#include "folsom/status.hpp"
#include "folsom/value.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

namespace folsom::detail {

enum class OpCode : std::uint8_t {
    get,
    gets,
    gat,
    gats,
    set,
    add,
    replace,
    append,
    prepend,
    cas,
    del,
    incr,
    decr,
    touch,
    flush_all,
    stats,
    version,
    verbosity,
    noop,
    // Meta protocol only (mg/ms/md with their stampede flags): the other drivers refuse them
    // with errc::unsupported before anything is sent.
    meta_get,
    meta_set,
    meta_delete,
};

constexpr bool is_retrieval(OpCode c) noexcept {
    return c == OpCode::get || c == OpCode::gets || c == OpCode::gat || c == OpCode::gats;
}
constexpr bool is_store(OpCode c) noexcept {
    return c >= OpCode::set && c <= OpCode::cas;
}

/// True for the operations only the meta protocol can carry.
constexpr bool is_meta_only(OpCode c) noexcept {
    return c == OpCode::meta_get || c == OpCode::meta_set || c == OpCode::meta_delete;
}

/// The meta flags of meta_get / meta_set / meta_delete that have no field in Request. Ttls are
/// memcached exptimes (see to_exptime), except recache_ttl, a number of seconds.
struct FOLSOM_EXPORT MetaArgs {
    std::optional<std::uint32_t> vivify_ttl;   ///< mg N<ttl>
    std::optional<std::uint32_t> recache_ttl;  ///< mg R<ttl>
    std::optional<std::uint32_t> touch_ttl;    ///< mg T<ttl>
    std::optional<std::uint32_t> delete_ttl;   ///< md T<ttl> (with invalidate)
    bool no_bump = false;                      ///< mg u
    bool return_ttl = false;                   ///< mg t
    bool return_hit_before = false;            ///< mg h
    bool return_last_access = false;           ///< mg l
    bool invalidate = false;                   ///< ms I / md I
    std::uint8_t set_mode = 0;                 ///< ms M: a protocol::meta::SetMode
};

/// One command to encode. Views are valid only during the encode call.
struct FOLSOM_EXPORT Request {
    OpCode code = OpCode::get;
    std::string_view key;                    ///< single-key commands
    std::span<const std::string_view> keys;  ///< retrievals (one or many keys)
    std::string_view value;                  ///< stores
    bool value_is_stable = false;  ///< value outlives the write (may be referenced, not copied)
    /// The keys outlive the part's completion (a multi-get's keys live in its collector): a
    /// retry may keep the views instead of copying the keys.
    bool keys_are_stable = false;
    std::uint32_t flags = 0;
    std::uint32_t exptime = 0;
    std::uint64_t cas = 0;
    std::uint64_t delta = 0;               ///< incr/decr
    std::optional<std::uint64_t> initial;  ///< incr/decr initial value (binary/meta)
    std::string_view group;                ///< stats group
    std::optional<std::uint32_t> delay;    ///< flush_all delay
    std::uint32_t level = 0;               ///< verbosity
    /// One part of a request to every server (delete_all, stats, ...): it belongs to the
    /// server it was sent to, so a retry must not route its key afresh.
    bool to_every_server = false;
    MetaArgs meta;  ///< meta_get / meta_set / meta_delete
    /// Lost with its connection, this request will be retried (set by the retrying layer for
    /// its first attempt): metrics then count a retry rather than a completed request.
    bool retryable = false;
    /// A write the caller does not wait on a reply for (QuietClient): the driver sends it in
    /// its protocol's quiet form where it has one that still reports failures (meta q, the
    /// binary ...Q opcodes), and as noreply over ascii. See ProtocolDriver::sends_quietly.
    bool quiet = false;
    /// With quiet: the caller needs the true outcome (a multi-key write), so where the quiet
    /// form cannot report it (ascii noreply) the request is sent acknowledged instead.
    bool outcome_required = false;
};

/// True for the writes a quiet request may be: stores, delete, touch, incr/decr.
constexpr bool is_quiet_capable(OpCode c) noexcept {
    return is_store(c) || c == OpCode::del || c == OpCode::touch || c == OpCode::incr ||
           c == OpCode::decr;
}

/// The outcome of a quiet write the server passed over in silence (its success). A quiet
/// meta touch (mg T q) is the exception: memcached is silent on its miss, so the meta driver
/// maps silence to not_found there.
constexpr Status silent_outcome(OpCode c) noexcept {
    if (is_store(c)) return Status::stored;
    if (c == OpCode::del) return Status::deleted;
    if (c == OpCode::touch) return Status::touched;
    return Status::ok;  // incr/decr: applied; the new value is not sent
}

/// How one part ended. Views are valid only during the on_complete call.
struct FOLSOM_EXPORT Completion {
    std::error_code ec;  ///< transport, protocol or server error; when set, ignore the rest
    Status status = Status::ok;
    std::uint64_t number = 0;  ///< incr/decr result
    std::string_view text;     ///< version text, or the server's error text
    /// meta_get: the server's reply (value, cas, W/X/Z, ...); null for every other command
    /// and on error. Valid only during the on_complete call.
    const protocol::meta::Reply* meta = nullptr;
};

/// A Completion that carries only an error.
inline Completion failure(std::error_code ec) noexcept {
    Completion c;
    c.ec = ec;
    return c;
}

/// Drops one reference of an operation's (or a shim's) count; true when it was the last, and
/// the caller must free it. The last one is dropped without an atomic write: nobody else holds
/// a reference then, and one is only ever taken by a holder of another (pin() by a connection
/// sending a part, a cancellation by the pending request).
template <class T>
bool drop_reference(std::atomic<T>& refs) noexcept {
    return refs.load(std::memory_order_acquire) == 1 ||
           refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

class FOLSOM_EXPORT Operation {
  public:
    /// Position of a key inside its part, when the protocol does not say (ASCII replies name
    /// the key instead; binary and meta replies carry an opaque that gives the position).
    static constexpr std::uint32_t unknown_position = 0xffffffffu;

    /// A hit of a retrieval part; `v` lives until this call returns. `position` is the key's
    /// index in the part's key list, or unknown_position.
    virtual void on_value(std::uint32_t part, std::uint32_t position, const ValueView& v) = 0;
    /// One STAT line of a stats part.
    virtual void on_stat(std::uint32_t part, std::string_view name, std::string_view value) = 0;
    /// The part ended; called exactly once per part.
    virtual void on_complete(std::uint32_t part, const Completion& c) = 0;
    /// One key of a multi-key retrieval part failed on its own, while the part as a whole
    /// did not: a route tree sends a part's keys along separate paths (routing/route_core),
    /// so one key's server may be down while the others answer. `position` is the key's
    /// index in the part. Called before the part's on_complete, at most once per key. Only
    /// multi-get operations care; the default ignores it.
    virtual void on_key_error(std::uint32_t part, std::uint32_t position, std::error_code ec) {
        (void)part;
        (void)position;
        (void)ec;
    }

    /// Keeps the operation (and the value it owns) alive while a write that references the
    /// value's bytes is in progress: a server may answer (e.g. "object too large") before the
    /// whole value has left, and the op must not be freed under the socket. Every pin() is
    /// matched by one unpin(), which may complete the operation.
    virtual void pin() noexcept = 0;
    virtual void unpin() = 0;

  protected:
    ~Operation() = default;
};

}  // namespace folsom::detail
