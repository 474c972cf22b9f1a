#include "e2e/blocking_cases.hpp"

#include <stdexcept>
#include <string>

namespace folsom::bench {

BlockingCases::BlockingCases(std::uint16_t port, const KeySet& keys, BlockingClient::Driver driver)
    : keys_(keys), client_(Options{.servers = {"127.0.0.1:" + std::to_string(port)}}, driver) {}

std::uint64_t BlockingCases::get(std::uint64_t ops) {
    const std::size_t n = keys_.size();
    for (std::uint64_t i = 0; i < ops; ++i) {
        const auto v = client_.get(keys_.views[(next_ + i) % n]);
        if (!v || v->data.size() != keys_.value.size())
            throw std::runtime_error("BlockingClient::get: a miss or a wrong value");
    }
    next_ += ops;
    return ops;
}

}  // namespace folsom::bench
