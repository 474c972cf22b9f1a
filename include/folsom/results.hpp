/// @file
/// Result types of the operations that return more than one thing.
///
/// Errors: a MultiGetResult says per key which ones went unanswered and why; a NodeResult
/// carries its server's error.
///
/// Ownership: results own everything they hold (values, server names, stat texts); they may be
/// moved, kept and read from any thread. A MultiGetResult's values view the one buffer it holds.
#pragma once

#include "folsom/detail/shared_buffer.hpp"
#include "folsom/export.hpp"
#include "folsom/status.hpp"
#include "folsom/value.hpp"

#include <cstdint>
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
///
/// Ownership: the values' bytes live in one buffer the result holds (`storage`), sized from the
/// replies, instead of one heap allocation per value: values[i]->data is valid as long as the
/// result lives, or a copy of it (copies share the buffer, moving it keeps the views valid).
/// values[i]->to_value() is an owning copy, to keep one value beyond the result.
struct FOLSOM_EXPORT MultiGetResult {
    std::vector<std::optional<ValueRef>> values;  ///< values[i]: keys[i]'s value, empty on a miss
    std::vector<std::error_code> errors;  ///< empty, or errors[i]: why keys[i] is unanswered
    detail::SharedBuffer storage;         ///< where the values' bytes live (shared by copies)

    /// True when every key got an answer (a hit or a miss).
    bool complete() const noexcept { return errors.empty(); }

    /// An owning copy of keys[i]'s value (empty on a miss or an unanswered key).
    std::optional<Value> take(std::size_t i) const {
        if (i >= values.size() || !values[i]) return std::nullopt;
        return values[i]->to_value();
    }

    /// The hits as a map from key to value (copies the keys and the values).
    std::map<std::string, Value, std::less<>> to_map(std::span<const std::string_view> keys) const {
        std::map<std::string, Value, std::less<>> m;
        for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i)
            if (values[i]) m.emplace(std::string(keys[i]), values[i]->to_value());
        return m;
    }
};

/// How a get_multi_view ended (its values went to the per-hit callback).
struct FOLSOM_EXPORT MultiGetViewResult {
    std::size_t hits = 0;                 ///< keys found (each reported once)
    std::vector<std::error_code> errors;  ///< empty, or errors[i]: why keys[i] is unanswered

    /// True when every key got an answer (a hit or a miss).
    bool complete() const noexcept { return errors.empty(); }
};

/// One item of a set_multi: the key, its value and its flags. The views need to live only
/// until set_multi returns (the bytes are copied into the request).
struct FOLSOM_EXPORT KeyValue {
    std::string_view key;     ///< the item's key
    std::string_view value;   ///< its value
    std::uint32_t flags = 0;  ///< its 32-bit client flags
};

/// One key's outcome in a multi-key write (set_multi, delete_multi, touch_multi).
struct FOLSOM_EXPORT WriteResult {
    std::error_code error;       ///< why the write failed (then ignore status)
    Status status = Status::ok;  ///< stored, not_stored, deleted, touched, not_found, ...
    /// True when the write did what it asked: stored, deleted or touched.
    bool succeeded() const noexcept {
        return !error &&
               (status == Status::stored || status == Status::deleted || status == Status::touched);
    }
    /// Same error and status.
    friend bool operator==(const WriteResult&, const WriteResult&) = default;
};

/// How a multi-key write ended: one result per key, in the caller's order.
struct FOLSOM_EXPORT MultiWriteResult {
    std::vector<WriteResult> results;  ///< results[i]: the outcome for keys[i]

    /// Keys whose write failed with an error (not an outcome such as not_found).
    std::size_t errors() const noexcept {
        std::size_t n = 0;
        for (const auto& r : results)
            n += r.error ? 1 : 0;
        return n;
    }
    /// True when no key failed with an error.
    bool complete() const noexcept { return errors() == 0; }

    /// The results as a map from key to result (copies the keys), for the keys of
    /// delete_multi / touch_multi. With a key given twice, the later result wins.
    std::map<std::string, WriteResult, std::less<>> to_map(
        std::span<const std::string_view> keys) const {
        std::map<std::string, WriteResult, std::less<>> m;
        for (std::size_t i = 0; i < keys.size() && i < results.size(); ++i)
            m.insert_or_assign(std::string(keys[i]), results[i]);
        return m;
    }
    /// As above, for the items of set_multi.
    std::map<std::string, WriteResult, std::less<>> to_map(std::span<const KeyValue> items) const;
};

inline std::map<std::string, WriteResult, std::less<>> MultiWriteResult::to_map(
    std::span<const KeyValue> items) const {
    std::map<std::string, WriteResult, std::less<>> m;
    for (std::size_t i = 0; i < items.size() && i < results.size(); ++i)
        m.insert_or_assign(std::string(items[i].key), results[i]);
    return m;
}

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
