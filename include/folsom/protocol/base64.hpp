// RFC 4648 base64 (standard alphabet, '=' padding), for meta protocol binary keys.
//
// memcached's meta commands accept a key in base64 when the 'b' flag is given, and return keys
// of such items in base64. The server only accepts padded input, so the encoder always pads
// and the decoder insists on padding (and on canonical, zero pad bits), so one key has exactly
// one wire form.
//
// Both directions write into a buffer the caller provides: nothing here allocates.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <string_view>

namespace folsom::protocol {

/// Bytes base64_encode writes for `n` input bytes.
constexpr std::size_t base64_encoded_size(std::size_t n) noexcept {
    return (n + 2) / 3 * 4;
}

/// Upper bound of the bytes base64_decode writes for `n` input characters.
constexpr std::size_t base64_max_decoded_size(std::size_t n) noexcept {
    return n / 4 * 3;
}

/// Writes the padded encoding of `in` to `out` (room for base64_encoded_size(in.size()) bytes).
/// Returns the number of bytes written.
FOLSOM_EXPORT std::size_t base64_encode(std::string_view in, char* out) noexcept;

/// Decodes padded base64 `in` into `out` (room for base64_max_decoded_size(in.size()) bytes).
/// Returns false, with `out_size` unspecified, when `in` is not canonical padded base64: a
/// length that is not a multiple of 4, a character outside the alphabet, '=' anywhere but at
/// the end, or non-zero bits under the padding.
FOLSOM_EXPORT bool base64_decode(std::string_view in, char* out, std::size_t& out_size) noexcept;

}  // namespace folsom::protocol
