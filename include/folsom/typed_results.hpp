/// @file
/// Result types of TypedClient<V> (typed_client.hpp): a value with its cas, and a typed
/// multi-get result.
///
/// Errors: a TypedMultiGetResult says per key which keys went unanswered and why, including
/// errc::decode_failed for a value its transcoder refused (the other keys are unaffected).
///
/// Ownership and thread-safety: results own everything they hold and may be moved, kept and
/// read from any thread; to_map() copies the keys it is given, which need only be valid during
/// the call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom {

/// A decoded value and the cas it was read with (TypedClient::gets, gats, gets_multi): pass
/// the cas to TypedClient::cas to store only if nobody changed the item since.
template <class V>
struct WithCas {
    V value{};              ///< the decoded value
    std::uint64_t cas = 0;  ///< the item's cas
};

/// The result of a typed multi-get, in the order of the keys asked for (as MultiGetResult).
///
/// `errors` is empty when every key got an answer (a decoded hit or a miss); otherwise
/// errors[i] says why keys[i] has none: its server's failure, or errc::decode_failed (or the
/// transcoder's own error) when its value could not be decoded ({} for keys with an answer).
template <class T>
struct TypedMultiGetResult {
    std::vector<std::optional<T>> values;  ///< values[i]: keys[i]'s value, empty on a miss
    std::vector<std::error_code> errors;   ///< empty, or errors[i]: why keys[i] is unanswered

    /// True when every key got an answer (a hit or a miss).
    bool complete() const noexcept { return errors.empty(); }

    /// The hits as a map from key to value (copies the keys and values).
    std::map<std::string, T, std::less<>> to_map(std::span<const std::string_view> keys) const {
        std::map<std::string, T, std::less<>> m;
        for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i)
            if (values[i]) m.emplace(std::string(keys[i]), *values[i]);
        return m;
    }
};

}  // namespace folsom
