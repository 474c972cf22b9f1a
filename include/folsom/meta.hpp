/// @file
/// Options and results of the meta-protocol operations Client::meta_get, Client::meta_set and
/// Client::meta_delete: memcached's tools against cache stampedes (docs/meta-protocol.md).
///
/// In short: a meta get can hand out a *win token* (the W flag) to exactly one caller, who is
/// then expected to recompute the value and store it, while everybody else is told that the
/// token is taken (Z) and, when the item was invalidated, still served the stale value (X).
/// W is handed out when
///   * the item is missing and the get carries vivify_on_miss (N): an empty stub item is
///     created, so the next callers see Z instead of a miss;
///   * the item's remaining ttl is below recache_below (R);
///   * the item was invalidated (meta_delete with invalidate, or a meta_set with invalidate and
///     an older cas): it is stale (X) until a store with the item's current cas replaces it.
///
/// Only Options::protocol == Protocol::meta carries these; over ascii and binary the requests
/// complete with errc::unsupported and nothing is sent.
///
/// Thread-safety: plain values. Ownership: results own their bytes. Errors: see Client.
#pragma once

#include "folsom/expiry.hpp"
#include "folsom/value.hpp"

#include <chrono>
#include <cstdint>
#include <optional>

namespace folsom {

/// What a Client::meta_get asks for besides the value, its cas and flags (always returned).
struct MetaGetOptions {
    /// N<ttl>: on a miss, create an empty item living `ttl` (or until an absolute time:
    /// expiry.hpp) and hand this caller the win (W); later callers then see that stub with Z
    /// until someone stores over it.
    std::optional<Expiry> vivify_on_miss{};
    /// R<ttl>: when the item's remaining ttl is below this, hand out the win (W) to one caller
    /// so it refreshes the value before it expires (the others keep getting it, with Z).
    std::optional<std::chrono::seconds> recache_below{};
    /// T<ttl>: update the item's ttl (or absolute expiry time) on a hit.
    std::optional<Expiry> touch{};
    /// u: don't bump the item in the LRU, nor mark it as fetched.
    bool no_bump = false;
    /// t: return the remaining ttl in MetaGetResult::ttl.
    bool return_ttl = false;
    /// h: return whether the item had been fetched before, in MetaGetResult::hit_before.
    bool return_hit_before = false;
    /// l: return the seconds since the last access, in MetaGetResult::last_access.
    bool return_last_access = false;
};

/// The answer to a Client::meta_get.
struct MetaGetResult {
    /// The item, or empty on a miss. A stub created by vivify_on_miss is an empty value (with
    /// `win` for its creator, `win_sent` for everybody after).
    std::optional<Value> value;
    std::uint64_t cas = 0;    ///< the item's cas (0 on a miss): what a recache stores against
    std::uint32_t flags = 0;  ///< the item's client flags
    bool win = false;         ///< W: this caller won the right (and the duty) to recache
    bool stale = false;       ///< X: the item was invalidated; `value` is the stale one
    bool win_sent = false;    ///< Z: another caller already holds the win token
    /// Seconds the item has left (-1: never expires); only with return_ttl. memcached 1.6
    /// answers -1 to the get that vivified a stub.
    std::optional<std::int64_t> ttl;
    std::optional<bool> hit_before;            ///< only with return_hit_before
    std::optional<std::uint64_t> last_access;  ///< seconds; only with return_last_access

    /// True when the server had the item (possibly a stub, possibly stale).
    bool hit() const noexcept { return value.has_value(); }
};

/// The store a Client::meta_set makes (ms M<mode>).
enum class MetaSetMode : std::uint8_t {
    set,      ///< store unconditionally (the default)
    add,      ///< only if absent
    replace,  ///< only if present
    append,   ///< after the present value
    prepend,  ///< before the present value
};

/// Flags of a Client::meta_set.
struct MetaSetOptions {
    MetaSetMode mode = MetaSetMode::set;  ///< M<mode>
    std::uint32_t flags = 0;              ///< F<flags>: the item's client flags
    /// C<cas>: store only if the item's cas is still this (else Status::exists, or not_found
    /// when the item is gone). This is how a W winner stores its refreshed value.
    std::optional<std::uint64_t> compare_cas{};
    /// I (with compare_cas): a cas *older* than the item's still stores, but marks the item
    /// stale (X), so the next get hands out a win to refresh it again.
    bool invalidate = false;
};

/// Flags of a Client::meta_delete.
struct MetaDeleteOptions {
    /// C<cas>: delete only if the item's cas is still this (else Status::exists). A failed
    /// fill releases its stub this way, without removing a value someone else stored since.
    std::optional<std::uint64_t> compare_cas{};
    /// I: don't remove the item; mark it stale (X) and bump its cas. The next meta_get is
    /// handed the win (W) to recache it; the others are served the stale value with Z.
    bool invalidate = false;
    /// T<ttl>, with invalidate: how long (or until when) the stale item may still be served.
    std::optional<Expiry> stale_ttl{};
};

}  // namespace folsom
