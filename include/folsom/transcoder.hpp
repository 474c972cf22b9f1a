/// @file
/// Transcoders: how a TypedClient<V> turns values of type V into stored bytes plus 32-bit
/// client flags, and back (Folsom's Transcoder, spymemcached's Transcoder).
///
/// A transcoder for T is any type C with
///
///     folsom::Encoded encode(const T& value) const;                   // bytes + flags
///     std::error_code decode(folsom::Encoded&& stored, T& out) const;  // {} or an error
///
/// (checked by the concept folsom::TranscoderFor<C, T>). folsom::Transcoder<T> is the default
/// one; it is provided for raw bytes (std::vector<std::byte>, folsom::Value) and std::string,
/// and a program adds its own types by specialising it:
///
///     template <> struct folsom::Transcoder<Point> {
///         static folsom::Encoded encode(const Point& p);
///         static std::error_code decode(folsom::Encoded&& stored, Point& out);
///     };
///
/// Flags: see value_flags.hpp. Transcoder<std::string> marks its values with
/// value_flags::string; the raw-bytes transcoders leave the flags to the caller (0 for a byte
/// vector, Value::flags for a Value). Compression is a wrapper, Compressed<Inner>
/// (compressed.hpp).
///
/// Errors: decode reports a value it cannot turn into T as errc::decode_failed (or any
/// error_code the transcoder chooses); the request then completes with that error. The
/// built-in string and byte-vector transcoders refuse a value whose flags say it is
/// compressed (read it through Compressed<> instead), so compressed bytes are never mistaken
/// for the value. encode cannot fail; a user transcoder that throws makes the call throw
/// before anything is sent.
///
/// Thread-safety: transcoders are called concurrently from any thread (encode on the caller's,
/// decode on the completion handler's), so they must not mutate shared state; the built-in
/// ones are stateless. Ownership: `stored` is handed over (move its data out to avoid a copy).
#pragma once

#include "folsom/error.hpp"
#include "folsom/export.hpp"
#include "folsom/value.hpp"
#include "folsom/value_flags.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace folsom {

/// A value as stored: its bytes and the item's client flags.
struct FOLSOM_EXPORT Encoded {
    std::string data;         ///< the bytes stored (binary-safe)
    std::uint32_t flags = 0;  ///< the item's 32-bit client flags (value_flags.hpp)
};

/// The default transcoder of T; specialise it for your own types (see transcoder.hpp). The
/// primary template is undefined, so a TypedClient of a type without one does not compile.
template <class T>
struct Transcoder;

/// True when C transcodes T: `c.encode(value)` gives an Encoded, `c.decode(stored, out)` fills
/// `out` and returns {} or the error that refuses the stored bytes.
template <class C, class T>
concept TranscoderFor = requires(const C& c, const T& value, Encoded&& stored, T& out) {
    { c.encode(value) } -> std::same_as<Encoded>;
    { c.decode(std::move(stored), out) } -> std::same_as<std::error_code>;
};

/// Text: stored as its bytes, flagged value_flags::string. Any uncompressed value reads back
/// as a string (whatever its flags), so values written by other clients stay readable.
template <>
struct Transcoder<std::string> {
    /// The string's bytes, flagged as text.
    static Encoded encode(const std::string& value) { return {value, value_flags::string}; }
    /// Takes the bytes over (no copy); decode_failed when the flags say compressed.
    static std::error_code decode(Encoded&& stored, std::string& out) {
        if (stored.flags & value_flags::compression_mask) return errc::decode_failed;
        out = std::move(stored.data);
        return {};
    }
};

/// Raw bytes: stored as they are, with flags 0. Any uncompressed value reads back.
template <>
struct Transcoder<std::vector<std::byte>> {
    /// The bytes, flags 0.
    static Encoded encode(const std::vector<std::byte>& value) {
        Encoded e;
        e.data.resize(value.size());
        if (!value.empty()) std::memcpy(e.data.data(), value.data(), value.size());
        return e;
    }
    /// Copies the bytes out; decode_failed when the flags say compressed.
    static std::error_code decode(Encoded&& stored, std::vector<std::byte>& out) {
        if (stored.flags & value_flags::compression_mask) return errc::decode_failed;
        out.resize(stored.data.size());
        if (!out.empty()) std::memcpy(out.data(), stored.data.data(), out.size());
        return {};
    }
};

/// The client's own Value: bytes and flags exactly as stored (the flags are the caller's), so
/// a TypedClient<Value> behaves as the byte Client. Never refuses a value; through
/// Compressed<> it sees the decompressed bytes with the compression bit cleared. Value::cas is
/// neither stored nor set by decode (TypedClient::gets returns the cas beside the value).
template <>
struct Transcoder<Value> {
    /// Value::data with Value::flags.
    static Encoded encode(const Value& value) { return {value.data, value.flags}; }
    /// The bytes and flags as stored (cas 0).
    static std::error_code decode(Encoded&& stored, Value& out) {
        out = Value{std::move(stored.data), stored.flags, 0};
        return {};
    }
};

}  // namespace folsom
