// Bob Jenkins' one-at-a-time hash as libmemcached computes it (hashkit_one_at_a_time, its
// default key hash, MEMCACHED_HASH_DEFAULT). Each byte enters as libmemcached's `char` does on
// x86-64: sign-extended, so bytes from 0x80 up add 0xffffff80 and more.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t one_at_a_time(std::string_view data) noexcept;

}  // namespace folsom::cluster
