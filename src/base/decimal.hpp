// A whole field of text as an unsigned decimal number, the way the wire formats (meta reply
// flags, ElastiCache's config reply) and the server-list syntax write one: digits only (no
// sign, no blank, no "0x"), nothing after them, not empty, and within the field's range.
// std::from_chars reads the digits and refuses an overflow; the empty field and trailing bytes
// ("11211x"), which it leaves to the caller, are refused here.
#pragma once

#include <charconv>
#include <concepts>
#include <limits>
#include <string_view>
#include <system_error>

namespace folsom::detail {

/// True, with `out` set, when all of `text` is a decimal number of at most `max`; otherwise
/// false, and `out` is left as it was.
template <std::unsigned_integral T>
bool parse_decimal(std::string_view text, T& out, T max = std::numeric_limits<T>::max()) noexcept {
    const char* const end = text.data() + text.size();
    T v = 0;
    const auto [stop, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc{} || stop != end || v > max) return false;
    out = v;
    return true;
}

}  // namespace folsom::detail
