#include "e2e/raw_socket_get.hpp"

#include <string>
#include <utility>

namespace folsom::bench {

RawSocketGet::RawSocketGet(RawSocket socket, const KeySet& keys)
    : keys_(keys),
      // "VALUE " <key> " 0 " <size> "\r\n" <data> "\r\n", counted once, outside the timed loops.
      hit_bytes_but_key_(6 + 3 + std::to_string(keys.value.size()).size() + 2 + keys.value.size() +
                         2),
      socket_(std::move(socket)) {}

RawSocketGet::RawSocketGet(const std::string& socket_path, const KeySet& keys)
    : RawSocketGet(RawSocket::unix_socket(socket_path), keys) {}

RawSocketGet::RawSocketGet(std::uint16_t port, const KeySet& keys)
    : RawSocketGet(RawSocket::tcp("127.0.0.1", port), keys) {}

std::size_t RawSocketGet::hit_bytes(std::string_view key) const noexcept {
    return hit_bytes_but_key_ + key.size();
}

std::uint64_t RawSocketGet::get(std::uint64_t ops) {
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::string& key = keys_.storage[(next_ + i) % keys_.size()];
        request_.assign("get ");
        request_.append(key);
        request_.append("\r\n");
        socket_.round_trip(request_, hit_bytes(key) + 5);
    }
    next_ += ops;
    return ops;
}

std::uint64_t RawSocketGet::get_multi(std::uint64_t ops, std::size_t keys_per_op) {
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::size_t start = keys_.run_start(next_ + i, keys_per_op);
        request_.assign("get");
        std::size_t expect = 5;  // "END\r\n"
        for (std::size_t k = start; k < start + keys_per_op; ++k) {
            request_.push_back(' ');
            request_.append(keys_.storage[k]);
            expect += hit_bytes(keys_.storage[k]);
        }
        request_.append("\r\n");
        socket_.round_trip(request_, expect);
    }
    next_ += ops;
    return ops;
}

}  // namespace folsom::bench
