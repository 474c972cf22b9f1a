// The floor for a sequential get: a blocking loopback socket that sends "get <key>\r\n" and
// recv()s until the reply ends with "END\r\n". No parsing beyond that, no event loop.
#pragma once

#include "e2e/keyset.hpp"

#include <cstdint>

namespace folsom::bench {

class RawSocketGet {
  public:
    RawSocketGet(std::uint16_t port, const KeySet& keys);
    ~RawSocketGet();
    RawSocketGet(const RawSocketGet&) = delete;
    RawSocketGet& operator=(const RawSocketGet&) = delete;

    /// Returns the gets done; throws when a reply is not the expected hit.
    std::uint64_t get(std::uint64_t ops);

  private:
    const KeySet& keys_;
    int fd_ = -1;
    std::uint64_t next_ = 0;
};

}  // namespace folsom::bench
