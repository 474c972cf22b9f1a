// MD5 as ketama uses it: a 16-byte digest cut into four little-endian 32-bit words.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace folsom::cluster {

using Md5Digest = std::array<unsigned char, 16>;

/// MD5 of `data`. Never allocates (OpenSSL's low-level MD5 on a stack context).
Md5Digest md5(std::string_view data) noexcept;

/// Word `i` (0..3) of a digest, read little-endian: bytes 4i..4i+3, the lowest first.
/// Word 0 is libmemcached's (and spymemcached's KETAMA_HASH) hash of a key.
constexpr std::uint32_t md5_word(const Md5Digest& d, unsigned i) noexcept {
    return static_cast<std::uint32_t>(d[4 * i]) | static_cast<std::uint32_t>(d[4 * i + 1]) << 8 |
           static_cast<std::uint32_t>(d[4 * i + 2]) << 16 |
           static_cast<std::uint32_t>(d[4 * i + 3]) << 24;
}

}  // namespace folsom::cluster
