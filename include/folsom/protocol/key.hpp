// Key validation for the text and meta protocols (and the binary protocol, which follows the
// same rules unless Options::raw_binary_protocol_keys asks for validate_raw_key).
//
// A key is refused before anything is encoded when it is empty, longer than 250 bytes, or
// holds a byte that would end or split the command: any byte <= 0x20 (space, \r, \n, \0, other
// control characters) or 0x7f (DEL). So no key can inject a second command.
//
// Binary keys (Options::binary_keys, meta protocol only) are any bytes, NUL, space, \r, \n and
// 0x80..0xff included: they go on the wire in base64, which holds none of the refused bytes.
// Their limit is in raw bytes, 1..max_binary_key_length (186), so that the encoded form fits
// memcached's 250.
#pragma once

#include "folsom/error.hpp"
#include "folsom/protocol/limits.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>

namespace folsom::protocol {

/// Returns {} when `key` may be sent as a text/meta protocol key, errc::invalid_key otherwise.
inline std::error_code validate_key(std::string_view key) noexcept {
    if (key.empty() || key.size() > max_key_length) return errc::invalid_key;
    const char* p = key.data();
    const std::size_t n = key.size();
    if (n < 8) {
        for (char c : key) {
            const auto u = static_cast<unsigned char>(c);
            if (u <= 0x20 || u == 0x7f) return errc::invalid_key;
        }
        return {};
    }
    // Eight bytes at a time (every key is checked on every request, so this is on the hot
    // path): a word holds a refused byte when it has a byte below 0x21 or a byte equal to
    // 0x7f. Both tests are exact: with no such byte no subtraction borrows across bytes.
    constexpr std::uint64_t ones = 0x0101010101010101u;
    constexpr std::uint64_t highs = 0x8080808080808080u;
    const auto refused = [](std::uint64_t w) noexcept {
        const std::uint64_t del = w ^ (ones * 0x7f);
        return ((((w - ones * 0x21) & ~w) | ((del - ones) & ~del)) & highs) != 0;
    };
    std::uint64_t w;
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
        std::memcpy(&w, p + i, 8);
        if (refused(w)) return errc::invalid_key;
    }
    std::memcpy(&w, p + n - 8, 8);  // the last (overlapping) eight bytes
    if (refused(w)) return errc::invalid_key;
    return {};
}

/// Returns {} when `key` may be sent as a binary (base64) meta key: 1..186 bytes of any value;
/// errc::invalid_key otherwise.
inline std::error_code validate_binary_key(std::string_view key) noexcept {
    if (key.empty() || key.size() > max_binary_key_length) return errc::invalid_key;
    return {};
}

/// validate_binary_key() when `binary` (Options::binary_keys), validate_key() otherwise.
inline std::error_code validate_key(std::string_view key, bool binary) noexcept {
    return binary ? validate_binary_key(key) : validate_key(key);
}

/// Returns {} when `key` may be sent as a binary-protocol key of any bytes
/// (Options::raw_binary_protocol_keys): 1..250 of them; errc::invalid_key otherwise.
inline std::error_code validate_raw_key(std::string_view key) noexcept {
    if (key.empty() || key.size() > max_key_length) return errc::invalid_key;
    return {};
}

/// Returns {} when `group` may follow "stats ": one token or a few, one space apart
/// ("items", "cachedump 1 0"), each following the key rules, so that it cannot carry a second
/// command; errc::invalid_argument otherwise. The empty group is plain "stats".
inline std::error_code validate_stats_group(std::string_view group) noexcept {
    if (group.empty()) return {};
    for (;;) {
        const std::size_t space = group.find(' ');
        if (validate_key(group.substr(0, space))) return errc::invalid_argument;
        if (space == std::string_view::npos) return {};
        group.remove_prefix(space + 1);
    }
}

}  // namespace folsom::protocol
