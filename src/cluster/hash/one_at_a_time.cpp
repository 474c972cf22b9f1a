#include "cluster/hash/one_at_a_time.hpp"

namespace folsom::cluster {

std::uint32_t one_at_a_time(std::string_view data) noexcept {
    std::uint32_t value = 0;
    for (const char c : data) {
        value += static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<signed char>(c)));
        value += value << 10;
        value ^= value >> 6;
    }
    value += value << 3;
    value ^= value >> 11;
    value += value << 15;
    return value;
}

}  // namespace folsom::cluster
