// The floor for a sequential get and for a multi-get: a blocking loopback (or Unix domain)
// socket that sends
// "get <key> [<key> ...]\r\n" and recv()s until the reply ends with "END\r\n". No parsing
// beyond checking the reply's length, no event loop: what one round trip costs the client
// before any client library does anything. The socket itself is tools/bench/raw_socket.hpp,
// which `folsom bench --floor` runs too.
#pragma once

#include "bench/raw_socket.hpp"
#include "e2e/keyset.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folsom::bench {

class RawSocketGet {
  public:
    RawSocketGet(std::uint16_t port, const KeySet& keys);
    /// The same over the Unix domain socket at `socket_path`.
    RawSocketGet(const std::string& socket_path, const KeySet& keys);
    RawSocketGet(const RawSocketGet&) = delete;
    RawSocketGet& operator=(const RawSocketGet&) = delete;

    /// Returns the gets done; throws when a reply is not the expected hit.
    std::uint64_t get(std::uint64_t ops);
    /// `ops` multi-gets of `keys_per_op` consecutive keys, one line each (every key a hit);
    /// returns the multi-gets done.
    std::uint64_t get_multi(std::uint64_t ops, std::size_t keys_per_op);

  private:
    RawSocketGet(RawSocket socket, const KeySet& keys);
    /// Bytes of the hit "VALUE <key> 0 <n>\r\n<n bytes>\r\n" for `key`.
    std::size_t hit_bytes(std::string_view key) const noexcept;

    const KeySet& keys_;
    std::size_t hit_bytes_but_key_;
    RawSocket socket_;
    std::uint64_t next_ = 0;
    std::string request_;  // reused, so no case allocates while timed
};

}  // namespace folsom::bench
