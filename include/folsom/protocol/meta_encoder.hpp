// Encoder for memcached's meta protocol: mg, ms, md, ma, mn, me (doc/protocol.txt, "Meta
// Commands"). Meta commands share the connection with text commands and are answered by
// meta::Decoder (meta_decoder.hpp).
//
// Same contract as ascii_encoder.hpp: every function validates its arguments first and appends
// exactly one command to `out`, or appends nothing and returns an error:
//   errc::invalid_key       a text key that validate_key() refuses, or a binary (base64) key
//                           that is empty or over max_base64_key_length bytes
//   errc::value_too_large   a value over limits.max_value_size
//   errc::invalid_argument  an opaque that is not a token of at most max_opaque_length bytes,
//                           or flags that cannot go together (ma J without N)
//
// Flags are typed, one struct per command, so a caller can never send a free-form flag string
// (and so never a second command). Each command writes its flags in one fixed order, shown in
// its comment; the server returns flags in request order, but the decoder does not rely on it.
//
// Binary keys: with `base64_key` set, `key` is any bytes and the encoder writes its base64 form
// and the 'b' flag. memcached checks the *encoded* key against its 250-byte limit, so at most
// 186 raw bytes fit (4 * ceil(186 / 3) = 248). Keys the server returns for such items come back
// in base64 with a 'b' flag (Reply::key_base64); base64_decode() turns them back into bytes.
//
// TTLs are seconds (up to 30 days) or a Unix time, as for the text protocol.
//
// Pure: no I/O, no threads, no Asio. Allocation only as `out` grows.
#pragma once

#include "folsom/export.hpp"
#include "folsom/protocol/limits.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace folsom::protocol::meta {

/// Values at least this long are referenced by the OutputBuffer instead of copied.
inline constexpr std::size_t default_ref_threshold = 16 * 1024;

/// Longest binary key in base64 mode: its encoding must fit memcached's 250-byte key limit.
inline constexpr std::size_t max_base64_key_length = max_binary_key_length;

/// Longest opaque token memcached accepts.
inline constexpr std::size_t max_opaque_length = 32;

/// mg flags. Written in this order: b v k c f t s h l u q O T N R E.
struct FOLSOM_EXPORT GetFlags {
    bool base64_key = false;    ///< b: `key` is binary; sent base64-encoded
    bool value = false;         ///< v: return the value (VA reply) instead of HD
    bool key = false;           ///< k: return the key
    bool cas = false;           ///< c: return the cas
    bool client_flags = false;  ///< f: return the client flags
    bool ttl = false;           ///< t: return the remaining ttl (-1 for none)
    bool size = false;          ///< s: return the value size
    bool hit_before = false;    ///< h: return whether the item was fetched before (0/1)
    bool last_access = false;   ///< l: return seconds since the last access
    bool no_bump = false;       ///< u: don't bump the item in the LRU (nor mark it fetched)
    bool quiet = false;         ///< q: no EN on a miss; hits still answer (pair with mn)
    std::string_view opaque;    ///< O<opaque>: echoed back (not sent when empty)
    std::optional<std::uint32_t> touch_ttl;    ///< T<ttl>: update the ttl on a hit
    std::optional<std::uint32_t> vivify_ttl;   ///< N<ttl>: on a miss create an empty item, win
    std::optional<std::uint32_t> recache_ttl;  ///< R<ttl>: win when remaining ttl is below it
    /// E<cas>: the cas to give the item if this command modifies it. Newer servers only:
    /// memcached 1.6.18 answers "CLIENT_ERROR invalid flag".
    std::optional<std::uint64_t> new_cas;
};

/// ms modes (M<token>); `set` is the server's default and is not written.
enum class SetMode : std::uint8_t { set, add, replace, append, prepend };

