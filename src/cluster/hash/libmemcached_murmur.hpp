// MurmurHash2 as libmemcached computes it (hashkit_murmur, MEMCACHED_HASH_MURMUR): seed
// 0xdeadbeef * length, words read little-endian (the tail too, as one partial word).
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t libmemcached_murmur(std::string_view data) noexcept;

}  // namespace folsom::cluster
