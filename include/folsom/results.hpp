/// @file
/// Result types of the operations that return more than one thing.
///
/// Errors: a MultiGetResult says per key which ones went unanswered and why; a NodeResult
/// carries its server's error.
///
/// Ownership: results own everything they hold (values, server names, stat texts); they may be
/// moved, kept and read from any thread.
#pragma once

#include "folsom/value.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace folsom {

/// The result of a multi-get, in the order of the keys asked for.
///
/// A multi-get whose keys live on several servers is sent to each in parallel; when some
/// servers fail, the others' values are still delivered. `errors` is empty when every server
/// answered; otherwise errors[i] says why keys[i] has no answer ({} for the keys that have one).
struct MultiGetResult {
    std::vector<std::optional<Value>> values;  ///< values[i]: keys[i]'s value, empty on a miss
    std::vector<std::error_code> errors;       ///< empty, or errors[i]: why keys[i] is unanswered

    /// True when every key got an answer (a hit or a miss).
    bool complete() const noexcept { return errors.empty(); }

    /// The hits as a map from key to value (copies the keys).
    std::map<std::string, Value, std::less<>> to_map(std::span<const std::string_view> keys) const {
        std::map<std::string, Value, std::less<>> m;
        for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i)
            if (values[i]) m.emplace(std::string(keys[i]), *values[i]);
        return m;
    }
};

/// How a get_multi_view ended (its values went to the per-hit callback).
struct MultiGetViewResult {
    std::size_t hits = 0;                 ///< keys found (each reported once)
    std::vector<std::error_code> errors;  ///< empty, or errors[i]: why keys[i] is unanswered

    /// True when every key got an answer (a hit or a miss).
    bool complete() const noexcept { return errors.empty(); }
};

/// One server's answer to a request addressed to every server (stats, version, flush_all,
/// delete_all).
template <class T>
struct NodeResult {
    std::string server;     ///< "host:port"
    std::error_code error;  ///< this server's failure ({} when it answered)
    T value{};              ///< this server's answer (meaningful only without error)
};

/// "STAT name value" pairs, in the order the server sent them.
using StatList = std::vector<std::pair<std::string, std::string>>;

}  // namespace folsom
