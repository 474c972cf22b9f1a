// The folsom::BlockingClient side of the end-to-end benchmark: the synchronous facade a
// libmemcached user moves to, with either driver (its own I/O thread, or the calling thread
// driving the I/O itself), measured on the same sequential get loop as libmemcached's.
#pragma once

#include "folsom/blocking_client.hpp"

#include "e2e/keyset.hpp"

#include <cstdint>

namespace folsom::bench {

class BlockingCases {
  public:
    /// A BlockingClient on 127.0.0.1:port (ASCII) run by `driver`.
    BlockingCases(std::uint16_t port, const KeySet& keys, BlockingClient::Driver driver);

    /// BlockingClient::get in a loop, keys in rotation as LibmemcachedCases::get. Returns gets.
    std::uint64_t get(std::uint64_t ops);

  private:
    const KeySet& keys_;
    BlockingClient client_;
    std::uint64_t next_ = 0;
};

}  // namespace folsom::bench
