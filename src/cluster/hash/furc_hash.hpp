// furc_hash: mcrouter's consistent hash, "Ch3" in its configuration (Ch3HashFunc, the default
// hash of every mcrouter pool and HashRoute). A key goes to server furc_hash(key, n) of a
// pool of n, by a walk down a binary decision tree whose turns are bits of a MurmurHash64A
// stream seeded by the key.
//
// Consistent in n: growing a pool from n to n + k servers moves a key only onto one of the k
// new servers (and shrinking it by the last servers moves only their keys). Removing a server
// from the middle renumbers those after it and moves their keys.
//
// Bit for bit mcrouter's (mcrouter/lib/fbi/hash.c), so a service moving from mcrouter keeps
// its cache. Words are read little-endian whatever the host, as mcrouter's x86 hosts read them.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

/// The largest pool furc_hash places keys in: 2^23 servers.
inline constexpr std::uint32_t furc_max_servers = 1u << 23;

/// The index, in [0, n), of the server that owns `key` in a pool of `n` servers; 0 when n is
/// 0 or 1. A larger n than furc_max_servers is taken as furc_max_servers (mcrouter refuses
/// such a pool). Never allocates (~2 KiB of stack).
std::uint32_t furc_hash(std::string_view key, std::uint32_t n) noexcept;

}  // namespace folsom::cluster