/// ms flags. Written in this order: b M F T C E I k c q O.
struct FOLSOM_EXPORT SetFlags {
    bool base64_key = false;                   ///< b
    SetMode mode = SetMode::set;               ///< M<E|R|A|P> (add/replace/append/prepend)
    std::uint32_t client_flags = 0;            ///< F<flags>; written only when not 0 (the default)
    std::optional<std::uint32_t> ttl;          ///< T<ttl>
    std::optional<std::uint64_t> compare_cas;  ///< C<cas>: store only if the cas matches
    std::optional<std::uint64_t> new_cas;      ///< E<cas>: newer servers only (see GetFlags)
    bool invalidate = false;  ///< I: with C, an older cas still stores but marks the item stale
    bool return_key = false;  ///< k
    bool return_cas = false;  ///< c: the new cas on success
    bool quiet = false;       ///< q: no HD on success (failures are still answered)
    std::string_view opaque;  ///< O<opaque>
};

/// md flags. Written in this order: b C E I T k q O.
struct FOLSOM_EXPORT DeleteFlags {
    bool base64_key = false;                   ///< b
    std::optional<std::uint64_t> compare_cas;  ///< C<cas>: delete only if the cas matches
    std::optional<std::uint64_t> new_cas;      ///< E<cas>: newer servers only (see GetFlags)
    bool invalidate = false;           ///< I: keep the item but mark it stale and bump its cas
    std::optional<std::uint32_t> ttl;  ///< T<ttl>: new ttl; the server applies it only with I
    bool return_key = false;           ///< k
    bool quiet = false;                ///< q: no HD on success
    std::string_view opaque;           ///< O<opaque>
};

/// ma modes (M<token>); `increment` is the server's default and is not written.
enum class ArithMode : std::uint8_t { increment, decrement };

/// ma flags. Written in this order: b M D N J T C E t c v k q O.
struct FOLSOM_EXPORT ArithFlags {
    bool base64_key = false;                   ///< b
    ArithMode mode = ArithMode::increment;     ///< MD for decrement (decrement stops at 0)
    std::optional<std::uint64_t> delta;        ///< D<delta>; the server's default is 1
    std::optional<std::uint32_t> vivify_ttl;   ///< N<ttl>: create the item on a miss
    std::optional<std::uint64_t> initial;      ///< J<initial>: value when created (needs N)
    std::optional<std::uint32_t> ttl;          ///< T<ttl>: update the ttl on success
    std::optional<std::uint64_t> compare_cas;  ///< C<cas>
    std::optional<std::uint64_t> new_cas;      ///< E<cas>: newer servers only (see GetFlags)
    bool return_ttl = false;                   ///< t
    bool return_cas = false;                   ///< c
    bool return_value = false;                 ///< v: the new value as a VA data block
    bool return_key = false;                   ///< k
    bool quiet = false;                        ///< q: no HD on success
    std::string_view opaque;                   ///< O<opaque>
};

/// "mg <key> <flags>*\r\n"
FOLSOM_EXPORT std::error_code encode_get(OutputBuffer& out, std::string_view key,
                                         const GetFlags& flags = {});

/// "ms <key> <datalen> <flags>*\r\n<data>\r\n"; a value of at least `ref_threshold` bytes is
/// referenced, not copied (see OutputBuffer::append_value for the lifetime rule).
FOLSOM_EXPORT std::error_code encode_set(OutputBuffer& out, std::string_view key,
                                         std::string_view data, const SetFlags& flags = {},
                                         const Limits& limits = {},
                                         std::size_t ref_threshold = default_ref_threshold);

/// "md <key> <flags>*\r\n"
FOLSOM_EXPORT std::error_code encode_delete(OutputBuffer& out, std::string_view key,
                                            const DeleteFlags& flags = {});

/// "ma <key> <flags>*\r\n"
FOLSOM_EXPORT std::error_code encode_arith(OutputBuffer& out, std::string_view key,
                                           const ArithFlags& flags = {});

/// "mn\r\n": answered with "MN\r\n" once every earlier command on the connection is answered,
/// which is how a pipeline of quiet commands learns it is complete.
FOLSOM_EXPORT std::error_code encode_noop(OutputBuffer& out);

/// "me <key>[ b]\r\n": the item's metadata as "ME <key> <name>=<value>*", or EN on a miss.
FOLSOM_EXPORT std::error_code encode_debug(OutputBuffer& out, std::string_view key,
                                           bool base64_key = false);

}  // namespace folsom::protocol::meta
