// MurmurHash3, x86 32-bit variant: the hash Spotify Folsom's ketama ring is made of (Guava's
// Hashing.murmur3_32(), seed 0, over bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t murmur3_32(std::string_view data, std::uint32_t seed = 0) noexcept;

}  // namespace folsom::cluster
