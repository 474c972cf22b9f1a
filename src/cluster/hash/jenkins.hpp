// Bob Jenkins' lookup3 hashlittle() as libmemcached computes it (hashkit_jenkins,
// MEMCACHED_HASH_JENKINS): initial value 0xdeadbeef + length + 13, bytes read little-endian.
// (libmemcached reads aligned words when it can; on a little-endian host every path gives
// this result.)
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t jenkins_lookup3(std::string_view data) noexcept;

}  // namespace folsom::cluster
