// CRC-32 (IEEE 802.3, zlib's crc32()), and the 15-bit slice of it that libmemcached's "crc"
// hash, Cache::Memcached and pecl-memcache's standard strategy take: (crc >> 16) & 0x7fff.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

/// zlib's crc32 of `data` (gomemcache's crc32.ChecksumIEEE, Ruby's Zlib.crc32, PHP's crc32).
std::uint32_t crc32_ieee(std::string_view data) noexcept;
/// crc32_ieee() continued over more data: crc32_ieee(a + b) == crc32_ieee_add(crc32_ieee(a), b).
std::uint32_t crc32_ieee_add(std::uint32_t crc, std::string_view data) noexcept;
/// Bits 16..30 of crc32_ieee(): libmemcached's hashkit_crc32, Cache::Memcached's _hashfunc.
inline std::uint32_t crc32_high15(std::string_view data) noexcept {
    return (crc32_ieee(data) >> 16) & 0x7fffu;
}

}  // namespace folsom::cluster
