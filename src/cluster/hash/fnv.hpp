// The FNV hashes as libmemcached computes them (hashkit_fnv1_32, fnv1a_32, fnv1_64, fnv1a_64;
// pecl-memcache's "fnv" is fnv1a_32 too). Bytes enter sign-extended, as x86-64's `char` does.
// libmemcached's fnv1a_64 is not FNV-1a 64: it runs in 32 bits, from the low halves of the
// 64-bit offset basis and prime; fnv1_64 runs in 64 bits and keeps the low 32.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t fnv1_32(std::string_view data) noexcept;
std::uint32_t fnv1a_32(std::string_view data) noexcept;
std::uint32_t fnv1_64(std::string_view data) noexcept;
std::uint32_t fnv1a_64(std::string_view data) noexcept;

}  // namespace folsom::cluster
