// The libmemcached side of the end-to-end benchmark (Debian's libmemcached 1.1.4, ASCII or
// binary protocol — MEMCACHED_BEHAVIOR_BINARY_PROTOCOL —, TCP_NODELAY like folsom). Blocking
// calls on the calling thread.
//
// Pipelined forms used, since libmemcached has no per-request asynchronous API:
//   * gets: memcached_mget of a batch of keys (one "get k1 k2 ..." command), then
//     memcached_fetch_result into one reused memcached_result_st until END — with and without
//     MEMCACHED_BEHAVIOR_NO_BLOCK;
//   * sets: NO_BLOCK + BUFFER_REQUESTS (replies read later, in bulk, once per batch of 1000),
//     and the same + NOREPLY (no replies at all: not the same work, shown for reference).
#pragma once

#include "e2e/keyset.hpp"

#include <libmemcached/memcached.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace folsom::bench {

class LibmemcachedCases {
  public:
    /// Handles on 127.0.0.1:port, over the binary protocol when `binary`, else ASCII.
    LibmemcachedCases(std::uint16_t port, const KeySet& keys, bool binary = false);
    /// Handles on the Unix socket at `socket_path` (memcached_server_add_unix_socket), ASCII.
    LibmemcachedCases(const std::string& socket_path, const KeySet& keys);
    ~LibmemcachedCases();
    LibmemcachedCases(const LibmemcachedCases&) = delete;
    LibmemcachedCases& operator=(const LibmemcachedCases&) = delete;

    /// memcached_get in a loop (each value malloc'd by libmemcached and freed). Returns gets.
    std::uint64_t get(std::uint64_t ops);
    /// `batches` rounds of memcached_mget(keys_per_batch) + memcached_fetch_result until END.
    /// Returns the batches done.
    std::uint64_t mget(std::uint64_t batches, std::size_t keys_per_batch, bool no_block);
    /// memcached_set in a loop, each waiting for STORED.
    std::uint64_t set(std::uint64_t ops);
    /// memcached_set with NO_BLOCK + BUFFER_REQUESTS (optionally + NOREPLY) in batches of
    /// `window`, each ended by a flush and a get that reads every outstanding reply (one extra
    /// round trip per batch, counted in the time). Returns the sets done.
    std::uint64_t set_buffered(std::uint64_t ops, std::size_t window, bool noreply);

  private:
    LibmemcachedCases(std::uint16_t port, const KeySet& keys, bool binary, std::string socket_path);
    memcached_st* handle(bool no_block, bool buffered, bool noreply);

    std::uint16_t port_;
    std::string socket_path_;  // a Unix socket server instead of 127.0.0.1:port_
    bool binary_;
    const KeySet& keys_;
    memcached_st* plain_;
    memcached_st* no_block_;
    memcached_st* buffered_;
    memcached_st* noreply_;
    memcached_result_st result_{};
    memcached_result_st nb_result_{};
    std::uint64_t next_ = 0;
};

}  // namespace folsom::bench
