// Key validation for the text and meta protocols.
//
// A key is refused before anything is encoded when it is empty, longer than 250 bytes, or
// holds a byte that would end or split the command: any byte <= 0x20 (space, \r, \n, \0, other
// control characters) or 0x7f (DEL). So no key can inject a second command.
#pragma once

#include <string_view>
#include <system_error>

#include "folsom/error.hpp"
#include "folsom/protocol/limits.hpp"

namespace folsom::protocol {

/// Returns {} when `key` may be sent as a text/meta protocol key, errc::invalid_key otherwise.
inline std::error_code validate_key(std::string_view key) noexcept {
    if (key.empty() || key.size() > max_key_length) return errc::invalid_key;
    for (char c : key) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return errc::invalid_key;
    }
    return {};
}

}  // namespace folsom::protocol
