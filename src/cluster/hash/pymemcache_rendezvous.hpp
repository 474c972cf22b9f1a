// pymemcache's HashClient placement (pymemcache.client.rendezvous.RendezvousHash, its default
// hasher): highest random weight. Each key scores every server with
// murmur3_32("<node>-<key>") (pymemcache's own murmur3, seed 0, which is MurmurHash3 x86_32
// over the low byte of each character) and goes to the highest score; a tie goes to the
// greater node name. The node name is what HashClient keys its clients by: "host:port" for a
// (host, port) server (an IPv6 host without brackets, as pymemcache strips them), or a Unix
// socket's path.
//
// pymemcache hashes the key as the str the application passed, one character a byte. folsom
// sees the key's UTF-8 bytes (what pymemcache sends when allow_unicode_keys is on), so a
// non-ASCII key is decoded back to characters before hashing. A key passed to pymemcache as
// bytes is hashed as its repr ("<node>-b'key'") there: pymemcache_rendezvous_pick_bytes()
// hashes that repr, for a caller that knows its key was bytes.
#pragma once

#include "folsom/server_address.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::cluster {

/// The name pymemcache's HashClient gives `server` on its rendezvous hash.
std::string pymemcache_node_name(const ServerAddress& server);

/// Appends, per server in order, the words pymemcache_rendezvous_pick() reads
/// (pymemcache_rendezvous_words of them): the murmur3 state after "<node>-", and the node
/// name's rank among all names, for ties.
inline constexpr std::size_t pymemcache_rendezvous_words = 4;
void pymemcache_rendezvous_prepare(std::span<const ServerAddress> servers,
                                   std::vector<std::uint32_t>& words);

/// The index of the server that owns `key`, given the words prepared for the servers; 0 for
/// no servers. Never allocates.
std::size_t pymemcache_rendezvous_pick(std::span<const std::uint32_t> words,
                                       std::string_view key) noexcept;

/// As pymemcache_rendezvous_pick(), for `key` given to pymemcache as bytes: the score hashes
/// Python's repr of the bytes ("b'k\\xff'"), as pymemcache's "%s-%s" % (node, key) makes it.
std::size_t pymemcache_rendezvous_pick_bytes(std::span<const std::uint32_t> words,
                                             std::string_view key) noexcept;

/// The owner of `key` (a bytes key with `as_bytes`) among the servers `usable` accepts, as
/// pymemcache's HashClient picks it once it has removed the others from its hasher (a dead
/// server): the highest score of those left. `none` when `usable` accepts no server.
std::size_t pymemcache_rendezvous_pick_among(std::span<const std::uint32_t> words,
                                             std::string_view key, bool as_bytes,
                                             const std::function<bool(std::size_t)>& usable,
                                             std::size_t none) noexcept;

}  // namespace folsom::cluster
