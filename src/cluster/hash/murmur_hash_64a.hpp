// MurmurHash64A (Austin Appleby's 64-bit MurmurHash2): the bit source of mcrouter's furc_hash
// (furc_hash.hpp), which seeds it with 4193360111 and extends the stream by rehashing each
// 64-bit result. Words are read little-endian whatever the host, as on mcrouter's x86 hosts.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint64_t murmur_hash_64a(std::string_view data, std::uint64_t seed) noexcept;

/// murmur_hash_64a of the 8 little-endian bytes of `word`, without going through bytes: how
/// furc_hash draws the next 64 bits of its stream.
std::uint64_t murmur_hash_64a_word(std::uint64_t word, std::uint64_t seed) noexcept;

}  // namespace folsom::cluster
